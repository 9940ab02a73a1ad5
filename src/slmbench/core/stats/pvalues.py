"""Fixed-n p-values on the scale of the fixed-n intervals (a Part B cell read in full)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from statsmodels.stats.proportion import (
    proportions_ztest,
)

from slmbench.core.stats.f1 import _bool_arrays, _cell_f1, _jeffreys_cells, _joint_cells
from slmbench.core.stats.mcnemar import _paired
from slmbench.core.stats.posterior import _bounded_cells
from slmbench.core.stats.proportions import _check_counts
from slmbench.core.stats.results import N_DRAWS, SEED, ScoreKind, StatsInputError

# fixed-n p-values on the scale of the fixed-n intervals above (a cell read in full)

def wilson_p_above(k: int, n: int, mu0: float) -> float:
    """Twice the one-sided score-test p-value of ``k/n`` above ``mu0`` (statsmodels): at most
    ``1 - CONFIDENCE`` exactly when :func:`wilson`'s lower bound is above ``mu0``."""
    _check_counts(k, n)
    if mu0 >= 1.0:
        return 1.0
    if mu0 <= 0.0:
        return 0.0 if k > 0 else 1.0
    _, p = proportions_ztest(k, n, value=mu0, alternative="larger", prop_var=mu0)
    return float(min(1.0, 2.0 * p))


def _posterior_p(sims: np.ndarray, null: float) -> float:
    """Twice the simulated posterior mass at or below ``null`` (the percentile interval's
    lower bound lies above ``null`` when this is below ``1 - confidence``)."""
    return float(min(1.0, 2.0 * np.mean(sims <= null)))


def bounded_mean_p_above(values: Sequence[float], mu0: float, *,
                         bounds: tuple[float, float] = (0.0, 1.0), draws: int = N_DRAWS,
                         seed: int = SEED) -> float:
    """The p-value matching :func:`bounded_mean`'s interval (same posterior, same draws):
    twice its posterior probability that the mean is at most ``mu0``."""
    counts, cells = _bounded_cells([np.asarray(values, dtype=float)], bounds)
    return _posterior_p(_jeffreys_cells(counts, draws, seed) @ cells[:, 0], mu0)


def paired_bounded_p_above(a: Sequence[float], b: Sequence[float], *,
                           bounds: tuple[float, float] = (0.0, 1.0), draws: int = N_DRAWS,
                           seed: int = SEED) -> float:
    """The p-value matching :func:`paired_bounded_difference`'s interval: twice its posterior
    probability that the mean of ``a - b`` is at most 0."""
    x, y = _paired(a, b)
    counts, cells = _bounded_cells([x, y], bounds)
    return _posterior_p(_jeffreys_cells(counts, draws, seed) @ (cells[:, 0] - cells[:, 1]), 0.0)


def _f1_sims(columns: tuple[np.ndarray, ...], draws: int, seed: int) -> np.ndarray | None:
    """Posterior draws of :func:`_posterior_f1`'s value (None: F1 undefined, no positive)."""
    counts, pattern = _joint_cells(columns)
    gold, preds = pattern[:, 0], pattern[:, 1:].T
    if counts @ (gold | preds.any(axis=0)) == 0:
        return None
    weights = _jeffreys_cells(counts, draws, seed)
    f1s = [_cell_f1(weights, gold, pred) for pred in preds]
    return f1s[0] if len(f1s) == 1 else f1s[0] - f1s[1]


def f1_p_above(gold: Sequence[bool], pred: Sequence[bool], mu0: float, *, draws: int = N_DRAWS,
               seed: int = SEED) -> float:
    """The p-value matching :func:`f1_interval`: twice its posterior probability that F1 is
    at most ``mu0`` (1 when F1 is undefined)."""
    sims = _f1_sims(_bool_arrays(gold, pred), draws, seed)
    return 1.0 if sims is None else _posterior_p(sims, mu0)


def paired_f1_p_above(gold: Sequence[bool], a: Sequence[bool], b: Sequence[bool], *,
                      draws: int = N_DRAWS, seed: int = SEED) -> float:
    """The p-value matching :func:`paired_f1_difference`: twice its posterior probability that
    F1(a) - F1(b) is at most 0 (1 when F1 is undefined)."""
    sims = _f1_sims(_bool_arrays(gold, a, b), draws, seed)
    return 1.0 if sims is None else _posterior_p(sims, 0.0)


def fixed_p_values(kind: ScoreKind, model: Sequence[float] | Sequence[bool],
                   baseline: Sequence[float] | Sequence[bool], tau: float, *,
                   gold: Sequence[bool] | None = None) -> tuple[float, float]:
    """A score read in full: the fixed-n p-values of "above ``tau``" and "above the baseline
    on the same items", each from the method of its fixed-n interval. ``kind`` "binary"
    (``model``, ``baseline``: per-item 0/1; Wilson's score test) or "bounded" (per-item values
    in [0, 1]; the bounded mean's posterior), the pair from the paired bounded posterior;
    "f1": ``model`` and ``baseline`` are the predictions of the positive class and ``gold``
    the truth, both from the F1 posterior."""
    if kind == "f1":
        if gold is None:
            raise StatsInputError("an F1 p-value needs the gold labels", "pass gold=")
        return (f1_p_above(gold, model, tau),  # type: ignore[arg-type]
                paired_f1_p_above(gold, model, baseline))  # type: ignore[arg-type]
    values = np.asarray(model, dtype=float)
    p_tau = (wilson_p_above(round(float(values.sum())), len(values), tau)
             if kind == "binary" else bounded_mean_p_above(values, tau))
    return p_tau, paired_bounded_p_above(values, baseline)  # type: ignore[arg-type]
