"""Task-level (clustered) comparisons, Part A: paired differences at the task with their sign
test and interval, the smallest difference a design detects, and TOSTs of equivalence (exact
and at the task). Split from :mod:`.task_level` (rates), whose records and draws they share.
Coverage and false-positive rates: tests/core/test_task_level.py.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

import numpy as np
from scipy import stats as sps
from statsmodels.stats.proportion import proportion_confint

from slmbench.core.stats.f1 import _jeffreys_cells
from slmbench.core.stats.posterior import _bounded_cells, bounded_mean
from slmbench.core.stats.results import (
    CONFIDENCE,
    N_DRAWS,
    SEED,
    Estimate,
    StatsInputError,
    TestResult,
    TostResult,
)
from slmbench.core.stats.task_level import MDD_ALPHA, MDD_POWER, TaskComparison, wider_of


def _sign_p(ahead: np.ndarray, nonzero: np.ndarray) -> np.ndarray:
    """Two-sided exact sign test p-values (binomial at ½; equals ``scipy.stats.binomtest``),
    vectorised; 1 where no task differs."""
    with np.errstate(invalid="ignore"):
        tail = np.minimum(sps.binom.cdf(ahead, nonzero, 0.5),
                          sps.binom.sf(ahead - 1, nonzero, 0.5))
    return np.where(nonzero > 0, np.minimum(1.0, 2 * tail), 1.0)


def _zero_spread_bounds(c: float, tasks: int, alpha: float) -> tuple[float, float]:
    """Where the mean of differences bounded in [−1, 1] lies when all ``tasks`` equal ``c``:
    the share of tasks that differ from ``c`` is at most ``u = 1 − alpha^(1/tasks)`` (exact
    one-sided binomial bound at 0 of ``tasks``), so the mean is within ``(1 − u)·c ± u``."""
    u = 1 - alpha ** (1 / tasks)
    return max(-1.0, (1 - u) * c - u), min(1.0, (1 - u) * c + u)


def minimum_detectable_difference(sd: float, tasks: int, *, alpha: float = MDD_ALPHA,
                                  power: float = MDD_POWER) -> float | None:
    """The smallest true mean difference a two-sided paired t test on ``tasks`` per-task
    differences detects with ``power`` at ``alpha``: statsmodels' ``TTestPower`` effect size
    times ``sd``. None when it is undefined (fewer than 2 tasks, or no spread: ``sd`` 0)."""
    if tasks < 2 or not sd > 0:
        return None
    return _detectable_effect(int(tasks), float(alpha), float(power)) * sd


@functools.lru_cache(maxsize=256)
def _detectable_effect(tasks: int, alpha: float, power: float) -> float:
    """statsmodels' ``TTestPower`` effect size for :func:`minimum_detectable_difference`: a
    root search (about 13 power evaluations) that depends on the design only, so each design
    is solved once."""
    from statsmodels.stats.power import TTestPower  # here: this section only appends

    return float(TTestPower().solve_power(effect_size=None, nobs=tasks, alpha=alpha,
                                          power=power, alternative="two-sided"))


def task_paired(differences: Sequence[float], *, cells: int | None = None,
                confidence: float = CONFIDENCE) -> TaskComparison:
    """Compare two sides paired by task from their per-task differences ``a − b`` (each in
    [−1, 1], averaged over the cells both ran; ``cells``: how many cells that was in all).

    Test: the exact sign test across tasks (ties dropped). Interval: :func:`wider_of` two, so
    it covers wherever either does: the paired t interval of the mean difference on tasks − 1
    df, and :func:`bounded_mean` of the differences on [−1, 1] (the Jeffreys Dirichlet
    posterior over the values seen and the range's ends). The t interval alone covers ~86%
    where few tasks differ, all one way (10% of 31 tasks, 5% of 62); the posterior alone
    ~92% on 62 tasks that all differ a little; the hull covers ≥ 95% in both
    (tests/core/test_task_level.py). With no spread (every task differs by the same amount,
    e.g. two floors) the exact bound of :func:`_zero_spread_bounds` instead, never a
    zero-width interval. ``mdd``: :func:`minimum_detectable_difference`.
    """
    d = np.asarray(differences, dtype=float)
    if d.ndim != 1 or d.size == 0:
        raise StatsInputError("a paired comparison needs at least one shared task",
                              "compare sides that ran some task in the same cells")
    if np.any(np.abs(d) > 1):
        raise StatsInputError("per-task differences of rates lie in [−1, 1]",
                              "pass differences of per-task success rates")
    n, mean = int(d.size), float(d.mean())
    a_ahead, b_ahead = int(np.sum(d > 0)), int(np.sum(d < 0))
    p = float(_sign_p(np.asarray(a_ahead), np.asarray(a_ahead + b_ahead)))
    sign = TestResult(statistic=float(a_ahead), p_value=p, n=n,
                      method="exact sign test across tasks (two-sided; ties dropped)")
    sd = float(d.std(ddof=1)) if n >= 2 else None
    note = None
    if sd:
        ci = sps.ttest_1samp(d, 0.0).confidence_interval(confidence)
        t = Estimate(estimate=mean, low=float(ci.low), high=float(ci.high), n=n,
                     method="paired t on per-task differences (tasks − 1 df)",
                     confidence=confidence)
        hull = wider_of(t, bounded_mean(d, bounds=(-1.0, 1.0), confidence=confidence),
                        bounds=(-1.0, 1.0))
        low, high, method = hull.low, hull.high, hull.method
    else:
        low, high = _zero_spread_bounds(mean, n, (1 - confidence) / 2)
        method = "exact bound: no spread in the per-task differences"
        note = (f"every task differs by the same amount ({mean:+.3f}): the interval bounds "
                "the share of tasks that could differ (exact binomial)")
    est = Estimate(estimate=mean, low=min(low, mean), high=max(high, mean), method=method, n=n,
                   confidence=confidence, note=note)
    return TaskComparison(tasks=n, cells=cells if cells is not None else n, a_ahead=a_ahead,
                          b_ahead=b_ahead, ties=n - a_ahead - b_ahead, mean_difference=mean,
                          sd=sd, difference=est, sign_test=sign,
                          mdd=minimum_detectable_difference(sd or 0.0, n), note=note)


def tost(differences: Sequence[float], margin: float, *, alpha: float = 0.05) -> TostResult:
    """Equivalence of paired differences (in [−1, 1]) within ``(−margin, margin)``: the one
    TOST, for per-task differences of rates (Part A, across tasks) and per-item differences
    of 0/1 outcomes (items scored by two precisions) alike.

    Exact for any distribution of the differences, sparse ones included: a unit (task, item)
    differs by at most 1 either way, so the mean lies between minus the share of units behind
    and the share ahead. Each share's one-sided exact binomial (Clopper–Pearson) bound at
    ``alpha`` gives the ``1 − 2·alpha`` ``interval`` that decides: equivalent exactly when it
    lies inside the margin, i.e. when
    ``p = max(P(Bin(n, margin) ≤ ahead), P(Bin(n, margin) ≤ behind))`` is under ``alpha``.
    Two identical sides are called equivalent once ``(1 − margin)^n < alpha``
    (n ≥ 29 tasks at ±10 points).

    A paired t TOST is not used: where few tasks differ, all one way, its interval is too
    narrow (at a true difference of +10 points carried by 10% of 31 tasks it claims
    equivalence 18% of the time at alpha 0.05). The price of exactness is power where many
    tasks differ by small amounts in both directions: the bound counts a task's direction, not
    its size, so such data read "not shown" (give the MDD beside it).
    """
    if not 0 < margin <= 1:
        raise StatsInputError(f"an equivalence margin must be in (0, 1] (got {margin})",
                              "choose the largest difference you would call negligible")
    d = np.asarray(differences, dtype=float)
    if d.ndim != 1 or d.size == 0:
        raise StatsInputError("an equivalence test needs at least one shared task or item",
                              "compare sides that ran some task (or item) in the same cells")
    if np.any(np.abs(d) > 1):
        raise StatsInputError("paired differences of rates or 0/1 outcomes lie in [−1, 1]",
                              "pass differences of per-task success rates or of 0/1 outcomes")
    n, ahead, behind = int(d.size), int(np.sum(d > 0)), int(np.sum(d < 0))
    p_upper = _binom_cdf(ahead, n, margin)  # H0: mean >= margin
    p_lower = _binom_cdf(behind, n, margin)  # H0: mean <= -margin
    p = max(p_upper, p_lower)
    return TostResult(mean_difference=float(d.mean()), margin=margin, p_value=p,
                      p_lower=p_lower, p_upper=p_upper, equivalent=bool(p < alpha),
                      alpha=alpha, n=n,
                      interval=(-_upper_share(behind, n, alpha), _upper_share(ahead, n, alpha)),
                      method=f"exact sign bound on per-task differences (margin ±{margin})",
                      note=f"{ahead} of {n} tasks ahead, {behind} behind")


def task_tost(differences: Sequence[float], margin: float, *, alpha: float = 0.05
              ) -> TostResult:
    """Equivalence of per-task differences of rates (each in [−1, 1]) within
    ``(−margin, margin)``: the interval-inclusion TOST on :func:`task_paired`'s interval at
    ``1 − 2·alpha`` (90%), so the page's 95% interval and its claim of no difference come
    from one method.

    With spread, that interval is the hull of the paired t interval and the bounded-mean
    posterior on [−1, 1]; each one-sided p is the larger of the two methods' (the t test
    against ±margin, the posterior's mass beyond ±margin, from the draws its interval uses),
    so ``p < alpha`` exactly when the interval lies inside the margin. With no spread (every
    task differs by the same ``c``), the exact bound of ``task_paired``: ``p =
    ((1 − margin)/(1 − |c|))^n`` for ``|c| < margin`` (``(1 − margin)^n`` for two identical
    sides: equivalent within ±0.1 from 29 tasks).

    Unlike :func:`tost`'s sign bound it sees how far tasks differ, not only which way: many
    small differences both ways can be shown negligible. Its error at ±margin is simulated,
    as the hull's coverage is, over sparse one-way, sparse two-way, 3-instance and dense
    differences (tests/core/test_task_level.py): within α where the sign bound is, and where
    every task differs a little it shows a zero difference equivalent (62 tasks, ±10 points)
    nearly always, the sign bound never.
    """
    d = np.asarray(differences, dtype=float)
    exact = tost(d, margin, alpha=alpha)  # the same input checks; its note counts the tasks
    n, mean = int(d.size), float(d.mean())
    if n < 2 or np.ptp(d) == 0:
        low, high = _zero_spread_bounds(mean, n, alpha)
        p_upper = p_lower = (((1 - margin) / (1 - abs(mean))) ** n if abs(mean) < margin
                             else 1.0)
        method = (f"exact bound with no spread in the per-task differences (margin "
                  f"±{margin})")
    else:
        hull = task_paired(d, confidence=1 - 2 * alpha).difference
        low, high = float(hull.low), float(hull.high)  # type: ignore[arg-type]
        counts, cells = _bounded_cells([d], (-1.0, 1.0))
        sims = _jeffreys_cells(counts, N_DRAWS, SEED) @ cells[:, 0]
        p_upper = max(float(sps.ttest_1samp(d, margin, alternative="less").pvalue),
                      float(np.mean(sims >= margin)))
        p_lower = max(float(sps.ttest_1samp(d, -margin, alternative="greater").pvalue),
                      float(np.mean(sims <= -margin)))
        method = (f"interval inclusion on the {100 * (1 - 2 * alpha):g}% hull of the paired t "
                  f"and the bounded-mean posterior (margin ±{margin})")
    p = max(p_upper, p_lower)
    return TostResult(mean_difference=mean, margin=margin, p_value=p, p_lower=p_lower,
                      p_upper=p_upper, equivalent=bool(p < alpha), alpha=alpha, n=n,
                      interval=(min(low, mean), max(high, mean)), method=method,
                      note=exact.note)


@functools.lru_cache(maxsize=4096)
def _binom_cdf(k: int, n: int, p: float) -> float:
    """``P(Bin(n, p) ≤ k)`` (scipy), kept: a TOST asks few (k, n) of a design, many times."""
    return float(sps.binom.cdf(k, n, p))


@functools.lru_cache(maxsize=4096)
def _upper_share(k: int, n: int, alpha: float) -> float:
    """The exact one-sided (Clopper–Pearson) upper bound at ``alpha`` on a share seen k of n
    times (statsmodels' two-sided ``beta`` interval at ``2·alpha``; 1 when k = n). Kept per
    (k, n, alpha): statsmodels' call is most of a :func:`tost`."""
    return float(proportion_confint(k, n, alpha=2 * alpha, method="beta")[1])
