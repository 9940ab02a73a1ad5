"""Calibration (Brier, ECE) and selective prediction (risk–coverage, coverage beating τ)."""

from __future__ import annotations

import math

import pytest

from slmbench.microtasks.diagnostics.thresholds import ScoredItem, calibration


def _item(k: int, p_right: float, right: bool) -> ScoredItem:
    """A binary item whose decided option has probability ``p_right`` (right or wrong)."""
    gold = "deny"
    top, other = ("deny", "approve") if right else ("approve", "deny")
    lp = {top: math.log(p_right), other: math.log(1 - p_right)}
    return ScoredItem(item_id=f"i{k}", split="eval", options=["approve", "deny"], gold=gold,
                      logprobs=lp)


def test_confident_items_right_and_unsure_ones_coin_flips_give_a_partial_coverage() -> None:
    # 60 confident (0.95) items, all right; 60 unsure (0.55) items, half right
    items = ([_item(k, 0.95, True) for k in range(60)]
             + [_item(60 + k, 0.55, k % 2 == 0) for k in range(60)])
    cal = calibration(items, tau=0.75, metric="accuracy")
    assert cal.accuracy == pytest.approx(0.75)
    curve = {round(p.coverage, 1): p.accuracy for p in cal.curve}
    assert curve[0.5].estimate == 1.0 and curve[1.0].estimate == pytest.approx(0.75)
    assert curve[1.0].n == 120 and curve[0.1].n == 12
    # the whole split does not beat τ = 0.75; the confident half does
    assert cal.coverage_beating_tau is not None and 0.5 <= cal.coverage_beating_tau < 1.0
    assert cal.brier is not None and cal.brier.low is not None and cal.brier.high is not None
    expected = (60 * 2 * 0.05 ** 2 + 30 * 2 * 0.45 ** 2 + 30 * 2 * 0.55 ** 2) / 120
    assert cal.brier.estimate == pytest.approx(expected)
    # half the items at confidence 0.95 with accuracy 1.0, half at 0.55 with accuracy 0.5
    assert cal.ece == pytest.approx(0.5 * 0.05 + 0.5 * 0.05)
    assert cal.ece_interval is not None and cal.ece_interval.low is not None


def test_an_overconfident_model_has_a_large_ece_and_no_coverage_beats_tau() -> None:
    items = [_item(k, 0.99, k % 2 == 0) for k in range(80)]
    cal = calibration(items, tau=0.6, metric="accuracy")
    assert cal.ece == pytest.approx(0.49) and cal.gap == pytest.approx(0.49)
    assert cal.coverage_beating_tau is None
    f1 = calibration(items, tau=0.6, metric="f1")
    assert f1.coverage_beating_tau is None and f1.note is not None and "f1" in f1.note
