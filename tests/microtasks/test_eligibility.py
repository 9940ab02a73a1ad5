"""The pass rule: eligible exactly when the 95% lower bound is above τ."""

from __future__ import annotations

import pytest
from statsmodels.stats.proportion import proportion_confint

from slmbench.core import stats
from slmbench.core.stats import Estimate
from slmbench.microtasks import tasks as registry
from slmbench.microtasks.eligibility import (
    SequentialRule,
    by_prompt,
    cell_verdict,
    decide,
    make_cell,
    settle,
    tau_sweep,
)
from slmbench.microtasks.spec import item_values

APPROVAL = registry.get("approval")
MEMORY = registry.get("memory")

N = 40


def _rankings(correct: int, n: int = N) -> list[list[str]]:
    """``correct`` items answered "approve" (the gold), the rest "deny"."""
    return [["approve", "deny"] if k < correct else ["deny", "approve"] for k in range(n)]


def _cell(model_correct: int, baseline_correct: int, prompt: str = "p0"):
    return make_cell(task=APPROVAL, metric="accuracy", model="m", precision="fp16",
                     prompt_id=prompt, reading="generation", golds=["approve"] * N,
                     rankings=_rankings(model_correct),
                     baselines={"rules": _rankings(baseline_correct)})


def test_decision_flips_exactly_where_the_lower_bound_crosses_tau() -> None:
    low = proportion_confint(36, N, alpha=0.05, method="wilson")[0]  # 0.7695...
    just_below = int(low * N)  # baseline accuracy 30/40 = 0.75 < low
    below, above = _cell(36, just_below), _cell(36, just_below + 1)  # 31/40 = 0.775 > low
    assert below.score.low == pytest.approx(low)
    assert below.tau < low and below.eligible
    assert above.tau > low and not above.eligible
    assert not decide(0.5, 0.5)  # equal is not above
    assert not decide(None, 0.0)  # no interval: cannot tell, so not eligible


def test_cell_reports_interval_tau_anchor_and_paired_difference() -> None:
    cell = _cell(30, 20)
    assert cell.score == stats.wilson(30, N)  # the interval is core.stats' Wilson, n = 40
    assert (cell.tau, cell.tau_anchor) == (0.5, "rules")
    d = cell.diff
    assert d.estimate == pytest.approx(0.25) and d.n == N
    assert "paired difference; Jeffreys Dirichlet" in d.method
    assert d.low is not None and d.high is not None and d.low < 0.25 < d.high
    assert d.low > 0  # 10 more right, none worse: the paired interval excludes 0


def test_tau_is_the_best_baseline() -> None:
    cell = make_cell(task=APPROVAL, metric="accuracy", model="m", precision="q4",
                     prompt_id="p0", reading="logprob", golds=["approve"] * N,
                     rankings=_rankings(30),
                     baselines={"rules": _rankings(10), "majority": _rankings(28)})
    assert cell.tau_anchor == "majority" and cell.tau == 0.7


def test_bootstrap_metrics_are_reproducible_and_bracket_the_point() -> None:
    golds = ["save", "skip"] * 20
    preds = [["save"] if g == "save" or k % 5 == 0 else ["skip"] for k, g in enumerate(golds)]
    kwargs = dict(task=MEMORY, metric="f1", model="m", precision="q4", prompt_id="p0",
                  reading="generation", golds=golds, rankings=preds,
                  baselines={"rules": [["save"]] * 40})
    a, b = make_cell(**kwargs), make_cell(**kwargs)
    assert a == b
    # 20 saves found, 4 of the 20 skips (k = 5, 15, 25, 35) wrongly saved: F1 = 40 / 44
    assert a.score.estimate == pytest.approx(2 * 20 / (2 * 20 + 4))
    assert a.score.low is not None and a.score.high is not None
    assert a.score.low <= a.score.estimate <= a.score.high < 1.0
    assert a.score.method.startswith("f1; Jeffreys Dirichlet posterior") and a.score.n == 40
    # always "save" (the rules here): F1 = 40 / 60; the model is better on the same items
    assert a.diff.estimate == pytest.approx(40 / 44 - 40 / 60)
    assert a.diff.low is not None and a.diff.low > 0


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



