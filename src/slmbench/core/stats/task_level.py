"""Task-level (clustered) inference, Part A: rates, paired comparisons and TOSTs at the task, with
the design.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from scipy import stats as sps

from slmbench.core.stats.posterior import (
    _pseudo_task_sims,
    _task_weights,
)
from slmbench.core.stats.proportions import _check_counts
from slmbench.core.stats.results import (
    CONFIDENCE,
    N_DRAWS,
    SEED,
    Estimate,
    StatsInputError,
    TestResult,
    _Record,
)

# -- task-level (clustered) inference, Part A ------------------------------------------
#
# Part A repeats every task (temperatures, repeats): its trials are clustered by task, and the
# estimand is the mean over a population of tasks like the suite's. These functions infer at
# the task level and carry the design (tasks, trials per task, ICC, effective n) in their
# records. Coverage and false-positive rates: tests/core/test_task_level.py.

TASK_LEVEL_METHOD = ("task-level: Bayesian bootstrap over tasks (Dirichlet(1, …, 1) weights, one "
                     "pseudo-task of the mean size at 0 for the lower bound and at 1 for the "
                     "upper; Clopper-Pearson at one trial per task), ratio Σc/Σn, simulated")
_CHUNK = 256  # rows simulated at once (memory: draws × chunk floats)
MDD_POWER = 0.8
MDD_ALPHA = 0.05


class ClusteredEstimate(Estimate):
    """A rate over trials that repeat tasks, with its task-level interval and its design.

    ``n`` is the trials; ``tasks`` the clusters; ``icc`` the one-way ANOVA intraclass
    correlation truncated at 0 (None: not estimable, every trial ended the same way, so the
    worst case, ICC 1, is shown); ``design_effect`` is Kish's ``1 + (m − 1)·ICC`` with
    ``m = Σ nᵢ² / Σ nᵢ``; ``effective_n = n / design_effect``. The design describes the data;
    the interval does not use it (:func:`task_level_rate`).
    """

    tasks: int
    trials_per_task: float
    icc: float | None
    design_effect: float
    effective_n: float

    def design(self) -> str:
        """``31 tasks × 6 trials, ICC 0.41, n_eff 61`` (``ICC –`` when not estimable)."""
        icc = "–" if self.icc is None else f"{self.icc:.2f}"
        return (f"{self.tasks} tasks × {self.trials_per_task:.3g} trials, ICC {icc}, "
                f"n_eff {self.effective_n:.0f}")


class TaskComparison(_Record):
    """Two sides paired by task: per-task differences ``a − b`` (each averaged over the cells
    both sides ran), the exact sign test across tasks, the paired interval of the mean
    difference and the minimum detectable difference (``mdd``: two-sided α 0.05, power 0.8,
    paired t on the tasks, times the sd of the per-task differences; None with no spread)."""

    tasks: int
    cells: int
    a_ahead: int
    b_ahead: int
    ties: int
    mean_difference: float
    sd: float | None
    difference: Estimate
    sign_test: TestResult
    mdd: float | None
    note: str | None = None


def _task_arrays(counts: Sequence[tuple[int, int]]) -> tuple[np.ndarray, np.ndarray]:
    """``(trials n, successes c)`` per task as two (1, tasks) arrays; StatsInputError if bad."""
    if not counts:
        raise StatsInputError("a task-level rate needs at least one task",
                              "there is no data for this cell; report it as missing")
    for n, c in counts:
        _check_counts(c, n)
    n_arr = np.asarray([[n for n, _ in counts]], dtype=float)
    k_arr = np.asarray([[c for _, c in counts]], dtype=float)
    return k_arr, n_arr


def _icc_rows(k: np.ndarray, n: np.ndarray) -> np.ndarray:
    """One-way ANOVA ICC of 0/1 trials, one value per row of (rows, tasks) arrays; NaN where
    it is not estimable (fewer than 2 tasks, no repeats, or no spread at all)."""
    g = k.shape[1]
    total = n.sum(axis=1)
    p = k.sum(axis=1) / total
    p_i = k / n
    with np.errstate(invalid="ignore", divide="ignore"):
        msb = (n * (p_i - p[:, None]) ** 2).sum(axis=1) / (g - 1)
        msw = (k * (1 - p_i)).sum(axis=1) / (total - g)
        n0 = (total - (n ** 2).sum(axis=1) / total) / (g - 1)
        den = msb + (n0 - 1) * msw
        icc = np.where((den > 0) & (total > g), np.clip((msb - msw) / den, 0.0, 1.0), np.nan)
    return icc if g >= 2 else np.full(k.shape[0], np.nan)


def _bootstrap_sims(k: np.ndarray, n: np.ndarray, w: np.ndarray
                    ) -> tuple[np.ndarray, np.ndarray]:
    """The draws of the lower and upper bound of every row of (rows, tasks) arrays under the
    weights ``w``, each row's tasks sorted by (trials, successes) first (see
    :func:`_bootstrap_bounds`)."""
    order = np.lexsort((k, n))
    ks, ns = np.take_along_axis(k, order, axis=1), np.take_along_axis(n, order, axis=1)
    return _pseudo_task_sims(ks, ns, w)


def _bound_quantiles(lows: np.ndarray, highs: np.ndarray, confidence: float
                     ) -> tuple[np.ndarray, np.ndarray]:
    """The interval's bounds from the draws of :func:`_bootstrap_sims` (rows along axis 0):
    the ``(1 − confidence)/2`` quantile of the lower bound's draws and the
    ``(1 + confidence)/2`` quantile of the upper's (numpy's linear interpolation)."""
    tail = (1 - confidence) / 2 * 100
    return np.percentile(lows, tail, axis=1), np.percentile(highs, 100 - tail, axis=1)


def _bootstrap_bounds(k: np.ndarray, n: np.ndarray, confidence: float, draws: int, seed: int
                      ) -> tuple[np.ndarray, np.ndarray]:
    """The lower and upper bounds of the task-level interval of each row (see
    :func:`task_level_rate`). Each row's tasks are sorted by (trials, successes) first, so a
    row's bounds do not depend on the order its tasks come in, and, the weights being common
    to every row of a design, one more success never lowers a simulated ratio: the upper bound
    is non-decreasing in every task's successes. Identical rows are simulated once."""
    order = np.lexsort((k, n))
    ks, ns = np.take_along_axis(k, order, axis=1), np.take_along_axis(n, order, axis=1)
    rows, inverse = np.unique(np.hstack([ns, ks]), axis=0, return_inverse=True)
    g = k.shape[1]
    w = _task_weights(g, draws, [seed, 0])  # per_task_rate's weights (repeat_draws)
    low, high = np.empty(len(rows)), np.empty(len(rows))
    for start in range(0, len(rows), _CHUNK):
        part = rows[start:start + _CHUNK]
        bounds = _bound_quantiles(*_pseudo_task_sims(part[:, g:], part[:, :g], w), confidence)
        low[start:start + len(part)], high[start:start + len(part)] = bounds
    return low[np.ravel(inverse)], high[np.ravel(inverse)]


