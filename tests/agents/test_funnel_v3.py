"""The stage funnel over the committed reference study v3 export (issue #61): what the issue
read from the transcripts comes out of the funnel, with no model time."""

from __future__ import annotations

from pathlib import Path

import pytest

from slmbench.agents.analysis import analyze
from slmbench.agents.store import read_trials
from slmbench.agents.summary import AnalysisSummary

EXPORT = (Path(__file__).resolve().parents[2] / "docs" / "results" / "reference-study-v3"
          / "trials.jsonl.gz")
HALF = "llamacpp:qwen2.5-coder-0.5b"
ALL_TOOLS = "llamacpp:qwen2.5-coder-0.5b?n_ctx=8192 (all tools)"
SMOL = "llamacpp:smollm2-135m"


@pytest.fixture(scope="module")
def summary() -> AnalysisSummary:
    return analyze(read_trials(EXPORT, "the committed v3 export"))


def _rate(s: AnalysisSummary, model: str, stage: str) -> float:
    funnel = next(f for f in s.funnel if f.model == model)
    rate = funnel.stage(stage)
    assert rate is not None and rate.marginal is not None and rate.marginal.estimate is not None
    return rate.marginal.estimate


def test_the_half_b_picks_a_right_first_tool_in_most_trials_smollm2_never(
        summary: AnalysisSummary) -> None:
    assert _rate(summary, HALF, "right_tool") > 0.5
    assert _rate(summary, SMOL, "right_tool") == 0.0
    # given all ten tools, the same model picks a right first tool far less often, after Holm
    pair = next(p for p in summary.funnel_pairs if p.stage == "right_tool"
                and {p.a, p.b} == {HALF, ALL_TOOLS})
    assert pair.differs and _rate(summary, ALL_TOOLS, "right_tool") < _rate(
        summary, HALF, "right_tool")


def test_correct_is_the_accuracy_and_every_model_row_has_a_funnel(
        summary: AnalysisSummary) -> None:
    assert [f.model for f in summary.funnel] == [a.model for a in summary.accuracy]
    for f, a in zip(summary.funnel, summary.accuracy, strict=True):
        correct = f.stage("correct")
        assert correct is not None and correct.marginal == a.accuracy
        assert f.unjudged == 0 and sum(f.reached.values()) == f.trials == a.trials
