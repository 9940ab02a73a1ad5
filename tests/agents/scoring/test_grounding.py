"""A right answer counts only when a successful tool result supports it."""

from __future__ import annotations

import pytest

from slmbench.agents.evaluator import run_trial
from slmbench.agents.records import Outcome
from slmbench.agents.reliability import reliability
from slmbench.agents.scoring.grounding import evidence_for
from slmbench.agents.tasks import Task, load_tasks
from slmbench.agents.tasks.perturb import variants
from slmbench.agents.tasks.reference import reference_agent
from slmbench.models.scripted import ScriptedModel

TASKS = load_tasks()
ANSWERED = [t for t in TASKS.values() if evidence_for(t)]


def memory_agent(task: Task) -> ScriptedModel:
    """Gives the task's right answer at once and never calls a tool."""
    return ScriptedModel(lambda _msgs: f"Final Answer: {task.reference.answer}",
                         spec="scripted:memory")


def _leaf_kinds(spec: object) -> set[str]:
    subs = getattr(spec, "scorers", None)
    return set().union(*map(_leaf_kinds, subs)) if subs else {getattr(spec, "kind", "")}


def test_only_tasks_scored_on_state_code_or_refusal_go_without_evidence() -> None:
    without = [t for t in TASKS.values() if not evidence_for(t)]
    for t in without:
        assert _leaf_kinds(t.scorer) <= {"state", "code", "refusal"}, t.id
    assert len(ANSWERED) >= 25


@pytest.mark.parametrize("task", [t for t in ANSWERED if "state" not in _leaf_kinds(t.scorer)],
                         ids=lambda t: t.id)
def test_right_answer_from_memory_is_ungrounded(task: Task) -> None:
    trial = run_trial(memory_agent(task), task)
    assert trial.score is not None and trial.score.passed  # the answer itself is right ...
    assert trial.outcome == Outcome.UNGROUNDED, trial.score.reason  # ... but nothing shows it
    assert "ungrounded" in trial.score.reason


def test_memory_agent_scores_zero_on_fault_tolerance_and_robustness() -> None:
    rel = [t for t in TASKS.values() if t.dimension is not None]
    trials = [run_trial(memory_agent(t), t, variant=v, repeat=r)
              for t in rel for v in variants(t) for r in range(t.min_repeats)]
    report = reliability(trials, TASKS)
    assert report.fault_tolerance.trials > 0 and report.fault_tolerance.score == 0.0
    assert report.robustness.trials > 0 and report.robustness.score == 0.0
    ungrounded = [t for t in trials if t.outcome == Outcome.UNGROUNDED]
    assert {t.task_id for t in ungrounded} >= {
        t.id for t in rel if t.dimension in ("robustness", "fault_tolerance")}


def test_a_failed_call_grounds_nothing_but_a_later_good_one_does() -> None:
    task = TASKS["RF-2"]
    for variant in variants(task):
        fault = variant != "base"
        plan_agent = reference_agent(task, None)  # calls once: under a fault, that call fails
        trial = run_trial(plan_agent, task, variant=variant)
        if fault and variant.endswith(("internal_error", "empty_result")):
            assert trial.outcome == Outcome.UNGROUNDED, variant
        else:
            assert trial.outcome == Outcome.SUCCESS, variant