def _task_level_rows(k: np.ndarray, n: np.ndarray, confidence: float = CONFIDENCE, *,
                     draws: int = N_DRAWS, seed: int = SEED) -> dict[str, np.ndarray]:
    """The task-level interval of every row of (rows, tasks) arrays of successes and trials:
    point, low, high, and the design (icc, design effect, effective n; descriptive, see
    :func:`task_level_rate`)."""
    total = n.sum(axis=1)
    p = k.sum(axis=1) / total
    m = (n ** 2).sum(axis=1) / total  # size-weighted trials per task (Kish)
    icc = _icc_rows(k, n)
    de = np.where(np.isnan(icc), m, 1 + (m - 1) * np.nan_to_num(icc))
    low, high = _bootstrap_bounds(k, n, confidence, draws, seed)
    low = np.where(p == 0, 0.0, np.clip(np.minimum(low, p), 0.0, 1.0))
    high = np.where(p == 1, 1.0, np.clip(np.maximum(high, p), 0.0, 1.0))
    return {"p": p, "low": low, "high": high, "icc": icc, "de": de, "neff": total / de}


def task_level_rate(counts: Sequence[tuple[int, int]], *, confidence: float = CONFIDENCE
                    ) -> ClusteredEstimate:
    """A success rate over trials that repeat tasks (``counts``: ``(trials n, successes c)``
    per task), inferred at the task level: the estimand is the mean over a population of
    tasks like these.

    The point is ``Σc / Σn``. The interval is the Bayesian bootstrap of that ratio over tasks
    (Rubin 1981: Dirichlet(1, …, 1) weights on the tasks, 20,000 seeded draws) with one more
    pseudo-task of the tasks' mean size: it fails every trial in the draws of the lower bound
    and passes every trial in those of the upper, as Clopper–Pearson's two confidence
    distributions do, to which it reduces with one trial per task. It is never zero-width,
    does not depend on the tasks' order, and one more success never lowers either bound
    (the weights are common to both outcomes, each task's successes sorted within its size).

    It replaced Wilson on the ANOVA-ICC effective n widened by the cluster-robust t, whose
    upper bound fell when one success was added (0 of 62 tasks × 3: [0, 5.8]%; 1 of them:
    [0, 3.0]%) and fell short at sparse rates (coverage 89.6% at 14 tasks × 9, mean 5%, ICC
    0.4). Each tail is now at most 2.5% over tasks {8, 14, 31, 62} × trials {3, 9} × ICC
    {0–0.6} × means 0.5–10% (tests/core/test_task_level_sparse.py); it errs wide (98.6% mean
    coverage on issue #37's grid).

    The design is carried for the reader, not used by the interval: ``icc`` is the one-way
    ANOVA ICC truncated at 0 (None where every trial ended the same way; the design effect
    then shows the worst case, ICC 1), ``effective_n`` Kish's ``Σn / (1 + (m − 1)·ICC)``.
    """
    k, n = _task_arrays(counts)
    row = {key: float(v[0]) for key, v in _task_level_rows(k, n, confidence).items()}
    icc = None if math.isnan(row["icc"]) else row["icc"]
    note = None
    if icc is None and row["de"] > 1:
        note = ("every trial ended the same way: the ICC is not estimable, so the design shows "
                "the worst case (ICC 1, effective n = tasks)")
    return ClusteredEstimate(
        estimate=row["p"], low=row["low"], high=row["high"], method=TASK_LEVEL_METHOD,
        n=int(n.sum()), confidence=confidence, note=note, tasks=int(n.shape[1]),
        trials_per_task=float(n.mean()), icc=icc, design_effect=row["de"],
        effective_n=row["neff"])


