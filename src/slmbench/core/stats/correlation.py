"""Correlations (Pearson, Spearman, Kendall) with exact permutation p-values at small n."""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from typing import Literal

import numpy as np
from scipy import stats as sps

from slmbench.core.stats.mcnemar import _paired
from slmbench.core.stats.resampling import bootstrap_interval
from slmbench.core.stats.results import CONFIDENCE, N_RESAMPLES, SEED, Correlation

# -- correlation -----------------------------------------------------------------

MIN_CORRELATION_N = 4
EXACT_CORRELATION_MAX_N = 8  # up to 8! = 40,320 orderings: exact permutation p-value


def _correlation_p(x: np.ndarray, y: np.ndarray, method: str) -> float:
    """Two-sided p-value: exact permutation test for n <= 8, else scipy's t-based value.

    The asymptotic p-value is badly wrong for tiny n (a perfect rank order of
    4 points gets p = 0 instead of the exact 1/12), and model comparisons
    usually have few models.
    """
    if method == "spearman":
        x, y = sps.rankdata(x), sps.rankdata(y)
    if x.size <= EXACT_CORRELATION_MAX_N:
        perm = sps.PermutationMethod(n_resamples=math.factorial(int(x.size)))
        return float(sps.pearsonr(x, y, method=perm).pvalue)
    return float(sps.pearsonr(x, y).pvalue)


def correlation(x: Sequence[float], y: Sequence[float], *,
                method: Literal["pearson", "spearman"] = "pearson",
                confidence: float = CONFIDENCE, n_resamples: int = N_RESAMPLES,
                seed: int = SEED) -> Correlation:
    """Pearson or Spearman correlation with its p-value (scipy) and a paired bootstrap interval.

    The p-value is exact (every permutation) for up to 8 points, else scipy's.

    With fewer than 4 points the coefficient is still reported but marked not
    meaningful; with constant input it is undefined (None) and the note says why.
    """
    xa, ya = _paired(x, y)
    n = int(xa.size)
    meaningful = n >= MIN_CORRELATION_N
    small = None if meaningful else (
        f"only {n} points: a correlation needs at least {MIN_CORRELATION_N} to mean anything")
    if n < 3 or np.ptp(xa) == 0 or np.ptp(ya) == 0:
        why = "fewer than 3 points" if n < 3 else "one variable is constant"
        return Correlation(estimate=None, p_value=None, low=None, high=None, method=method,
                           interval_method="none", n=n, meaningful=False,
                           note=f"correlation undefined: {why}")
    if method == "pearson":
        r = float(sps.pearsonr(xa, ya).statistic)
    else:
        r = float(sps.spearmanr(xa, ya).statistic)
    p = _correlation_p(xa, ya, method)

    def stat(u: np.ndarray, v: np.ndarray, axis: int = -1) -> np.ndarray:
        # vectorised over resamples; Spearman's rho is Pearson's r of the ranks.
        # A constant resample gives NaN, which bootstrap_interval leaves out.
        if method == "spearman":
            u, v = sps.rankdata(u, axis=axis), sps.rankdata(v, axis=axis)
        return sps.pearsonr(u, v, axis=axis).statistic

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        low, high, imethod = bootstrap_interval((xa, ya), stat, paired=True, vectorized=True,
                                                confidence=confidence,
                                                n_resamples=n_resamples, seed=seed)
    return Correlation(estimate=r, p_value=p, low=low, high=high, method=method,
                       interval_method=imethod, n=n, meaningful=meaningful, note=small)
