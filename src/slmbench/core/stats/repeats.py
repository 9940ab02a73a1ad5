"""Repeats of a task: pass@k, pass^k, the per-task rate and flips."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from scipy.special import comb

from slmbench.core.stats.posterior import Draws, _pseudo_task_draws, mean_of_draws
from slmbench.core.stats.proportions import _check_counts
from slmbench.core.stats.results import CONFIDENCE, N_DRAWS, SEED, Estimate, StatsInputError

# -- repeats: pass@k, pass^k, flips ----------------------------------------------------


def _check_k(counts: Sequence[tuple[int, int]], k: int) -> None:
    if k < 1:
        raise StatsInputError(f"k must be >= 1 (got {k})", "use k between 1 and the repeats")
    if not counts:
        raise StatsInputError("pass@k needs at least one task", "there is no data here")
    for n, c in counts:
        _check_counts(c, n)
        if n < k:
            raise StatsInputError(f"a task has {n} repeats, fewer than k={k}",
                                  "lower k or run more repeats")


def pass_at_k_item(n: int, c: int, k: int) -> float:
    """Unbiased pass@k of one task: P(at least one of k draws passes) = 1 − C(n−c,k)/C(n,k)."""
    return float(1.0 - comb(n - c, k, exact=True) / comb(n, k, exact=True))


def pass_hat_k_item(n: int, c: int, k: int) -> float:
    """pass^k of one task (τ-bench): P(all k draws pass) = C(c,k)/C(n,k)."""
    return float(comb(c, k, exact=True) / comb(n, k, exact=True))


def repeat_draws(counts: Sequence[tuple[int, int]], item: Callable[[int, int], float], *,
                 draws: int = N_DRAWS, seed: int = SEED, stream: int = 0) -> Draws:
    """Draws of the mean over tasks of a per-task value ``item(n, c)`` in [0, 1] (e.g. the
    task's pass^k, ``C(c, k) / C(n, k)``); ``counts``: ``(repeats n, successes c)``.

    The Bayesian bootstrap over the tasks with one pseudo-task at 0 (the lower bound's draws)
    or at 1 (the upper's), seeded by ``(seed, stream)``: the task-level interval of
    :func:`task_level_rate` on per-task values, each task weighing the same. The mean's
    uncertainty then shrinks as tasks are added, where averaging each task's Clopper-Pearson
    draws (the construction before issue #60) kept every task's +1 in the upper bound: 0 of
    3 on every task read [0, 29.9]% at 62 tasks and would still read about 26% at 620.
    """
    values = [item(n, c) for n, c in counts]
    return _pseudo_task_draws(values, draws=draws, seed=[seed, stream])


def _over_tasks(counts: Sequence[tuple[int, int]], k: int, name: str,
                item: Callable[[int, int, int], float], confidence: float, draws: int,
                seed: int) -> Estimate:
    sims = repeat_draws(counts, lambda n, c: item(n, c, k), draws=draws, seed=seed)
    return mean_of_draws([float(np.mean([item(n, c, k) for n, c in counts]))], [sims],
                         n=len(counts), method=f"{name} per task", confidence=confidence)


def per_task_rate(counts: Sequence[tuple[int, int]], *, confidence: float = CONFIDENCE,
                  draws: int = N_DRAWS, seed: int = SEED) -> Estimate:
    """Mean over tasks of each task's success rate (``(trials n, successes c)`` per task),
    each task weighing the same: the interval of :func:`repeat_draws` (with equal trials per
    task, the interval of ``task_level_rate``). It stays open when every task scores the
    same (a bootstrap over tasks gives [0, 0] there) and shrinks as tasks are added.
    """
    _check_k(counts, 1)
    return _over_tasks(counts, 1, "mean success rate", pass_hat_k_item, confidence, draws,
                       seed)


def pass_at_k(counts: Sequence[tuple[int, int]], k: int, *, confidence: float = CONFIDENCE,
              draws: int = N_DRAWS, seed: int = SEED) -> Estimate:
    """Mean unbiased pass@k over tasks; ``counts`` holds ``(repeats n, successes c)`` per task.

    The interval is :func:`repeat_draws`' over each task's unbiased pass@k: it covers the
    mean over tasks like these and is never zero-width.
    """
    _check_k(counts, k)
    return _over_tasks(counts, k, f"pass@{k} unbiased", pass_at_k_item, confidence, draws,
                       seed)


def pass_hat_k(counts: Sequence[tuple[int, int]], k: int, *, confidence: float = CONFIDENCE,
               draws: int = N_DRAWS, seed: int = SEED) -> Estimate:
    """Mean pass^k over tasks (τ-bench): the chance that k fresh repeats all pass.

    The interval is :func:`repeat_draws`' over each task's ``C(c, k) / C(n, k)`` (unbiased
    for p^k). ``pass_hat_k(counts, 1)`` is :func:`per_task_rate`.
    """
    _check_k(counts, k)
    return _over_tasks(counts, k, f"pass^{k}", pass_hat_k_item, confidence, draws, seed)