def task_level_p_past(counts: Sequence[tuple[int, int]], bar: float, *, above: bool
                      ) -> float:
    """The one-sided p of a task-level rate past ``bar`` (``counts``: ``(trials n,
    successes c)`` per task) on the scale of :func:`task_level_rate`'s interval: ``above``,
    the p of "the rate is at most ``bar``" (small: shown above it), else of "at least
    ``bar``" (small: shown below it).

    It is the level at which that interval's one-sided bound reaches ``bar``: the interval at
    ``1 − 2p`` is the last one past ``bar`` (a hair wider reaches it), so ``p ≤ 0.05``
    exactly when the 90% interval lies past ``bar``. A bound is a quantile of the interval's
    20,000 simulated draws, so ``p`` is read off those draws once: the share of the lower
    bound's draws at or below ``bar`` (``above``; of the upper's at or above it, else), taken
    on numpy's interpolated quantile scale, ``(j − 1 + f)/(N − 1)`` with ``j`` draws on the
    far side and ``f`` where ``bar`` falls between the two draws around it. It is nudged up
    until the interval at ``1 − 2p`` is past the bar on the same draws, as the interval
    computes it. Between ``(1 − (1 − 10⁻⁹))/2`` and ``(1 − 10⁻⁹)/2``; 1 where the estimate
    is not past ``bar`` (a claim of a stated size judged at that size) or even the
    narrowest interval is not (the draws' centre can sit on the other side of the
    estimate). It replaced a 40-step bisection over the confidence that redrew the
    interval at each step (the same p to that bisection's resolution, 2⁻⁴¹).
    """
    k, n = _task_arrays(counts)
    p = float(k.sum() / n.sum())
    if p <= bar if above else p >= bar:
        return 1.0
    lows, highs = _bootstrap_sims(k, n, _task_weights(k.shape[1], N_DRAWS, [SEED, 0]))

    def past(confidence: float) -> bool:  # as _task_level_rows clips, the estimate past bar
        low, high = _bound_quantiles(lows, highs, confidence)
        return bool(low[0] > bar) if above else bool(high[0] < bar)

    # the lower bound's draws, or the upper's mirrored, past the bar: x > b
    x, b = (np.sort(lows[0]), bar) if above else (np.sort(-highs[0]), -bar)
    size, j = x.size, int(np.searchsorted(x, b, side="right"))  # j draws at or below b
    if j == 0:
        share = 0.0
    elif j == size:
        share = 1.0
    else:  # the interpolated quantile crosses b between draws j - 1 and j
        share = (j - 1 + (b - x[j - 1]) / (x[j] - x[j - 1])) / (size - 1)
    narrowest, widest = (1.0 - (1 - 1e-9)) / 2, (1.0 - 1e-9) / 2  # the bisection's ends
    if share <= narrowest and past(1 - 2 * narrowest):
        return narrowest
    if share >= widest or not past(1 - 2 * widest):
        return 1.0
    step = 1e-15
    while not past(1 - 2 * share):  # the quantile sits on the bar at ``share`` itself
        share, step = min(share + step, widest), step * 2
    return share


def task_mean_interval(values: Sequence[float], *, confidence: float = CONFIDENCE
                       ) -> Estimate | None:
    """The t interval (tasks − 1 df) of the mean of one value per task (e.g. each task's
    pass^k): the task-level part of a score whose per-task values are already estimates.
    None with fewer than 2 tasks or no spread (a t interval would be zero-width)."""
    v = np.asarray(values, dtype=float)
    if v.ndim != 1 or v.size < 2 or np.ptp(v) == 0:
        return None
    ci = sps.ttest_1samp(v, 0.0).confidence_interval(confidence)
    return Estimate(estimate=float(v.mean()), low=float(ci.low), high=float(ci.high),
                    method="t over tasks (tasks − 1 df)", n=int(v.size), confidence=confidence)


def wider_of(a: Estimate, b: Estimate | None, *, bounds: tuple[float, float] = (0.0, 1.0)
             ) -> Estimate:
    """``a`` with its interval widened to cover ``b``'s too (clipped to ``bounds``); ``a``
    itself when ``b`` is None or either interval is undefined."""
    if b is None or None in (a.low, a.high, b.low, b.high):
        return a
    low = max(bounds[0], min(a.low, b.low))  # type: ignore[type-var]
    high = min(bounds[1], max(a.high, b.high))  # type: ignore[type-var]
    return a.model_copy(update={"low": low, "high": high,
                                "method": f"the wider of ({a.method}) and ({b.method})"})
