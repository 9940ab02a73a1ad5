"""Stage-level reliability (issue #61): robustness, recovery and consistency at the deepest
stage a model reaches on 3 tasks, reported apart from the seed's dimensions."""

from __future__ import annotations

from pathlib import Path

import pytest

from slmbench.agents.analysis import analyze
from slmbench.agents.evaluator import run_trial
from slmbench.agents.funnel import StageReach, reach
from slmbench.agents.funnel_reliability import deepest_stage, reaches, stage_reliability
from slmbench.agents.records import Trial
from slmbench.agents.reliability import robustness
from slmbench.agents.store import read_trials
from slmbench.agents.summary import AnalysisSummary
from slmbench.agents.tasks import load_tasks
from slmbench.models.scripted import ScriptedModel

TASKS = load_tasks()
EXPORT = (Path(__file__).resolve().parents[2] / "docs" / "results" / "reference-study-v3"
          / "trials.jsonl.gz")
HALF = "llamacpp:qwen2.5-coder-0.5b"
SMOL = "llamacpp:smollm2-135m"
ALL_TOOLS = "llamacpp:qwen2.5-coder-0.5b?n_ctx=8192 (all tools)"


def _stages(**passed: bool | None) -> StageReach:
    stages = {"acts": True, "right_tool": True, "valid_call": True, "evidence": True,
              "answers": True, "correct": True, **passed}
    return StageReach(stages=stages, not_applicable={}, strict_acts=True)


def test_a_trial_reaches_a_stage_only_through_every_stage_before_it() -> None:
    broke = _stages(valid_call=False)  # its answer is right, its calls were not
    assert reaches(broke, "right_tool") and not reaches(broke, "valid_call")
    assert not reaches(broke, "correct")
    skipped = _stages(evidence=None, answers=False, correct=False)  # no evidence to look for
    assert reaches(skipped, "evidence") is False and reaches(skipped, "valid_call")
    assert not reaches(None, "acts")
    assert not reaches(_stages(acts=False), "acts")


def _trial(task: str, variant: str = "base", temperature: float = 0.7) -> Trial:
    made = run_trial(ScriptedModel(["Final Answer: 1"], spec="scripted:test"), TASKS["DA-1"])
    return made.model_copy(update={"task_id": task, "variant": variant,
                                   "temperature": temperature})


def test_the_deepest_stage_needs_three_tasks_and_ignores_perturbed_trials() -> None:
    depth = {"A": "evidence", "B": "evidence", "C": "right_tool", "D": "answers"}
    trials = [_trial(t) for t in depth] + [_trial("C", variant="reworded")]
    order = ["acts", "right_tool", "valid_call", "evidence", "answers", "correct"]

    def reached(t: Trial, stage: str) -> bool:  # the reworded trial of C would reach all
        deepest = "correct" if t.variant != "base" else depth[t.task_id]
        return order.index(deepest) >= order.index(stage)

    assert deepest_stage("robustness", trials, reached) == ("evidence", 3)
    # consistency reads only the repeats at a sampling temperature
    greedy = [t.model_copy(update={"temperature": 0.0}) for t in trials]
    assert deepest_stage("consistency", greedy, reached) == (None, 0)
    assert deepest_stage("robustness", trials[:2], reached) == (None, 2)


def test_success_stays_the_default_of_the_seeds_dimensions() -> None:
    trials = [_trial(t) for t in ("A", "B")] + [_trial("A", variant="reworded")]
    assert robustness(trials) == robustness(trials, lambda t: t.outcome.value == "success")


@pytest.fixture(scope="module")
def v3() -> AnalysisSummary:
    return analyze(read_trials(EXPORT, "the committed v3 export"))


def test_v3_the_half_b_robustness_is_measured_at_a_stage_where_success_is_not(
        v3: AnalysisSummary) -> None:
    found = {(r.model, r.dimension): r for r in v3.stage_reliability}
    half = found[(HALF, "robustness")]
    assert half.stage is not None and half.stage != "correct" and half.score is not None
    assert half.tasks >= 3 and half.reached_tasks >= 3
    seed = next(d for d in v3.dimensions if d.model == HALF)
    assert "robustness" in seed.not_measurable  # the seed's dimension stays as it was
    smol = found[(SMOL, "robustness")]
    assert smol.stage is None and smol.score is None and smol.note
    # the dimensions and the composite read none of it
    assert all(set(d.dimensions) <= {"consistency", "robustness", "fault_tolerance", "safety"}
               for d in v3.dimensions)


def test_v3_reaching_a_stage_is_what_the_funnel_judged(v3: AnalysisSummary) -> None:
    trials = [t for t in read_trials(EXPORT, "v3") if t.model == HALF]
    rows = stage_reliability(HALF, trials, TASKS)
    assert [r.dimension for r in rows] == ["consistency", "robustness", "fault_tolerance"]
    rr = [t for t in trials if t.task_id.startswith("RR-") and t.variant == "base"]
    half = next(r for r in rows if r.dimension == "robustness")
    assert half.stage is not None
    reached = {t.task_id for t in rr if reaches(reach(t, TASKS[t.task_id]), half.stage)}
    assert len(reached) == half.reached_tasks


def test_v3_where_each_model_breaks(v3: AnalysisSummary) -> None:
    """The first stage fewer than half of its reachers pass: SmolLM2 rarely acts at all; the
    0.5B acts and calls the right tool, but under half of its valid calls show the evidence
    (and none of those trials then answers); given all ten tools it already breaks at the
    call; the 1.5B gets through to an answer, mostly wrong."""
    breaks = {f.model: f.breaks_at for f in v3.funnel}
    assert breaks == {HALF: "evidence", ALL_TOOLS: "valid_call",
                      "llamacpp:qwen2.5-coder-1.5b": "correct", SMOL: "acts"}
    half = next(f for f in v3.funnel if f.model == HALF)
    evidence, answers = half.given("evidence"), half.given("answers")
    assert evidence is not None and evidence.estimate is not None and evidence.estimate < 0.5
    assert answers is not None and answers.estimate == 0.0
