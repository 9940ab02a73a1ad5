"""The per-task mean, pass^k and the composite (issue #60, item 2): intervals that cover the
mean over tasks and shrink as tasks are added.

Before, each task's Clopper-Pearson draws were averaged: each task's +1 stayed in the upper
bound, so 0 of 3 on each of 62 tasks read [0, 29.9]% (the rate beside it [0, 5.8]%) and would
still read 26.5% at 620 tasks. Now the draws are the task-level interval's (a Bayesian
bootstrap over tasks with one pseudo-task at the range's end).
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy import stats as sps

from slmbench.core import stats
from slmbench.core.stats import posterior
from slmbench.core.stats.results import N_DRAWS, SEED


def test_per_task_rate_with_equal_trials_is_the_task_level_interval() -> None:
    """Same weights, same ratio: so the sparse grid's coverage (test_task_level_sparse.py)
    is the per-task mean's too, wherever tasks have equal trials."""
    rng = np.random.default_rng(60)
    for _ in range(20):
        tasks, trials = int(rng.integers(1, 40)), int(rng.integers(1, 10))
        counts = [(trials, int(c)) for c in rng.binomial(trials, rng.beta(0.3, 2), tasks)]
        a, b = stats.per_task_rate(counts), stats.task_level_rate(counts)
        assert (a.low, a.high) == pytest.approx((b.low, b.high), rel=1e-9, abs=1e-12)


def test_the_per_task_mean_pass_k_and_the_composite_shrink_as_tasks_are_added() -> None:
    """0 of 3 on every task: the upper bound falls as tasks are added, to Clopper-Pearson's at
    0 of the tasks (simulated); a mixed pattern repeated ten times narrows about √10-fold."""
    for tasks in (62, 620):
        floor = [(3, 0)] * tasks
        bound = stats.clopper_pearson(0, tasks).high
        for est in (stats.per_task_rate(floor), stats.pass_hat_k(floor, 2),
                    stats.pass_at_k(floor, 2)):
            assert est.high == pytest.approx(bound, rel=0.03), (tasks, est)
    assert stats.per_task_rate([(3, 0)] * 620).high < 0.01  # was 26.5%
    pattern = [(4, 4), (4, 2), (4, 0), (4, 3), (4, 1), (4, 4), (4, 0), (4, 1)]
    for f in (stats.per_task_rate, lambda c: stats.pass_hat_k(c, 2),
              lambda c: stats.pass_at_k(c, 3)):
        few, many = f(pattern * 4), f(pattern * 40)
        ratio = (few.high - few.low) / (many.high - many.low)  # type: ignore[operator]
        assert 2.5 < ratio < 4, ratio
    composite = [_composite(scale) for scale in (1, 10, 100)]
    assert composite[0] > composite[1] > composite[2] and composite[2] < 0.02, composite


def _composite(scale: int) -> float:
    """Width of the composite as dimensions.py forms it: consistency's pass^3 draws over
    ``8·scale`` tasks at 0 of 3, three dimensions at 0 of ``10·scale`` (their effective n)."""
    parts = [stats.repeat_draws([(3, 0)] * (8 * scale),
                                lambda n, c: stats.pass_hat_k_item(n, c, 3))]
    parts += [stats.confidence_draws(0, 10 * scale, stream=1000 * i) for i in (2, 3, 4)]
    est = stats.mean_of_draws([0.0] * 4, parts, n=4, method="composite")
    return est.high - est.low  # type: ignore[operator]


TASKS, REPEATS, ICCS, MEANS, KS = (8, 31, 62), (3, 6), (0.2, 0.6), (0.05, 0.3, 0.7), (2, 3)
REPLICATES = 1_000
SLACK = 3 * np.sqrt(0.025 * 0.975 / REPLICATES)  # 3 Monte Carlo standard errors of a 2.5% tail


def _percentile_past(draws: np.ndarray, q: float, truth: float, *, above: bool) -> np.ndarray:
    """Per row of ``draws``: ``np.percentile(row, q) > truth`` (``above``) or ``< truth``, read
    from how many of the row's draws lie on the truth's side (one pass, no sort): numpy's
    linear quantile lies between the order statistics ``i`` and ``i + 1`` (``i`` the floor of
    ``q/100·(N − 1)``), so a row whose count of draws at or below (above: ≤; else <) the
    truth is away from ``i + 1`` is decided by it; the few rows near it by np.percentile."""
    i = int(np.floor(q / 100 * (draws.shape[1] - 1)))
    if above:
        count = np.count_nonzero(draws <= truth, axis=1)
        past = count <= i  # the i-th order statistic is already past the truth
    else:
        count = np.count_nonzero(draws < truth, axis=1)
        past = count >= i + 2  # so is the (i + 1)-th, from below
    near = np.flatnonzero(np.abs(count - (i + 1)) <= 1)  # decided by the interpolation
    if near.size:
        at = np.percentile(draws[near], q, axis=1)
        past[near] = at > truth if above else at < truth
    return past


