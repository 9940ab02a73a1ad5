"""Agreement between two runtimes' decisions: Cohen's κ and its interval (core.stats)."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from slmbench.core.stats import StatsInputError, decision_agreement, difference_spread

LABELS = np.array(["allow", "deny", "ask"])


def _pair(rng: np.random.Generator, n: int, shares: list[float],
          flip: float) -> tuple[list[str], list[str]]:
    """Decisions of a runtime A (labels drawn with ``shares``) and of B, which keeps A's
    decision and, with probability ``flip`` per item, draws a fresh one from the same
    shares instead."""
    k = len(shares)
    a = rng.choice(k, size=n, p=shares)
    fresh = rng.choice(k, size=n, p=shares)
    b = np.where(rng.random(n) < flip, fresh, a)
    return list(LABELS[a]), list(LABELS[b])


def _true_kappa(shares: list[float], flip: float) -> float:
    """κ of the population :func:`_pair` draws from: both margins are ``shares``, and B
    agrees with A unless it redraws (then by chance, Σ p²)."""
    chance = float(np.sum(np.square(shares)))
    observed = 1 - flip + flip * chance
    return (observed - chance) / (1 - chance)


@pytest.mark.parametrize("shares, flip", [([0.3, 0.7], 0.08), ([0.3, 0.7], 0.15),
                                          ([0.5, 0.5], 0.3), ([0.3, 0.7], 0.6),
                                          ([0.2, 0.5, 0.3], 0.2)])
def test_the_kappa_interval_covers_the_true_kappa_at_the_design_size(
        shares: list[float], flip: float) -> None:
    """At 200 items (what `slmbench agree` reads per task), the 95% κ interval covers the
    population κ in at least 90% of 120 simulated samples at each point (the standard error
    of a coverage of 0.95 over 120 samples is 0.02); the points run from about 3% to 40% of
    items disagreeing. An interval ignoring the pairing, or a
    percentile interval around the wrong centre, fails this."""
    rng = np.random.default_rng(7)
    truth = _true_kappa(shares, flip)
    covered = 0
    for _ in range(120):
        a, b = _pair(rng, 200, shares, flip)
        k = decision_agreement(a, b, n_resamples=1000).kappa
        # a sample with no disagreement has no κ interval: counted as not covering
        covered += k.low is not None and k.high is not None and k.low <= truth <= k.high
    assert covered / 120 >= 0.90, (truth, covered)


def test_kappa_matches_scikit_learn_and_the_share_is_the_items_agreed_on() -> None:
    rng = np.random.default_rng(3)
    a, b = _pair(rng, 150, [0.2, 0.5, 0.3], 0.25)
    got = decision_agreement(a, b, n_resamples=500)
    assert got.kappa.estimate == pytest.approx(cohen_kappa_score(a, b), abs=1e-12)
    assert got.agreed == sum(x == y for x, y in zip(a, b, strict=True))
    assert got.share.estimate == pytest.approx(got.agreed / 150)
    assert got.labels == ["allow", "ask", "deny"]


def test_identical_sides_have_kappa_one_no_interval_and_an_open_share() -> None:
    """No disagreement cannot give a zero-width κ interval: κ is 1 with no interval, and the
    agreed share's Wilson interval (open below) says how far agreement is known."""
    a = ["allow"] * 120 + ["deny"] * 80
    got = decision_agreement(a, list(a))
    assert got.kappa.estimate == 1.0 and got.kappa.low is None and got.kappa.high is None
    assert got.share.estimate == 1.0 and got.share.low is not None and got.share.low < 0.99


def test_one_label_throughout_leaves_kappa_undefined() -> None:
    got = decision_agreement(["deny"] * 30, ["deny"] * 30)
    assert got.kappa.estimate is None and "undefined" in (got.kappa.note or "")


def test_bad_input_is_refused_with_a_hint() -> None:
    with pytest.raises(StatsInputError):
        decision_agreement(["a"], ["a", "b"])
    with pytest.raises(StatsInputError):
        decision_agreement([], [])
    with pytest.raises(StatsInputError):
        difference_spread([], [])


def test_difference_spread_reports_median_95th_percentile_and_maximum() -> None:
    a = [float(i) for i in range(101)]
    got = difference_spread(a, [0.0] * 101)
    assert (got.n, got.median, got.p95, got.maximum) == (101, 50.0, 95.0, 100.0)
