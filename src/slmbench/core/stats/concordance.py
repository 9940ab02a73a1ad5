"""Agreement between two runtimes: Cohen's kappa with its bootstrap, the share agreed on, the
spread of differences.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from slmbench.core.stats.mcnemar import _paired
from slmbench.core.stats.proportions import wilson
from slmbench.core.stats.resampling import bootstrap_interval
from slmbench.core.stats.results import (
    CONFIDENCE,
    N_RESAMPLES,
    SEED,
    Estimate,
    StatsInputError,
    _Record,
)

# -- agreement between two runtimes (backend agreement) ---------------------------------------

class Agreement(_Record):
    """How often two readers (one model through two runtimes) make the same decision on the
    same items: the share of items agreed on (Wilson) and Cohen's κ with a BCa bootstrap
    interval over items. ``kappa`` is None where it is undefined (both sides give one and the
    same label throughout); its interval is None where the bootstrap shows no spread (no item
    disagreed), and then ``share`` (never zero-width) says how far agreement is known."""

    n: int
    agreed: int
    share: Estimate
    kappa: Estimate
    labels: list[str]


def _kappa_of_codes(a: np.ndarray, b: np.ndarray, labels: int) -> np.ndarray:
    """Cohen's κ of integer-coded decisions along the last axis (vectorized for the
    bootstrap): (observed agreement − chance agreement) / (1 − chance agreement)."""
    ks = np.arange(labels)
    observed = (a == b).mean(axis=-1)
    pa = (a[..., None] == ks).mean(axis=-2)
    pb = (b[..., None] == ks).mean(axis=-2)
    chance = (pa * pb).sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(chance < 1.0, (observed - chance) / (1.0 - chance), np.nan)


def decision_agreement(a: Sequence[str], b: Sequence[str], *, confidence: float = CONFIDENCE,
                       n_resamples: int = N_RESAMPLES, seed: int = SEED) -> Agreement:
    """Agreement of paired decisions ``a[i]`` and ``b[i]`` (any labels, compared as text).

    κ's point value matches ``sklearn.metrics.cohen_kappa_score``; its interval is
    :func:`bootstrap_interval` (BCa over items, paired). Coverage is simulated in
    ``tests/core/test_stats_agreement.py``; it is reliable from about 200 items (the backend
    agreement design's minimum), and below that near κ = 1 a sample with no disagreement
    has no κ interval at all (``share`` is then the statistic to read)."""
    if len(a) != len(b):
        raise StatsInputError(f"decision_agreement: {len(a)} decisions against {len(b)}",
                              "pass one decision of each side per item, in the same order")
    if not a:
        raise StatsInputError("decision_agreement: no items", "pass at least one item")
    labels = sorted({*a, *b})
    code = {label: i for i, label in enumerate(labels)}
    ca = np.array([code[x] for x in a], dtype=float)
    cb = np.array([code[x] for x in b], dtype=float)
    agreed = int((ca == cb).sum())
    share = wilson(agreed, len(a), confidence=confidence)
    point = float(_kappa_of_codes(ca, cb, len(labels)))
    if not math.isfinite(point):
        kappa = Estimate(estimate=None, low=None, high=None, method="Cohen's κ", n=len(a),
                         confidence=confidence,
                         note="undefined: both sides give one and the same label on every item")
    else:
        low, high, method = bootstrap_interval(
            (ca, cb), lambda x, y, axis=-1: _kappa_of_codes(x, y, len(labels)), paired=True,
            vectorized=True, confidence=confidence, n_resamples=n_resamples, seed=seed)
        kappa = Estimate(estimate=point, low=low, high=high, method=f"Cohen's κ, {method}",
                         n=len(a), confidence=confidence,
                         note=None if low is not None else
                         "no item disagreed: κ has no interval; read the agreed share")
    return Agreement(n=len(a), agreed=agreed, share=share, kappa=kappa, labels=labels)


class Spread(_Record):
    """The distribution of absolute differences between two runtimes' values (e.g. the
    log-probability of one candidate): median, 95th percentile and maximum, over ``n``."""

    n: int
    median: float
    p95: float
    maximum: float


def difference_spread(a: Sequence[float], b: Sequence[float]) -> Spread:
    """:class:`Spread` of ``|a[i] − b[i]|`` (descriptive: quantiles, no interval)."""
    x, y = _paired(a, b)
    d = np.abs(x - y)
    return Spread(n=int(d.size), median=float(np.median(d)), p95=float(np.percentile(d, 95)),
                  maximum=float(d.max()))
