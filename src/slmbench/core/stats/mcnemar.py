"""Two models on the same items: McNemar's test (exact below ``EXACT_MCNEMAR_BELOW`` discordant
pairs).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from statsmodels.stats.contingency_tables import mcnemar as sm_mcnemar

from slmbench.core.stats.results import EXACT_MCNEMAR_BELOW, McNemarResult, StatsInputError

# -- paired model-vs-model --------------------------------------------------------


def _paired(a: Sequence[float], b: Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if x.shape != y.shape or x.ndim != 1:
        raise StatsInputError(f"paired data needs two equal-length lists (got {x.shape} and "
                              f"{y.shape})", "pair the values item by item")
    if x.size == 0:
        raise StatsInputError("paired data is empty", "there are no shared items to compare")
    return x, y


def mcnemar(a: Sequence[bool], b: Sequence[bool]) -> McNemarResult:
    """McNemar's test of two models' pass/fail on the same items (statsmodels).

    Exact (binomial) when fewer than 25 pairs disagree, else chi-square with
    continuity correction. With no disagreement at all, p = 1.
    """
    x, y = _paired([bool(v) for v in a], [bool(v) for v in b])
    both = int(np.sum((x == 1) & (y == 1)))
    only_a = int(np.sum((x == 1) & (y == 0)))
    only_b = int(np.sum((x == 0) & (y == 1)))
    neither = int(np.sum((x == 0) & (y == 0)))
    discordant = only_a + only_b
    exact = discordant < EXACT_MCNEMAR_BELOW
    res = sm_mcnemar([[both, only_a], [only_b, neither]], exact=exact, correction=True)
    stat = float(res.statistic)
    return McNemarResult(
        n=int(x.size), both=both, only_a=only_a, only_b=only_b, neither=neither,
        statistic=stat if math.isfinite(stat) else None, p_value=float(res.pvalue),
        method="mcnemar exact" if exact else "mcnemar chi2 (continuity corrected)",
    )
