"""The pass rule: eligible exactly when the 95% lower bound is above τ."""

from __future__ import annotations

import pytest
from statsmodels.stats.proportion import proportion_confint

from slmbench.microtasks.eligibility import (
    by_prompt,
    decide,
    f1_score,
    item_values,
    make_cell,
    tau_sweep,
)

N = 40


def _rankings(correct: int, n: int = N) -> list[list[str]]:
    """``correct`` items answered "approve" (the gold), the rest "deny"."""
    return [["approve", "deny"] if k < correct else ["deny", "approve"] for k in range(n)]


def _cell(model_correct: int, baseline_correct: int, prompt: str = "p0"):
    return make_cell(task="approval", metric="accuracy", model="m", precision="fp16",
                     prompt_id=prompt, reading="generation", golds=["approve"] * N,
                     rankings=_rankings(model_correct),
                     baselines={"rules": _rankings(baseline_correct)})


def test_decision_flips_exactly_where_the_lower_bound_crosses_tau() -> None:
    low = proportion_confint(36, N, alpha=0.05, method="wilson")[0]  # 0.7695...
    just_below = int(low * N)  # baseline accuracy 30/40 = 0.75 < low
    below, above = _cell(36, just_below), _cell(36, just_below + 1)  # 31/40 = 0.775 > low
    assert below.ci_low == pytest.approx(low)
    assert below.tau < below.ci_low and below.eligible
    assert above.tau > above.ci_low and not above.eligible
    assert not decide(0.5, 0.5)  # equal is not above


def test_cell_reports_interval_tau_anchor_and_paired_difference() -> None:
    cell = _cell(30, 20)
    assert cell.score == 0.75 and cell.ci_method == "wilson"
    assert cell.ci_low < 0.75 < cell.ci_high
    assert (cell.tau, cell.tau_anchor) == (0.5, "rules")
    assert cell.diff == pytest.approx(0.25)
    assert cell.diff_low < 0.25 < cell.diff_high
    assert cell.diff_low > 0  # 10 more right, none worse: the paired interval excludes 0


def test_tau_is_the_best_baseline() -> None:
    cell = make_cell(task="approval", metric="accuracy", model="m", precision="q4",
                     prompt_id="p0", reading="logprob", golds=["approve"] * N,
                     rankings=_rankings(30),
                     baselines={"rules": _rankings(10), "majority": _rankings(28)})
    assert cell.tau_anchor == "majority" and cell.tau == 0.7


def test_bootstrap_metrics_are_reproducible_and_bracket_the_point() -> None:
    golds = ["save", "skip"] * 20
    preds = [["save"] if g == "save" or k % 5 == 0 else ["skip"] for k, g in enumerate(golds)]
    kwargs = dict(task="memory", metric="f1", model="m", precision="q4", prompt_id="p0",
                  reading="generation", golds=golds, rankings=preds,
                  baselines={"rules": [["save"]] * 40})
    a, b = make_cell(**kwargs), make_cell(**kwargs)
    assert a == b
    assert a.score == pytest.approx(f1_score(golds, [p[0] for p in preds], "save"))
    assert a.ci_low <= a.score <= a.ci_high
    assert a.ci_method.startswith("bootstrap")


def test_ranking_metrics() -> None:
    golds = ["2", "1", "3"]
    rankings = [["2", "1", "3"], ["3", "1", "2"], ["1", "2"]]  # rank 1, rank 2, missing
    assert list(item_values("mrr", golds, rankings)) == [1.0, 0.5, 0.0]
    ndcg = item_values("ndcg@5", golds, rankings)
    assert ndcg[0] == 1.0 and ndcg[1] == pytest.approx(1 / 1.584962500721156) and ndcg[2] == 0


def test_tau_sweep_and_prompt_summary_count_passing_cells() -> None:
    cells = [_cell(36, 20, "p0"), _cell(20, 20, "p1")]
    sweep = {r.anchor: (r.eligible, r.total) for r in tau_sweep(cells)}
    assert sweep["baseline:rules"] == (1, 2)
    assert sweep["fixed:0.9"] == (0, 2)
    assert sweep["fixed:0.5"] == (1, 2)
    assert [(p.prompt_id, p.eligible) for p in by_prompt(cells)] == [("p0", 1), ("p1", 0)]
