"""F1 with its interval and paired difference: Jeffreys posteriors over the joint cells."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence

import numpy as np

from slmbench.core.stats.results import CONFIDENCE, N_DRAWS, SEED, Estimate, StatsInputError


def _bool_arrays(*arrays: Sequence[bool]) -> tuple[np.ndarray, ...]:
    out = tuple(np.asarray([bool(v) for v in a], dtype=int) for a in arrays)
    if len({x.shape for x in out}) != 1 or out[0].size == 0:
        raise StatsInputError("F1 needs equal-length, non-empty gold and prediction lists",
                              "pair every item's gold label with its prediction")
    return out


def _joint_cells(columns: tuple[np.ndarray, ...]) -> tuple[np.ndarray, np.ndarray]:
    """How many items show each 0/1 pattern of ``columns`` (gold, then predictions), and the
    patterns themselves (one row per cell, one column per input)."""
    k = len(columns)
    shifts = np.arange(k - 1, -1, -1)
    index = np.sum(np.stack(columns) << shifts[:, None], axis=0)
    counts = np.bincount(index, minlength=2 ** k).astype(float)
    return counts, (np.arange(2 ** k)[:, None] >> shifts) & 1


def _cell_f1(weights: np.ndarray, gold: np.ndarray, pred: np.ndarray) -> np.ndarray:
    """F1 of the positive class from joint-cell counts or probabilities (last axis: cells);
    0 where nothing is found (tp = 0)."""
    tp = weights @ (gold * pred)
    wrong = weights @ (gold != pred)  # fp + fn
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(tp > 0, 2 * tp / (2 * tp + wrong), 0.0)


_DIRICHLET_KEPT = 8  # the last draws kept (a page asks the same posterior several times)
_DIRICHLET_KEPT_BYTES = 16 * 2 ** 20  # larger draws are not kept
_dirichlet_kept: OrderedDict[tuple[bytes, int, tuple[int, ...]], np.ndarray] = OrderedDict()
_dirichlet_lock = threading.Lock()


def _dirichlet(alpha: np.ndarray, draws: int, seed: int | Sequence[int]) -> np.ndarray:
    """``draws`` rows of Dirichlet(``alpha``) from numpy's generator seeded by ``seed``: a pure
    function of its arguments, so the last few are kept and returned again (read-only) rather
    than redrawn; a TOST at three sizes, its paired interval and its posterior p ask the same
    draws (each 20,000 rows of gamma variates)."""
    alpha = np.ascontiguousarray(alpha, dtype=float)
    key = (alpha.tobytes(), int(draws), tuple(np.atleast_1d(seed).tolist()))
    with _dirichlet_lock:
        if key in _dirichlet_kept:
            _dirichlet_kept.move_to_end(key)
            return _dirichlet_kept[key]
    out = np.random.default_rng(seed).dirichlet(alpha, size=draws)
    out.flags.writeable = False
    if out.nbytes <= _DIRICHLET_KEPT_BYTES:
        with _dirichlet_lock:
            _dirichlet_kept[key] = out
            while len(_dirichlet_kept) > _DIRICHLET_KEPT:
                _dirichlet_kept.popitem(last=False)
    return out


def _jeffreys_cells(counts: np.ndarray, draws: int, seed: int) -> np.ndarray:
    """Posterior draws of cell probabilities: Dirichlet with ½ added to every cell (Jeffreys).
    Read-only (:func:`_dirichlet` keeps the last few)."""
    return _dirichlet(counts + 0.5, draws, seed)


def _posterior_f1(columns: tuple[np.ndarray, ...], name: str, confidence: float, draws: int,
                  seed: int) -> Estimate:
    """F1 of ``columns[1]`` against the gold ``columns[0]`` (minus the F1 of ``columns[2]``
    when given), with an interval from the Jeffreys posterior of the joint cells, simulated.

    The posterior always keeps mass on the cells no item fell in, so the interval stays open
    when F1 is 0 or 1 (where a bootstrap over items gives [0, 0]). With no positive anywhere
    (gold and predictions all negative) F1 is undefined: shown as 0 with the widest interval.
    """
    counts, pattern = _joint_cells(columns)
    gold, preds = pattern[:, 0], pattern[:, 1:].T

    def value(weights: np.ndarray) -> np.ndarray:
        f1s = [_cell_f1(weights, gold, pred) for pred in preds]
        return f1s[0] if len(f1s) == 1 else f1s[0] - f1s[1]

    estimate, n = float(value(counts)), int(counts.sum())
    floor = -1.0 if len(preds) > 1 else 0.0
    method = (f"{name}; Jeffreys Dirichlet posterior of the {counts.size} joint cells, "
              f"simulated ({draws:,} draws)")
    if counts @ (gold | preds.any(axis=0)) == 0:
        return Estimate(estimate=estimate, low=floor, high=1.0, method=method, n=n,
                        confidence=confidence, note="no item is positive in the gold labels "
                        "or a prediction: F1 is undefined here (shown as 0)")
    tail = (1 - confidence) / 2 * 100
    low, high = (float(v) for v in np.percentile(value(_jeffreys_cells(counts, draws, seed)),
                                                 [tail, 100 - tail]))
    return Estimate(estimate=estimate, low=min(low, estimate), high=max(high, estimate),
                    method=method, n=n, confidence=confidence)


def f1_score(gold: Sequence[bool], pred: Sequence[bool]) -> float:
    """F1 of the positive class (``gold``/``pred``: is the item positive); 0 when tp = 0."""
    counts, pattern = _joint_cells(_bool_arrays(gold, pred))
    return float(_cell_f1(counts, pattern[:, 0], pattern[:, 1]))


def f1_interval(gold: Sequence[bool], pred: Sequence[bool], *, confidence: float = CONFIDENCE,
                draws: int = N_DRAWS, seed: int = SEED) -> Estimate:
    """F1 of the positive class (``gold``/``pred``: is the item positive; 0 when no positive
    is found) with a posterior interval: the four cells (tp, fp, fn, tn) get a Jeffreys
    Dirichlet posterior and F1 = 2tp / (2tp + fp + fn) is simulated from it. Never
    zero-width; coverage at n = 5..20 in ``tests/core/test_coverage.py``."""
    return _posterior_f1(_bool_arrays(gold, pred), "f1", confidence, draws, seed)


def paired_f1_difference(gold: Sequence[bool], a: Sequence[bool], b: Sequence[bool], *,
                         confidence: float = CONFIDENCE, draws: int = N_DRAWS,
                         seed: int = SEED) -> Estimate:
    """F1(a) − F1(b) on the same items, with a posterior interval: the eight joint cells of
    (gold, a, b) get a Jeffreys Dirichlet posterior, as in :func:`f1_interval`."""
    return _posterior_f1(_bool_arrays(gold, a, b), "f1 difference", confidence, draws, seed)
