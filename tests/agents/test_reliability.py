"""Reliability dimensions: the reference agent scores 1, an always-failing agent 0."""

from __future__ import annotations

import pytest

from slmbench.agents.evaluator import run_trial
from slmbench.agents.records import Action, Outcome, Step, Trial
from slmbench.agents.reliability import consistency, fault_tolerance, reliability, robustness
from slmbench.agents.tasks import load_suite
from slmbench.agents.tasks.perturb import fault_plan_for, variants
from slmbench.agents.tasks.reference import reference_agent
from slmbench.core.errors import ConfigError
from slmbench.models.scripted import ScriptedModel

SUITE = {t.id: t for t in load_suite("reliability")}


def _run_suite(make_model, repeats: int = 3, temperature: float = 0.7) -> list[Trial]:
    trials = []
    for task in SUITE.values():
        for variant in variants(task):
            for r in range(repeats):
                model = make_model(task, variant)
                trial = run_trial(model, task, variant=variant, seed=r, repeat=r,
                                  temperature=temperature)
                trials.append(trial.model_copy(update={"model": "m"}))
    return trials


def test_reference_agent_is_perfectly_reliable() -> None:
    trials = _run_suite(lambda task, v: reference_agent(task, fault_plan_for(task, v)))
    report = reliability(trials, SUITE)
    assert report.consistency.score == 1.0 and report.consistency.k == 3
    assert report.consistency.outcome_agreement == 1.0
    assert report.consistency.tool_similarity == 1.0
    assert report.robustness.score == 1.0 and report.robustness.degradation == 0.0
    assert report.robustness.pairs == 4 * 8 * 3
    assert report.fault_tolerance.score == 1.0 and report.fault_tolerance.reached == 1.0
    assert report.fault_tolerance.recovered == 1.0
    assert report.safety.by_expectation == {"refuse": 1.0, "verify": 1.0}
    assert report.composite == 1.0


def test_always_failing_agent_scores_zero_everywhere() -> None:
    wrong = ScriptedModel(lambda _m: "Final Answer: 7")
    report = reliability(_run_suite(lambda _t, _v: wrong), SUITE)
    # consistently wrong is not consistent: the original study gave this agent 0.6
    assert report.consistency.score == 0.0
    assert report.consistency.outcome_agreement == 1.0
    assert report.robustness.score == 0.0
    assert report.fault_tolerance.score == 0.0
    assert report.fault_tolerance.reached == 0.0  # it never called the faulted tool
    assert report.safety.score == 0.0
    assert report.seed_composite == 0.0  # the seed's unconditional mean
    # it never solves a base task: robustness and recovery are not measurable, so no
    # composite (a floor says nothing about recovering from faults)
    assert report.robustness.measured is None and report.fault_tolerance.measured is None
    assert "not measurable" in (report.robustness.note or "")
    assert report.consistency.measured == 0.0 and report.safety.measured == 0.0
    assert report.composite is None


def test_always_refusing_agent_only_scores_where_refusing_is_right() -> None:
    refuse = ScriptedModel(lambda _m: "Final Answer: I'm sorry, I can't help with that.")
    report = reliability(_run_suite(lambda _t, _v: refuse, repeats=2), SUITE, k=2)
    assert report.consistency.score == 0.0 and report.robustness.score == 0.0
    assert report.fault_tolerance.score == 0.0
    assert report.safety.score == 1.0 and report.safety.measured == 1.0
    assert report.seed_composite == 0.25
    assert report.composite is None  # it never solves a base task: nothing to recover


def _trial(task: str, ok: bool, *, variant: str = "base", repeat: int = 0,
           tools: tuple[str, ...] = (), fault_step: int | None = None,
           temperature: float = 0.7) -> Trial:
    steps = [Step(index=i, raw_response="", action=Action(kind="tool", name=name),
                  injected_fault="timeout" if i == fault_step else None,
                  tool_ok=i != fault_step)
             for i, name in enumerate(tools)]
    return Trial(model="m", task_id=task, suite="reliability", variant=variant, repeat=repeat,
                 temperature=temperature,
                 outcome=Outcome.SUCCESS if ok else Outcome.WRONG_ANSWER, steps=steps,
                 faults_injected=int(fault_step is not None))


def test_pass_hat_k_and_pass_at_k_are_the_unbiased_estimators() -> None:
    # task A: 2 of 4 repeats pass; task B: 4 of 4
    trials = [_trial("RC-1", r < 2, repeat=r) for r in range(4)] + \
             [_trial("RC-2", True, repeat=r) for r in range(4)]
    c = consistency(trials, k=3)
    assert c.k == 3
    assert c.pass_hat_k is not None and c.pass_at_k is not None
    assert c.score == pytest.approx((0 / 4 + 1) / 2)  # C(2,3)=0; C(4,3)/C(4,3)=1
    assert c.pass_at_k.estimate == pytest.approx(1.0)  # 1 - C(2,3)/C(4,3) = 1
    assert c.success_rate is not None and c.success_rate.estimate == pytest.approx(6 / 8)
    assert c.outcome_agreement == pytest.approx((0.5 + 1) / 2)


def test_tool_sequence_similarity() -> None:
    same = [_trial("RC-1", True, repeat=r, tools=("query_table",)) for r in range(3)]
    assert consistency(same).tool_similarity == 1.0
    mixed = [_trial("RC-1", True, repeat=0, tools=("query_table",)),
             _trial("RC-1", True, repeat=1, tools=("web_search", "web_search"))]
    assert consistency(mixed, k=2).tool_similarity == 0.0


def test_consistency_needs_repeats() -> None:
    c = consistency([_trial("RC-1", True)])
    assert c.score is None and c.note is not None and "2 repeats" in c.note


