"""The BCa bootstrap, confidence sequences (confseq's beta-binomial mixture), and the composite and
ratio intervals built on them.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence

import numpy as np
from confseq.boundaries import bernoulli_confidence_interval
from scipy import stats as sps

from slmbench.core.stats.results import (
    CONFIDENCE,
    N_RESAMPLES,
    OUTSIDE_NOTE,
    SEED,
    Estimate,
    StatsInputError,
)

# -- bootstrap -------------------------------------------------------------------


def bootstrap_interval(data: Sequence[Sequence[float]] | Sequence[np.ndarray],
                       statistic: Callable[..., float | np.ndarray], *, paired: bool = False,
                       vectorized: bool = False, confidence: float = CONFIDENCE,
                       n_resamples: int = N_RESAMPLES, seed: int = SEED
                       ) -> tuple[float | None, float | None, str]:
    """Bootstrap interval via ``scipy.stats.bootstrap`` (BCa, fixed seed).

    When BCa is undefined (a degenerate bootstrap distribution, or resamples
    where the statistic is undefined, e.g. a correlation of a constant
    resample) the percentile interval over the finite resamples is returned
    instead, and the method string says so. Returns ``(low, high, method)``.

    A bootstrap cannot show a spread the sample does not have: when every resample gives the
    same value (all values equal) the bounds are None and the method says so, never a
    zero-width interval. For values with known bounds use :func:`bounded_mean`.
    """
    arrays = tuple(np.asarray(d, dtype=float) for d in data)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = sps.bootstrap(arrays, statistic, paired=paired, vectorized=vectorized,
                            confidence_level=confidence, n_resamples=n_resamples,
                            method="BCa", rng=np.random.default_rng(seed))
    low, high = float(res.confidence_interval.low), float(res.confidence_interval.high)
    dist = np.asarray(res.bootstrap_distribution, dtype=float)
    finite = dist[np.isfinite(dist)]
    if finite.size == 0:
        return None, None, "bootstrap undefined (statistic undefined on every resample)"
    if math.isfinite(low) and math.isfinite(high):
        method = f"bootstrap BCa ({n_resamples} resamples, seed {seed})"
    else:
        tail = (1 - confidence) / 2 * 100
        low, high = (float(v) for v in np.percentile(finite, [tail, 100 - tail]))
        method = (f"bootstrap percentile ({finite.size} of {n_resamples} resamples defined, "
                  f"seed {seed})")
    if np.ptp(finite) == 0 or not low < high:
        return None, None, ("bootstrap degenerate (the resamples show no spread): "
                            "no interval")
    return low, high, method


class ConfidenceSequence:
    """An anytime-valid confidence sequence for the mean of values in [0, 1], fed one value
    at a time: ``confseq``'s beta-binomial mixture bound (Howard, Ramdas, McAuliffe and
    Sekhon 2021), tightest near ``horizon`` items. The bounds cover the true mean at every
    n at once with probability ``confidence``, so a reader may stop as soon as they settle;
    they are intersected over n (they only narrow, and stay valid).
    """

    def __init__(self, horizon: int, *, confidence: float = CONFIDENCE) -> None:
        if horizon < 1:
            raise StatsInputError(f"a confidence sequence needs a horizon >= 1, got {horizon}",
                                  "pass the number of items that could be read")
        self.horizon, self.confidence = horizon, confidence
        self.total, self.n = 0.0, 0
        self.low, self.high = 0.0, 1.0

    def add(self, value: float) -> Estimate:
        """Take one more value (in [0, 1]); the bound after it."""
        if not 0.0 <= value <= 1.0:
            raise StatsInputError(f"a confidence sequence needs values in [0, 1], got {value}",
                                  "rescale the metric to [0, 1]")
        self.total += value
        self.n += 1
        alpha = 1.0 - self.confidence
        try:
            low, high = bernoulli_confidence_interval(self.total, self.n, alpha, self.horizon,
                                                      alpha)
        except ValueError:  # confseq's lgamma fails at some counts (e.g. 1 of 1)
            return self.estimate()  # the bound so far holds at every time: keep it
        self.low, self.high = max(self.low, low), min(self.high, high)
        return self.estimate()

    def estimate(self) -> Estimate:
        """The mean so far with the current bounds (no values yet: None)."""
        if self.n == 0:
            return Estimate(estimate=None, low=None, high=None, n=0, method=self._method(),
                            confidence=self.confidence, note="no values yet")
        mean = self.total / self.n
        outside = not self.low <= mean <= self.high
        return Estimate(estimate=mean, low=self.low, high=self.high, n=self.n,
                        method=self._method(), confidence=self.confidence,
                        note=OUTSIDE_NOTE if outside else None)

    def _method(self) -> str:
        return f"confidence sequence (confseq beta-binomial mixture, horizon {self.horizon})"


def confidence_sequence(values: Sequence[float], *, horizon: int,
                        confidence: float = CONFIDENCE) -> Estimate:
    """The :class:`ConfidenceSequence` bound after all of ``values`` (read in this order)."""
    seq = ConfidenceSequence(horizon, confidence=confidence)
    for v in values:
        seq.add(float(v))
    return seq.estimate()


def composite_interval(groups: Sequence[tuple[Sequence[float], Sequence[float]]], *,
                       confidence: float = CONFIDENCE, n_resamples: int = N_RESAMPLES,
                       seed: int = SEED) -> Estimate:
    """Mean over groups of ratio estimates, with a cluster bootstrap interval.

    Each group is ``(numerators, denominators)`` with one entry per cluster
    (e.g. per task: successes and trials of one reliability dimension); its
    score is ``sum(num) / sum(den)``, i.e. the per-trial rate. Clusters are
    resampled with replacement within every group independently (one
    ``scipy.stats.bootstrap`` sample per group), so the interval reflects the
    uncertainty of all groups. One group gives a plain cluster-bootstrap
    interval of its rate. Groups with one cluster are held fixed (see note).
    """
    pairs = [(np.asarray(n, dtype=float), np.asarray(d, dtype=float)) for n, d in groups]
    if not pairs or any(n.size == 0 or n.shape != d.shape or d.sum() <= 0 for n, d in pairs):
        raise StatsInputError("every group needs one numerator and a positive denominator "
                              "per cluster", "there is no data for one of its parts")
    ratios = [float(n.sum() / d.sum()) for n, d in pairs]
    estimate = float(np.mean(ratios))
    varying = [i for i, (n, _) in enumerate(pairs) if n.size >= 2]
    fixed = sum(r for i, r in enumerate(ratios) if i not in varying)
    clusters = int(sum(n.size for n, _ in pairs))
    note = (f"{len(pairs) - len(varying)} group(s) with one cluster held fixed"
            if len(varying) < len(pairs) else None)
    if not varying:
        return Estimate(estimate=estimate, low=None, high=None, method="ratio", n=clusters,
                        confidence=confidence, note="one cluster per group: no interval")

    def stat(*indices: np.ndarray, axis: int = -1) -> np.ndarray:
        total = np.zeros(np.shape(indices[0])[:-1]) + fixed
        for i, idx in zip(varying, indices, strict=True):
            num, den = pairs[i]
            take = idx.astype(int)
            total = total + num[take].sum(axis=axis) / den[take].sum(axis=axis)
        return total / len(pairs)

    samples = [np.arange(pairs[i][0].size, dtype=float) for i in varying]
    low, high, method = bootstrap_interval(samples, stat, vectorized=True, confidence=confidence,
                                           n_resamples=n_resamples, seed=seed)
    if low is None:
        note = "; ".join(filter(None, [note, "the resamples show no spread (the clusters "
                                       "agree): no interval"]))
    return Estimate(estimate=estimate, low=low, high=high, method=f"cluster {method}",
                    n=clusters, confidence=confidence, note=note)


def ratio_interval(numerators: Sequence[float], denominators: Sequence[float], *,
                   confidence: float = CONFIDENCE, n_resamples: int = N_RESAMPLES,
                   seed: int = SEED) -> Estimate:
    """``sum(num) / sum(den)`` with a bootstrap over clusters (e.g. a success rate over tasks)."""
    return composite_interval([(numerators, denominators)], confidence=confidence,
                              n_resamples=n_resamples, seed=seed)