def test_above_tau_but_not_shown_better_on_the_same_items_is_not_eligible() -> None:
    """The seed's rule passes (lower bound > τ) but the paired one does not: the baseline is
    right on every item the model misses, so model − baseline is not shown above 0."""
    n = 400
    golds = ["approve", "deny"] * (n // 2)  # balanced: a right model is not constant

    def right_on(which: list[bool]) -> list[list[str]]:
        return [[g, "deny" if g == "approve" else "approve"][:: 1 if ok else -1]
                for g, ok in zip(golds, which, strict=True)]

    model = right_on([k < 392 for k in range(n)])  # 0.98, Wilson low ~0.961
    # the baseline: wrong on 17 items the model gets right, right on the model's 8 misses
    base = right_on([k >= 17 for k in range(n)])
    kwargs = dict(task=APPROVAL, metric="accuracy", model="m", precision="fp16",
                  prompt_id="p0", reading="generation", golds=golds, rankings=model)
    tie = make_cell(**kwargs, baselines={"rules": base})
    assert tie.tau == pytest.approx(383 / 400)
    assert tie.score.low is not None and tie.score.low > tie.tau and tie.seed_rule
    assert tie.diff.low is not None and tie.diff.low <= 0 < tie.diff.estimate
    assert not tie.paired and not tie.eligible
    clear = make_cell(**kwargs, baselines={"rules": right_on([k < 300 for k in range(n)])})
    assert clear.seed_rule and clear.paired and clear.eligible


def test_the_verdict_says_eligible_only_when_the_paired_half_holds_too() -> None:
    """A bound past τ with the paired interval across 0 is ``undecided`` (read on), not an
    ``eligible`` verdict beside a "no" in the eligible column."""
    seed_only = Estimate(estimate=0.9, low=0.8, high=0.95, method="wilson", n=100)
    across = Estimate(estimate=0.02, low=-0.01, high=0.05, method="paired", n=100)
    above = Estimate(estimate=0.1, low=0.04, high=0.16, method="paired", n=100)
    settled = settle(seed_only.low, seed_only.high, 0.75)
    assert settled == "eligible"
    assert cell_verdict(settled, across, complete=False) == "undecided"
    assert cell_verdict(settled, across, complete=True) == "undecided"
    assert cell_verdict(settled, above, complete=False) == "eligible"


def test_a_complete_cell_shown_worse_than_the_baseline_is_ineligible_not_undecided() -> None:
    """An F1 cell reads its whole split; τ inside its interval but the paired interval wholly
    below 0: the model loses to the baseline on the same items, which decides it. Before the
    split is read, the fixed-n paired interval is no reason to stop."""
    golds = ["save", "skip"] * 100
    base = [["save"]] * len(golds)  # always save: F1 2/3
    # the model misses 20 of the 100 saves and saves 80 of the 100 skips: F1 160 / 260
    model = [["skip" if k // 2 < 20 else "save"] if g == "save"
             else ["save" if k // 2 < 80 else "skip"] for k, g in enumerate(golds)]
    rule = SequentialRule(MEMORY, "f1", golds, {"always save": base})
    kwargs = dict(task=MEMORY, metric="f1", model="m", precision="q4", prompt_id="p0",
                  reading="generation", golds=golds, rankings=model,
                  baselines={"always save": base}, rule=rule)
    cell = make_cell(**kwargs)
    assert cell.score.estimate == pytest.approx(160 / 260)
    assert cell.score.low is not None and cell.score.low < cell.tau  # τ not passed ...
    assert cell.diff.high is not None and cell.diff.high < 0  # ... and shown worse: decided
    assert cell.verdict == "ineligible" and not cell.eligible
    # the same 200 items as the first half of a 400-item split: not complete, so read on
    longer = SequentialRule(MEMORY, "f1", golds * 2, {"always save": base * 2})
    early = make_cell(**{**kwargs, "rule": longer})
    assert (early.n_items, early.n_split, early.diff) == (200, 400, cell.diff)
    assert early.verdict == "undecided"
