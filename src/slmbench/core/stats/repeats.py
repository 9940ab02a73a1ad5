"""Repeats of a task: pass@k, pass^k, the per-task rate and flips."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from scipy.special import comb

from slmbench.core.stats.posterior import Draws, confidence_draws, mean_of_draws
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


def repeat_draws(counts: Sequence[tuple[int, int]], of_p: Callable[[np.ndarray], np.ndarray],
                 *, draws: int = N_DRAWS, seed: int = SEED, stream: int = 0) -> Draws:
    """Draws of the mean over tasks of ``of_p(p)``; ``counts``: ``(repeats n, successes c)``.

    Each task's chance p comes from its :func:`confidence_draws` (streams ``stream``,
    ``stream + 1``, ...); ``of_p`` is increasing (p^k for pass^k).
    """
    parts = [confidence_draws(c, n, draws=draws, seed=seed, stream=stream + i).map(of_p)
             for i, (n, c) in enumerate(counts)]
    return Draws(np.mean([d.low for d in parts], axis=0),
                 np.mean([d.high for d in parts], axis=0))


def _over_tasks(counts: Sequence[tuple[int, int]], k: int, name: str,
                item: Callable[[int, int, int], float], of_p: Callable[[np.ndarray], np.ndarray],
                confidence: float, draws: int, seed: int) -> Estimate:
    vals = [item(n, c, k) for n, c in counts]
    sims = repeat_draws(counts, of_p, draws=draws, seed=seed)
    return mean_of_draws([float(np.mean(vals))], [sims], n=len(counts),
                         method=f"{name} per task", confidence=confidence)


def per_task_rate(counts: Sequence[tuple[int, int]], *, confidence: float = CONFIDENCE,
                  draws: int = N_DRAWS, seed: int = SEED) -> Estimate:
    """Mean over tasks of each task's success rate (``(trials n, successes c)`` per task).

    The interval simulates every task's rate (:func:`repeat_draws`), so it stays open when
    every task scores the same (a bootstrap over tasks gives [0, 0] there).
    """
    _check_k(counts, 1)
    return _over_tasks(counts, 1, "mean success rate", pass_hat_k_item, lambda p: p,
                       confidence, draws, seed)


def pass_at_k(counts: Sequence[tuple[int, int]], k: int, *, confidence: float = CONFIDENCE,
              draws: int = N_DRAWS, seed: int = SEED) -> Estimate:
    """Mean unbiased pass@k over tasks; ``counts`` holds ``(repeats n, successes c)`` per task.

    The interval simulates each task's success chance from its confidence distributions
    (:func:`confidence_draws`) and takes the mean of 1 − (1 − p)^k: honest at 3 repeats,
    never zero-width.
    """
    _check_k(counts, k)
    return _over_tasks(counts, k, f"pass@{k} unbiased", pass_at_k_item,
                       lambda p: 1 - (1 - p) ** k, confidence, draws, seed)


def pass_hat_k(counts: Sequence[tuple[int, int]], k: int, *, confidence: float = CONFIDENCE,
               draws: int = N_DRAWS, seed: int = SEED) -> Estimate:
    """Mean pass^k over tasks (τ-bench): the chance that k fresh repeats all pass.

    Interval: each task's chance p from its confidence distributions, mean of p^k, simulated.
    ``pass_hat_k(counts, 1)`` is the mean per-task success rate with that interval.
    """
    _check_k(counts, k)
    return _over_tasks(counts, k, f"pass^{k}", pass_hat_k_item, lambda p: p ** k,
                       confidence, draws, seed)