def _tails_of_pass_hat_k(values: np.ndarray, w: np.ndarray, truth: float) -> tuple[float, float]:
    """The share of replicates (rows of per-task values, sorted) whose 95% interval, the 2.5%
    and 97.5% percentiles of :func:`posterior._pseudo_task_sims` (pass_hat_k's draws, its
    weights ``w``), lies above ``truth`` and below it: identical rows simulated once, in
    chunks that stay in cache (the same decisions as the percentiles of the full arrays)."""
    rows, inverse = np.unique(values, axis=0, return_inverse=True)
    ones = np.ones((1, values.shape[1]))  # pass_hat_k's trials: one per task
    above, below = np.empty(len(rows), bool), np.empty(len(rows), bool)
    for start in range(0, len(rows), 64):
        lows, highs = posterior._pseudo_task_sims(rows[start:start + 64], ones, w)
        above[start:start + 64] = _percentile_past(lows, 2.5, truth, above=True)
        below[start:start + 64] = _percentile_past(highs, 97.5, truth, above=False)
    inverse = np.ravel(inverse)
    return float(np.mean(above[inverse])), float(np.mean(below[inverse]))


def test_pass_hat_k_covers_the_mean_over_tasks_each_tail_in_bounds() -> None:
    """Tasks' chances from the Beta of each mean and ICC; the truth is E[p^k] over that Beta.
    Each tail of pass^k's 95% interval at most 2.5% plus 3 Monte Carlo standard errors (4.0%)
    from 31 tasks, 5% at 8. (With k = repeats a task's value is 0/1 and the interval is
    Clopper-Pearson on the tasks, up to simulation: at 62 tasks × 3, ICC 0.6, mean 0.7, k 3
    its exact upper tail is 2.29% and these 1,000 replicates read 3.6%.) Simulated with the
    weights and sums pass_hat_k uses (checked equal on each point's first replicate), each
    replicate's tails decided as the percentiles of its draws decide them
    (:func:`_tails_of_pass_hat_k`, checked against them on the first point)."""
    rng = np.random.default_rng(61)
    tails = {}
    weights = {tasks: posterior._task_weights(tasks, N_DRAWS, [SEED, 0]) for tasks in TASKS}
    for tasks, n, icc, mean, k in itertools.product(TASKS, REPEATS, ICCS, MEANS, KS):
        s = (1 - icc) / icc
        a, b = mean * s, (1 - mean) * s
        truth = float(np.prod([(a + j) / (a + b + j) for j in range(k)]))  # E[p^k], Beta
        wins = rng.binomial(n, rng.beta(a, b, size=(REPLICATES, tasks)))
        values = np.sort(sps.hypergeom.pmf(k, n, wins, k), axis=1)  # C(c, k) / C(n, k)
        w = weights[tasks]
        lows, highs = posterior._pseudo_task_sims(values[:1], np.ones((1, tasks)), w)
        one = stats.pass_hat_k([(n, int(c)) for c in wins[0]], k)
        assert (one.low, one.high) == pytest.approx(
            (np.percentile(lows, 2.5), np.percentile(highs, 97.5)), rel=1e-9, abs=1e-12)
        tails[(tasks, n, icc, mean, k)] = _tails_of_pass_hat_k(values, w, truth)
    above = max(tails, key=lambda p: tails[p][0])
    below = max(tails, key=lambda p: tails[p][1])
    text = (f"pass^k: above the truth at most {tails[above][0]:.3f} at {above}, below at most "
            f"{tails[below][1]:.3f} at {below} (tasks, repeats, ICC, mean, k)")
    print(text)
    for (tasks, *_), tail in tails.items():
        assert max(tail) <= (0.05 if tasks == 8 else 0.025 + SLACK), (text, tails)


def test_tails_by_counting_are_the_percentiles_of_the_full_draws() -> None:
    """The coverage test's shortcut decides every replicate as np.percentile of its draws
    does, at truths among the draws' own quantiles (where the interpolation decides)."""
    rng = np.random.default_rng(62)
    w = posterior._task_weights(8, N_DRAWS, [SEED, 0])
    values = np.sort(rng.choice([0.0, 1 / 6, 0.4, 1.0], size=(120, 8)), axis=1)
    lows, highs = posterior._pseudo_task_sims(values, np.ones_like(values), w)
    low, high = np.percentile(lows, 2.5, axis=1), np.percentile(highs, 97.5, axis=1)
    for truth in (0.1, 0.3, float(low[0]), float(high[1]), float(np.median(low))):
        expected = (float(np.mean(low > truth)), float(np.mean(high < truth)))
        assert _tails_of_pass_hat_k(values, w, truth) == expected
