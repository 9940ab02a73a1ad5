"""Small-n intervals by simulation: Beta posteriors, bounded means and their paired differences,
flip rates.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import NamedTuple

import numpy as np
from scipy import stats as sps

from slmbench.core.stats.f1 import _dirichlet, _jeffreys_cells
from slmbench.core.stats.mcnemar import _paired
from slmbench.core.stats.proportions import _check_counts, wilson
from slmbench.core.stats.results import (
    CONFIDENCE,
    N_DRAWS,
    SEED,
    Estimate,
    FlipRate,
    StatsInputError,
)

# -- small-n intervals by simulation: Beta posteriors ------------------------------------


class Draws(NamedTuple):
    """Simulated draws of a score: ``low`` feeds the lower bound, ``high`` the upper."""

    low: np.ndarray
    high: np.ndarray

    def map(self, f: Callable[[np.ndarray], np.ndarray]) -> Draws:
        """The draws of ``f(score)`` for an increasing ``f`` (p -> p^k, ...)."""
        return Draws(f(self.low), f(self.high))


def confidence_draws(k: int, n: int, *, draws: int = N_DRAWS, seed: int = SEED,
                     stream: int = 0) -> Draws:
    """Draws of a proportion ``k/n`` from its two Clopper-Pearson confidence distributions.

    The lower one is Beta(k, n − k + 1) (a point mass at 0 when k = 0), the upper one
    Beta(k + 1, n − k) (at 1 when k = n), drawn with ``scipy.stats.beta``; their 2.5% and
    97.5% quantiles are the Clopper-Pearson interval. Each ``stream`` is an independent
    random stream, so several proportions combine without sharing draws.
    """
    _check_counts(k, n)
    rng = np.random.default_rng([seed, stream])
    low = (sps.beta.rvs(k, n - k + 1, size=draws, random_state=rng) if k > 0
           else np.zeros(draws))
    high = (sps.beta.rvs(k + 1, n - k, size=draws, random_state=rng) if k < n
            else np.ones(draws))
    return Draws(low, high)


def mean_of_draws(estimates: Sequence[float], draws: Sequence[Draws], *, n: int, method: str,
                  confidence: float = CONFIDENCE) -> Estimate:
    """The mean of several scores with an interval simulated from their draws.

    The lower bound is the ``(1 − confidence)/2`` quantile of the element-wise mean of the
    ``low`` draws, the upper bound the matching upper quantile of the ``high`` draws. Used
    for the reliability composite (one :func:`confidence_draws` per dimension, whose +1 shrinks
    as that dimension's n grows; consistency's from ``repeat_draws``) and for pass^k and the
    per-task rate (one ``repeat_draws``, which already holds the mean over tasks). Each part's
    uncertainty carries into the mean, the interval never collapses to a point, and it errs
    on the wide side at small n (coverage: ``tests/core/test_coverage.py``;
    docs/statistics.md). Averaging one Clopper-Pearson draw per *task* instead keeps each
    task's +1 in the upper bound, which then never shrinks with more tasks (issue #60).
    """
    if not estimates or len(estimates) != len(draws):
        raise StatsInputError("a mean of draws needs one draw pair per estimate",
                              "pass each score with its draws")
    tail = (1 - confidence) / 2 * 100
    low = float(np.percentile(np.mean([d.low for d in draws], axis=0), tail))
    high = float(np.percentile(np.mean([d.high for d in draws], axis=0), 100 - tail))
    estimate = float(np.mean(estimates))
    size = draws[0].low.size
    return Estimate(estimate=estimate, low=min(low, estimate), high=max(high, estimate),
                    method=f"{method}; Clopper-Pearson confidence distributions, simulated "
                           f"({size:,} draws)", n=n, confidence=confidence)


def _task_weights(tasks: int, draws: int, seed: int | Sequence[int]) -> np.ndarray:
    """Bayesian-bootstrap weights (Rubin 1981): ``draws`` rows of Dirichlet(1, …, 1) over
    ``tasks`` + 1 units, the last the pseudo-task, from numpy's seeded generator. Read-only
    (:func:`_dirichlet` keeps the last few: every interval of a design asks the same)."""
    return _dirichlet(np.ones(tasks + 1), draws, seed)


def _pseudo_task_sims(k: np.ndarray, n: np.ndarray, w: np.ndarray
                      ) -> tuple[np.ndarray, np.ndarray]:
    """Draws of the ratio ``Σc / Σn`` of every row of (rows, tasks) arrays, each row's draws
    along axis 1, under the weights ``w`` of :func:`_task_weights` with one more task of the
    row's mean size that fails every trial (first result: the lower bound's draws) or passes
    every trial (second: the upper's). Rows come sorted by (trials, successes), so one more
    success never lowers a draw, and the order of the tasks does not matter."""
    g = k.shape[1]
    extra = n.mean(axis=1, keepdims=True) * w[:, g]
    den = n @ w[:, :g].T + extra
    num = k @ w[:, :g].T
    return num / den, (num + extra) / den


def _pseudo_task_draws(values: Sequence[float], *, draws: int, seed: int | Sequence[int]
                       ) -> Draws:
    """Draws of the mean of per-task values in [0, 1] (each task weighs the same) from
    :func:`_pseudo_task_sims`: the lower bound's with a pseudo-task at 0, the upper's at 1.
    At one 0/1 value a task they are Clopper-Pearson's Beta(k, n − k + 1) and
    Beta(k + 1, n − k)."""
    v = np.sort(np.asarray(values, dtype=float))[None, :]
    low, high = _pseudo_task_sims(v, np.ones_like(v), _task_weights(v.shape[1], draws, seed))
    return Draws(low[0], high[0])


def _bounded_cells(columns: Sequence[np.ndarray], bounds: tuple[float, float]
                   ) -> tuple[np.ndarray, np.ndarray]:
    """The distinct item-wise rows of ``columns`` (values in ``bounds``) together with every
    corner of the range (each column at its low or high end), and how many items show each.

    Rows come in descending order, so 0/1 columns give (1, 1), (1, 0), (0, 1), (0, 0)."""
    lo, hi = bounds
    rows = np.stack([np.asarray(c, dtype=float) for c in columns], axis=1)
    if rows.size == 0:
        raise StatsInputError("an interval needs at least one item", "there is no data here")
    if np.any(~np.isfinite(rows)) or np.any((rows < lo) | (rows > hi)):
        raise StatsInputError(f"values must lie in [{lo}, {hi}] (got {rows.min()} to "
                              f"{rows.max()})", "rescale the metric to its stated range")
    k = rows.shape[1]
    corners = np.where((np.arange(2 ** k)[:, None] >> np.arange(k - 1, -1, -1)) & 1, hi, lo)
    cells, inverse = np.unique(np.vstack([rows, corners]), axis=0, return_inverse=True)
    counts = np.bincount(np.ravel(inverse)[:len(rows)], minlength=len(cells)).astype(float)
    return counts[::-1], cells[::-1]


def _posterior_of(columns: Sequence[np.ndarray], combine: Callable[[np.ndarray], np.ndarray],
                  *, name: str, bounds: tuple[float, float], confidence: float, draws: int,
                  seed: int) -> Estimate:
    """``combine`` (per cell: the value a cell contributes) averaged under the Jeffreys
    Dirichlet posterior of :func:`_bounded_cells`, with its simulated interval."""
    counts, cells = _bounded_cells(columns, bounds)
    value = combine(cells)
    sims = _jeffreys_cells(counts, draws, seed) @ value
    tail = (1 - confidence) / 2 * 100
    low, high = (float(v) for v in np.percentile(sims, [tail, 100 - tail]))
    estimate = float(counts @ value / counts.sum())
    return Estimate(estimate=estimate, low=min(low, estimate), high=max(high, estimate),
                    method=f"{name}; Jeffreys Dirichlet posterior over the observed values and "
                           f"the range's ends {bounds}, simulated ({draws:,} draws)",
                    n=int(counts.sum()), confidence=confidence)


def bounded_mean(values: Sequence[float], *, bounds: tuple[float, float] = (0.0, 1.0),
                 confidence: float = CONFIDENCE, draws: int = N_DRAWS,
                 seed: int = SEED) -> Estimate:
    """Mean of per-item values known to lie in ``bounds`` (MRR, nDCG@5, a Brier score), with
    a posterior interval: the distinct values seen, plus the two ends of the range, get a
    Dirichlet posterior with ½ added to each (Jeffreys), and the mean is simulated from it.

    On 0/1 values this is the Jeffreys interval of a proportion. The ends keep posterior
    mass, so the interval stays open when every item has the same value (a bootstrap gives
    [v, v] there). Coverage at n = 5..30 in ``tests/core/test_coverage.py``.
    """
    return _posterior_of([np.asarray(values, dtype=float)], lambda cells: cells[:, 0],
                         name="bounded mean", bounds=bounds, confidence=confidence,
                         draws=draws, seed=seed)


def paired_bounded_difference(a: Sequence[float], b: Sequence[float], *,
                              bounds: tuple[float, float] = (0.0, 1.0),
                              confidence: float = CONFIDENCE, draws: int = N_DRAWS,
                              seed: int = SEED) -> Estimate:
    """Mean of ``a − b`` over the same items, values in ``bounds``, with a posterior interval:
    the distinct (a, b) pairs seen, plus the four corners of the range, get a Jeffreys
    Dirichlet posterior (as in :func:`bounded_mean`) and the mean difference is simulated.

    It stays open when ``a`` and ``b`` agree on every item, where a paired bootstrap gives
    [0, 0]. On 0/1 values the cells are the 2×2 table (both, only a, only b, neither).
    """
    x, y = _paired(a, b)
    return _posterior_of([x, y], lambda cells: cells[:, 0] - cells[:, 1],
                         name="paired difference", bounds=bounds, confidence=confidence,
                         draws=draws, seed=seed)


def paired_difference(a: Sequence[bool], b: Sequence[bool], *,
                      confidence: float = CONFIDENCE, draws: int = N_DRAWS,
                      seed: int = SEED) -> Estimate:
    """Paired difference of two pass rates on the same items: :func:`paired_bounded_difference`
    on the 0/1 outcomes, i.e. ``P(only a) − P(only b)`` under the Jeffreys Dirichlet
    posterior of the 2×2 cells (coverage at n = 5..30 in ``tests/core/test_coverage.py``)."""
    return paired_bounded_difference([float(bool(v)) for v in a], [float(bool(v)) for v in b],
                                     confidence=confidence, draws=draws, seed=seed)


def flip_rate(outcomes: Mapping[str, Sequence[bool]], *,
              confidence: float = CONFIDENCE) -> FlipRate:
    """Share of items (with >= 2 repeats) whose pass/fail differs between repeats (Wilson)."""
    per_item: dict[str, float] = {}
    flipped: list[str] = []
    for item in sorted(outcomes):
        runs = [bool(v) for v in outcomes[item]]
        if len(runs) < 2:
            continue
        passes = sum(runs)
        per_item[item] = min(passes, len(runs) - passes) / len(runs)
        if 0 < passes < len(runs):
            flipped.append(item)
    if not per_item:
        raise StatsInputError("no item has two or more repeats",
                              "run with --repeats 2 or more to measure flips")
    rate = wilson(len(flipped), len(per_item), confidence=confidence)
    return FlipRate(rate=rate, flipped=flipped, items=len(per_item), per_item=per_item)