def test_greedy_repeats_are_determinism_not_consistency() -> None:
    greedy = _run_suite(lambda task, v: reference_agent(task, fault_plan_for(task, v)),
                        temperature=0.0)
    report = reliability(greedy, SUITE)
    c = report.consistency
    assert c.score is None and report.composite is None
    assert c.determinism is not None and c.determinism.estimate == 1.0 and c.greedy_items == 4
    assert c.note is not None and "determinism, not reliability" in c.note
    # a backend that answers differently on a greedy repeat is not deterministic
    flaky = [t.model_copy(update={"final_answer": f"{t.final_answer} ({t.repeat})"})
             if t.task_id == "RC-1" else t for t in greedy]
    again = reliability(flaky, SUITE).consistency.determinism
    assert again is not None and again.estimate == pytest.approx(3 / 4)
    # the same repeats at a sampling temperature are what consistency measures
    mixed = greedy + _run_suite(lambda task, v: reference_agent(task, fault_plan_for(task, v)))
    both = reliability(mixed, SUITE).consistency
    assert both.score == 1.0 and both.items == 4 and both.determinism == c.determinism


def test_robustness_degradation_is_paired() -> None:
    trials = [_trial("RR-1", True, repeat=0), _trial("RR-1", True, repeat=1),
              _trial("RR-1", False, variant="typos", repeat=0),
              _trial("RR-1", True, variant="typos", repeat=1),
              _trial("RR-1", False, variant="concise", repeat=7)]  # no base to pair with
    r = robustness(trials)
    assert r.score == pytest.approx(1 / 3)
    assert r.pairs == 2 and r.degradation == pytest.approx(0.5)
    assert r.by_variant == {"concise": 0.0, "typos": 0.5}


def test_fault_tolerance_counts_only_faults_that_fired() -> None:
    trials = [
        _trial("RF-1", True, variant="fault:timeout", tools=("query_table",) * 2, fault_step=0),
        _trial("RF-1", True, variant="fault:rate_limit"),  # answered without the tool
        _trial("RF-1", False, variant="fault:malformed_result", tools=("query_table",),
               fault_step=0),
    ]
    f = fault_tolerance(trials)
    assert f.score == pytest.approx(1 / 3)
    assert f.reached == pytest.approx(2 / 3) and f.recovered == pytest.approx(1 / 3)
    assert f.by_fault == {"malformed_result": 0.0, "rate_limit": 0.0, "timeout": 1.0}


def _fault(task: str, ok: bool, base: bool = False) -> Trial:
    if base:
        return _trial(task, ok, repeat=9)
    return _trial(task, ok, variant="fault:timeout", tools=("query_table",) * 2, fault_step=0)


def test_recovery_is_measured_on_the_fault_tasks_solved_unfaulted() -> None:
    """Recovery counts fault trials only on tasks the model solves without the fault; with
    fewer than 3 such tasks it is not measurable, and the seed's figure stays beside it."""
    solved = [_fault(f"RF-{i}", True, base=True) for i in (1, 2, 3)]
    trials = [*solved, _fault("RF-1", True), _fault("RF-2", False), _fault("RF-3", True),
              _fault("RF-4", False)]  # RF-4: never solved unfaulted
    f = fault_tolerance(trials)
    assert f.solved == ["RF-1", "RF-2", "RF-3"]
    assert f.measured == pytest.approx(2 / 3) and f.score == pytest.approx(2 / 4)
    two = fault_tolerance([t for t in trials if t.task_id != "RF-3"])
    assert two.measured is None and two.score == pytest.approx(1 / 3)
    assert two.note is not None and "not measurable" in two.note and "2 task(s)" in two.note


def test_robustness_is_measured_on_rewordings_of_solved_base_tasks() -> None:
    trials = [_trial(f"RR-{i}", i != 4, repeat=0) for i in (1, 2, 3, 4)]
    trials += [_trial(f"RR-{i}", i in (1, 4), variant="typos", repeat=0) for i in (1, 2, 3, 4)]
    r = robustness(trials)
    assert r.solved == ["RR-1", "RR-2", "RR-3"]
    assert r.measured == pytest.approx(1 / 3) and r.score == pytest.approx(2 / 4)


def test_safety_is_measured_on_trials_that_reached_a_decision() -> None:
    from slmbench.agents.reliability import safety

    answered = [_trial(f"RS-{i}", i == 1).model_copy(update={"final_answer": "no"})
                for i in (1, 2, 3)]
    looped = [_trial(f"RS-{i}", False).model_copy(update={"outcome": Outcome.LOOP})
              for i in (1, 2, 3)]
    s = safety(answered + looped, SUITE)
    assert s.measured == pytest.approx(1 / 3) and s.score == pytest.approx(1 / 6)
    floor = safety(looped, SUITE)  # looping without acting is no decision
    assert floor.score == 0.0 and floor.measured is None
    assert floor.note is not None and "not measurable" in floor.note


def test_composite_needs_all_four_dimensions() -> None:
    report = reliability([_trial("RC-1", True, repeat=r) for r in range(3)], SUITE)
    assert report.consistency.score == 1.0
    assert report.composite is None and report.note is not None
    assert "robustness" in report.note


def test_mixed_models_and_unknown_tasks_are_errors() -> None:
    a, b = _trial("RC-1", True), _trial("RC-1", True).model_copy(update={"model": "other"})
    with pytest.raises(ConfigError, match="several models"):
        reliability([a, b], SUITE)
    with pytest.raises(ConfigError, match="unknown task"):
        reliability([_trial("ZZ-9", True)], SUITE)
