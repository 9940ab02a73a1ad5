"""Proportions: Wilson and Clopper-Pearson intervals, exact binomial and Fisher tests, Cohen's h,
Holm/BH adjustment, comparison to the best.
"""

from __future__ import annotations

import gc
import math
from collections.abc import Mapping, Sequence
from typing import Literal

from scipy import stats as sps
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.proportion import proportion_confint, proportion_effectsize

from slmbench.core.stats.results import (
    CONFIDENCE,
    Alternative,
    Estimate,
    IntervalMethod,
    StatsInputError,
    TestResult,
    VsBest,
)

# -- proportions ---------------------------------------------------------------


def _check_counts(k: int, n: int) -> None:
    if n < 1:
        raise StatsInputError(f"a proportion needs n >= 1 trials (got n={n})",
                              "there is no data for this cell; report it as missing")
    if not 0 <= k <= n:
        raise StatsInputError(f"successes must be between 0 and n (got k={k}, n={n})",
                              "count successes out of the same trials as n")


def proportion(k: int, n: int, *, method: IntervalMethod = "wilson",
               confidence: float = CONFIDENCE) -> Estimate:
    """Share ``k/n`` with a Wilson (default) or Clopper-Pearson interval (statsmodels)."""
    _check_counts(k, n)
    sm_method = "beta" if method == "clopper-pearson" else "wilson"
    low, high = proportion_confint(k, n, alpha=1 - confidence, method=sm_method)
    # both intervals reach 0 at k=0 and 1 at k=n exactly; remove float round-off there
    low = 0.0 if k == 0 else float(max(0.0, low))
    high = 1.0 if k == n else float(min(1.0, high))
    return Estimate(estimate=k / n, low=low, high=high,
                    method=method, n=n, confidence=confidence)


def wilson(k: int, n: int, *, confidence: float = CONFIDENCE) -> Estimate:
    """Wilson score interval for ``k`` successes in ``n`` trials."""
    return proportion(k, n, method="wilson", confidence=confidence)


def clopper_pearson(k: int, n: int, *, confidence: float = CONFIDENCE) -> Estimate:
    """Exact (Clopper-Pearson) interval for ``k`` successes in ``n`` trials."""
    return proportion(k, n, method="clopper-pearson", confidence=confidence)


def binomial_test(k: int, n: int, *, p0: float = 0.5, alternative: Alternative = "two-sided",
                  confidence: float = CONFIDENCE) -> tuple[TestResult, Estimate]:
    """Exact binomial test of ``k/n`` against ``p0`` and the exact interval (scipy)."""
    _check_counts(k, n)
    res = sps.binomtest(k, n, p0, alternative=alternative)
    ci = res.proportion_ci(confidence_level=confidence, method="exact")
    test = TestResult(statistic=k / n, p_value=float(res.pvalue),
                      method=f"exact binomial vs p0={p0} ({alternative})", n=n)
    est = Estimate(estimate=k / n, low=float(ci.low), high=float(ci.high),
                   method="clopper-pearson", n=n, confidence=confidence)
    return test, est


def cohens_h(p1: float, p2: float) -> float:
    """Cohen's h effect size between two proportions: 2·asin(√p1) − 2·asin(√p2)."""
    for p in (p1, p2):
        if not 0.0 <= p <= 1.0:
            raise StatsInputError(f"Cohen's h needs proportions in [0, 1] (got {p})",
                                  "pass shares, not percentages or counts")
    return float(proportion_effectsize(p1, p2))


def fisher_exact(k1: int, n1: int, k2: int, n2: int,
                 alternative: Alternative = "two-sided") -> TestResult:
    """Fisher's exact test of ``k1/n1`` against ``k2/n2``; statistic is the odds ratio."""
    _check_counts(k1, n1)
    _check_counts(k2, n2)
    table = [[k1, n1 - k1], [k2, n2 - k2]]
    odds, p = sps.fisher_exact(table, alternative=alternative)
    odds_f = float(odds)
    return TestResult(statistic=odds_f if math.isfinite(odds_f) else None, p_value=float(p),
                      method=f"fisher exact ({alternative})", n=n1 + n2,
                      note=None if math.isfinite(odds_f) else "odds ratio is infinite "
                      "(a zero cell); the p-value is still exact")


def adjust_pvalues(p_values: Sequence[float], method: Literal["fdr_bh", "holm"] = "fdr_bh"
                   ) -> list[float]:
    """Multiple-comparison adjusted p-values (statsmodels ``multipletests``).

    statsmodels' Holm branch ends in a full ``gc.collect()``; with a page's trials in memory
    that took 0.35 s a call (22 of a seed-claim test's 32 s). The heap is frozen around the
    call (``gc.freeze``), so that collection walks only what the call made; nothing else
    changes (``gc.unfreeze`` hands every object back to the collector)."""
    if not p_values:
        return []
    gc.freeze()
    try:
        return [float(p) for p in multipletests(list(p_values), method=method)[1]]
    finally:
        gc.unfreeze()


def compare_to_best(counts: Mapping[str, tuple[int, int]], *, alpha: float = 0.05
                    ) -> list[VsBest]:
    """Fisher exact test of every model against the most accurate one.

    ``counts`` maps a name to ``(successes, trials)``. The best model is the
    one with the highest accuracy (ties broken by name); it is compared with
    nothing and gets p = 1. The other p-values are adjusted with
    Benjamini-Hochberg and, separately, Holm.
    """
    if not counts:
        return []
    for k, n in counts.values():
        _check_counts(k, n)
    best = max(sorted(counts), key=lambda m: counts[m][0] / counts[m][1])
    kb, nb = counts[best]
    others = [m for m in sorted(counts) if m != best]
    tests = {m: fisher_exact(counts[m][0], counts[m][1], kb, nb) for m in others}
    raw = [tests[m].p_value for m in others]
    bh = dict(zip(others, adjust_pvalues(raw, "fdr_bh"), strict=True))
    holm = dict(zip(others, adjust_pvalues(raw, "holm"), strict=True))
    out: list[VsBest] = []
    for m in sorted(counts):
        k, n = counts[m]
        is_best = m == best
        out.append(VsBest(
            model=m, successes=k, n=n, accuracy=k / n, best=best,
            odds_ratio=None if is_best else tests[m].statistic,
            p_value=1.0 if is_best else tests[m].p_value,
            p_bh=1.0 if is_best else bh[m], p_holm=1.0 if is_best else holm[m],
            cohens_h=cohens_h(k / n, kb / nb),
            significant_bh=False if is_best else bh[m] < alpha,
        ))
    return out
