"""Anytime-valid inference, Part B: confidence sequences and p-values valid at a stopping time
chosen on the data.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

import numpy as np
from confseq.boundaries import (
    beta_binomial_log_mixture,
    gamma_exponential_log_mixture,
    gamma_exponential_mixture_bound,
)

from slmbench.core.stats.f1 import f1_interval, paired_f1_difference
from slmbench.core.stats.mcnemar import _paired, mcnemar
from slmbench.core.stats.posterior import bounded_mean, paired_bounded_difference
from slmbench.core.stats.proportions import wilson
from slmbench.core.stats.pvalues import fixed_p_values
from slmbench.core.stats.resampling import confidence_sequence
from slmbench.core.stats.results import (
    CONFIDENCE,
    OUTSIDE_NOTE,
    Estimate,
    ScoreKind,
    StatsInputError,
    _Record,
)

# -- anytime-valid and family-wise inference, Part B -------------------------------------
#
# A Part B cell is read until a confidence sequence settles it, so its verdict needs bounds
# and p-values that stay valid at a stopping time chosen on the data, and a matrix of cells
# needs family-wise control (Holm over :func:`adjust_pvalues`). Everything below is built on
# ``confseq.boundaries`` (the only part of confseq 0.0.11 that works with numpy 2).
#
# p-values are on the scale of the project's two-sided 95% intervals: a p-value is at most
# ``1 - CONFIDENCE`` exactly when the interval's lower bound lies above the null value (twice
# a one-sided p-value where the interval is two one-sided bounds at 2.5%).


CONSTANT_NULL = 0.95  # a cell is constant once one answer's share is shown above this
PAIRED_RANGE = 2.0  # a difference of two values in [0, 1] lies in [-1, 1]
PAIRED_TUNING = 0.25  # the paired mixture is tightest at intrinsic time 0.25 x horizon
_EDGE = 1e-9  # a null mean of 0 or 1 is moved this far inside (the mixture needs g, h > 0)


class AnytimeTest(_Record):
    """An anytime-valid interval at the items read and the anytime-valid p-value against a
    null value (``null``): the p-value is at most ``1 - confidence`` exactly when the interval
    has, at some time so far, put its lower bound above ``null``."""

    interval: Estimate
    null: float
    p_value: float


class ShareTest(_Record):
    """Whether one answer is given to at least ``share`` of a cell's items, shown anytime-
    validly and over every answer of a space of ``space`` answers (Bonferroni).

    ``answer``: the commonest answer so far; ``observed``: its share; ``p_value``: the
    Bonferroni-adjusted anytime-valid p-value of "some answer's share is above ``share``";
    ``shown``: ``p_value <= 1 - confidence``."""

    answer: str | None
    observed: float | None
    share: float
    space: int
    n: int
    p_value: float
    shown: bool
    method: str


def _clip_null(mu0: float) -> float:
    return min(max(float(mu0), _EDGE), 1.0 - _EDGE)


def bernoulli_log_mixture(sums: np.ndarray | float, n: np.ndarray | float, mu0: float,
                          horizon: int, *, confidence: float = CONFIDENCE,
                          one_sided: bool = False) -> np.ndarray:
    """Log of the beta-binomial mixture martingale of :class:`ConfidenceSequence` (two-sided,
    tuned at ``horizon`` items and the same level) at the null mean ``mu0``, after ``n``
    values in [0, 1] summing to ``sums`` (arrays broadcast: one call evaluates a whole path
    or a whole table). Values in [0, 1] are sub-Bernoulli, so under a mean ``mu0`` it is a
    nonnegative supermartingale and ``P(ever >= log(1/a)) <= a`` (Ville). ``one_sided``: the
    one-sided mixture (only evidence of a mean above ``mu0``)."""
    g = _clip_null(mu0)
    h = 1.0 - g
    s, v = np.broadcast_arrays(
        np.asarray(sums, dtype=float) - np.asarray(n, dtype=float) * g,
        np.asarray(n, dtype=float) * g * h)
    try:
        return np.asarray(beta_binomial_log_mixture(s, v, horizon * g * h, g, h,
                                                    1.0 - confidence, one_sided), dtype=float)
    except ValueError:  # boost's incomplete beta refuses some points: those give no evidence
        flat = np.empty(s.size)
        for i, (si, vi) in enumerate(zip(s.ravel(), v.ravel(), strict=True)):
            try:
                flat[i] = float(beta_binomial_log_mixture(si, vi, horizon * g * h, g, h,
                                                          1.0 - confidence, one_sided))
            except ValueError:
                flat[i] = -math.inf
        return flat.reshape(s.shape)


def anytime_p_above(values: Sequence[float], mu0: float, *, horizon: int,
                    confidence: float = CONFIDENCE) -> float:
    """Anytime-valid p-value that the mean of ``values`` (in [0, 1], read in this order) is
    above ``mu0``: ``min(1, 1 / max M_t)`` over the times t at which the running mean is above
    ``mu0``, M the mixture of :func:`bernoulli_log_mixture`. It is at most ``1 - confidence``
    exactly when :func:`confidence_sequence`'s lower bound has passed ``mu0``."""
    x = np.asarray(values, dtype=float)
    if x.size == 0 or mu0 >= 1.0:
        return 1.0
    n = np.arange(1, x.size + 1, dtype=float)
    sums = np.cumsum(x)
    above = sums / n > mu0
    if not above.any():
        return 1.0
    logm = bernoulli_log_mixture(sums[above], n[above], mu0, horizon, confidence=confidence)
    return float(min(1.0, math.exp(-float(np.max(logm)))))


def anytime_mean(values: Sequence[float], *, null: float, horizon: int,
                 confidence: float = CONFIDENCE) -> AnytimeTest:
    """The :func:`confidence_sequence` of ``values`` at the items read, and the anytime-valid
    p-value that their mean is above ``null`` (:func:`anytime_p_above`)."""
    return AnytimeTest(interval=confidence_sequence(values, horizon=horizon,
                                                    confidence=confidence),
                       null=float(null), p_value=anytime_p_above(values, null, horizon=horizon,
                                                                 confidence=confidence))


def _paired_process(diffs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Running sums ``S_t`` of ``diffs`` (last axis: time) and the empirical-Bernstein variance
    process ``V_t = sum (d_i - dhat_{i-1})^2``, dhat the mean of the earlier differences (0
    before the first)."""
    d = np.asarray(diffs, dtype=float)
    s = np.cumsum(d, axis=-1)
    t = np.arange(1, d.shape[-1] + 1, dtype=float)
    prior = np.concatenate([np.zeros((*d.shape[:-1], 1)), (s / t)[..., :-1]], axis=-1)
    v = np.cumsum((d - prior) ** 2, axis=-1)
    return s, np.maximum(v, _EDGE)


def paired_log_mixture(diffs: np.ndarray, *, horizon: int,
                       confidence: float = CONFIDENCE) -> np.ndarray:
    """Log of the one-sided gamma-exponential mixture martingale (``confseq.boundaries``) for
    "the mean paired difference is above 0", at every time of ``diffs`` (values in [-1, 1];
    last axis: time, any leading axes are independent paths).

    Empirical Bernstein (Howard, Ramdas, McAuliffe and Sekhon 2021, Theorem 4): the running
    sum is sub-exponential with scale 2 (the range) and intrinsic time
    :func:`_paired_process`'s variance process; the mixture is tuned at ``PAIRED_TUNING x
    horizon`` and at the one-sided level ``(1 - confidence) / 2``."""
    s, v = _paired_process(diffs)
    return np.asarray(gamma_exponential_log_mixture(np.maximum(s, 0.0), v,
                                                    PAIRED_TUNING * horizon, PAIRED_RANGE,
                                                    (1.0 - confidence) / 2), dtype=float)


def anytime_paired_p(a: Sequence[float], b: Sequence[float], *, horizon: int,
                     confidence: float = CONFIDENCE) -> float:
    """Anytime-valid p-value that the mean of ``a - b`` (values in [0, 1], read in this order)
    is above 0: ``min(1, 2 / max M_t)``, M :func:`paired_log_mixture` (twice the one-sided
    value, the scale of a two-sided interval)."""
    x, y = _paired(a, b)
    logm = paired_log_mixture(x - y, horizon=horizon, confidence=confidence)
    return float(min(1.0, 2.0 * math.exp(-float(np.max(logm)))))


def anytime_paired_difference(a: Sequence[float], b: Sequence[float], *, horizon: int,
                              confidence: float = CONFIDENCE) -> AnytimeTest:
    """Mean of ``a - b`` (values in [0, 1], paired item by item, read in this order) with an
    anytime-valid ``confidence`` interval, and the anytime-valid p-value that the mean
    difference is above 0.

    The interval is two one-sided empirical-Bernstein bounds (each at ``(1 - confidence)/2``,
    :func:`paired_log_mixture`'s boundary from ``confseq``), intersected over time; the
    p-value is ``min(1, 2 / max M_t)``, so it is at most ``1 - confidence`` exactly when the
    lower bound has passed 0."""
    x, y = _paired(a, b)
    d = x - y
    s, v = _paired_process(d)
    level = (1.0 - confidence) / 2
    u = np.asarray(gamma_exponential_mixture_bound(v, level, PAIRED_TUNING * horizon,
                                                   PAIRED_RANGE, level), dtype=float)
    t = np.arange(1, d.size + 1, dtype=float)
    low = float(max(-1.0, np.max((s - u) / t)))
    high = float(min(1.0, np.min((s + u) / t)))
    estimate = float(d.mean())
    p = anytime_paired_p(x, y, horizon=horizon, confidence=confidence)
    interval = Estimate(estimate=estimate, low=low, high=high, n=int(d.size),
                        confidence=confidence, note=outside_note(estimate, low, high),
                        method=f"confidence sequence (confseq gamma-exponential mixture, "
                               f"empirical Bernstein, paired, horizon {horizon})")
    return AnytimeTest(interval=interval, null=0.0, p_value=p)


def outside_note(estimate: float, low: float | None, high: float | None) -> str | None:
    """Words for an anytime-valid interval that no longer holds its own estimate (an
    intersected sequence settled early, and the later items moved the estimate out of it);
    None where it holds it."""
    if (low is not None and estimate < low) or (high is not None and estimate > high):
        return OUTSIDE_NOTE
    return None


def constant_share(answers: Sequence[str], *, space: int, horizon: int,
                   share: float = CONSTANT_NULL, confidence: float = CONFIDENCE
                   ) -> ShareTest:
    """Is one answer given to at least ``share`` of the items, anytime-validly?

    For every answer seen, the one-sided beta-binomial mixture (:func:`bernoulli_log_mixture`,
    ``one_sided``, tuned at level ``(1 - confidence) / space``) tests "its share is above
    ``share``" over the answers read so far, in order; the smallest p-value times ``space``
    (Bonferroni over every answer the cell could give, so valid whichever answer turns out
    commonest) is compared with ``1 - confidence``."""
    if space < 1:
        raise StatsInputError(f"an answer space needs at least one answer, got {space}",
                              "count the options (and the format failure) an item can get")
    n = len(answers)
    method = (f"anytime-valid (confseq beta-binomial mixture, one-sided, horizon {horizon}), "
              f"Bonferroni over {space} answers")
    if n == 0:
        return ShareTest(answer=None, observed=None, share=share, space=space, n=0,
                         p_value=1.0, shown=False, method=method)
    counts = Counter(answers)
    top = max(sorted(counts), key=lambda a: counts[a])
    t = np.arange(1, n + 1, dtype=float)
    best = -math.inf
    level = 1.0 - (1.0 - confidence) / space
    for answer in counts:
        hits = np.cumsum([a == answer for a in answers], dtype=float)
        above = hits / t > share
        if above.any():
            logm = bernoulli_log_mixture(hits[above], t[above], share, horizon,
                                         confidence=level, one_sided=True)
            best = max(best, float(np.max(logm)))
    p = float(min(1.0, space * math.exp(-best))) if best > -math.inf else 1.0
    return ShareTest(answer=top, observed=counts[top] / n, share=share, space=space, n=n,
                     p_value=p, shown=p <= 1.0 - confidence, method=method)




def anytime_paired_binary(a: Sequence[bool], b: Sequence[bool], *, horizon: int,
                          confidence: float = CONFIDENCE) -> AnytimeTest:
    """Paired difference of two pass rates on the same items, read in this order (0/1
    outcomes), with an anytime-valid interval and the anytime-valid p-value that ``a`` passes
    more often: a sequential McNemar test.

    The interval is what the sequences give, intersected over time, never widened to hold the
    final estimate: where the items read later move the estimate out of it, its ``note``
    says so (:func:`outside_note`); the bound is still valid at this stop.

    On the items where the two disagree, ``a``'s share of the wins q is followed by a
    two-sided beta-binomial confidence sequence (:class:`ConfidenceSequence`'s mixture, at
    level ``1 - (1 - confidence)/2``, tuned at ``PAIRED_TUNING x horizon`` disagreements);
    "``a`` better" is q > 1/2, whose p-value ``min(1, 2 / max M)`` is at most
    ``1 - confidence`` exactly when that sequence's lower bound has passed 1/2. The difference
    is (share of items that disagree) x (2q - 1): its interval combines q's sequence with the
    share's own sequence at the items read (each at half the error), so it lies above 0
    when q's lower bound is above 1/2.
    """
    x, y = _paired([float(bool(v)) for v in a], [float(bool(v)) for v in b])
    split = 1.0 - (1.0 - confidence) / 2
    disagree = x != y
    wins = x[disagree]
    tuned = max(1, round(PAIRED_TUNING * horizon))
    share = confidence_sequence(disagree.astype(float), horizon=horizon, confidence=split)
    p = anytime_paired_binary_p(x, y, horizon=horizon, confidence=confidence)
    if wins.size:
        q = confidence_sequence(wins, horizon=tuned, confidence=split)
        q_low, q_high = float(q.low or 0.0), float(q.high if q.high is not None else 1.0)
    else:
        q_low, q_high = 0.0, 1.0
    s_low, s_high = float(share.low or 0.0), float(share.high if share.high is not None
                                                    else 1.0)
    low = (2 * q_low - 1) * (s_low if q_low > 0.5 else s_high)
    high = (2 * q_high - 1) * (s_high if q_high > 0.5 else s_low)
    estimate = float(np.mean(x - y))
    interval = Estimate(estimate=estimate, low=low, high=high, n=int(x.size),
                        confidence=confidence, note=outside_note(estimate, low, high),
                        method=f"confidence sequence (sequential McNemar: confseq beta-binomial "
                               f"mixture on the {int(wins.size)} disagreements, horizon "
                               f"{horizon})")
    return AnytimeTest(interval=interval, null=0.0, p_value=p)


def anytime_paired_binary_p(a: Sequence[float], b: Sequence[float], *, horizon: int,
                            confidence: float = CONFIDENCE) -> float:
    """The p-value of :func:`anytime_paired_binary` alone (no interval): twice the
    anytime-valid p-value of "``a`` wins more than half of the disagreements"."""
    x, y = _paired([float(bool(v)) for v in a], [float(bool(v)) for v in b])
    wins = x[x != y]
    if not wins.size:
        return 1.0
    p = anytime_p_above(wins, 0.5, horizon=max(1, round(PAIRED_TUNING * horizon)),
                        confidence=1.0 - (1.0 - confidence) / 2)
    return float(min(1.0, 2.0 * p))


# -- a Part B cell: its score against a bar and a baseline, in one record ------------------


class CellTest(_Record):
    """A Part B cell's statistics (:func:`cell_test`): the score with its interval and the
    p-value of "above the bar" (``p_tau``), the paired difference from the baseline on the
    same items with its interval and the p-value of "above 0" (``p_paired``), each
    anytime-valid (``anytime``) or fixed-n; beside anytime-valid ones, the fixed-n paired
    result on the items read (``fixed_diff``, ``fixed_p_paired``; None for a fixed-n cell,
    whose own result it is); and whether one answer is shown constant (``constant``)."""

    anytime: bool
    score: Estimate
    diff: Estimate
    p_tau: float
    p_paired: float
    fixed_diff: Estimate | None
    fixed_p_paired: float | None
    constant: ShareTest


def cell_test(kind: ScoreKind, model: Sequence[float] | Sequence[bool],
              baseline: Sequence[float] | Sequence[bool], *, tau: float, anytime: bool,
              horizon: int, answers: Sequence[str], space: int, share: float = CONSTANT_NULL,
              gold: Sequence[bool] | None = None) -> CellTest:
    """Everything a Part B cell's verdict needs, on the items read, in one record.

    ``kind`` (:data:`ScoreKind`): "binary" or "bounded" (``model`` and ``baseline``: the
    per-item values), "f1" (``model`` and ``baseline``: each item's prediction of the positive
    class; ``gold``: the truth). ``anytime`` (a cell read until decided; never F1): the score's
    confidence sequence against ``tau`` (:func:`anytime_mean`) and the paired one (binary:
    :func:`anytime_paired_binary`, a sequential McNemar test; bounded:
    :func:`anytime_paired_difference`), at ``horizon`` items; beside them the fixed-n paired
    difference (``paired_bounded_difference``) and its p-value (binary: McNemar's; bounded:
    ``fixed_p_values``'). Else fixed-n: the score by Wilson (binary), the bounded mean's
    posterior or the F1 posterior, the paired difference from the same posterior over the
    pairs, and both p-values from :func:`~slmbench.core.stats.pvalues.fixed_p_values`.
    ``constant``: :func:`constant_share` of the ``answers`` over a space of ``space``
    answers at ``horizon``."""
    if anytime:
        if kind == "f1":
            raise StatsInputError("F1 is not a mean of per-item values: no anytime-valid test",
                                  "test an F1 cell read in full (anytime=False)")
        x, y = np.asarray(model, dtype=float), np.asarray(baseline, dtype=float)
        fixed_p = (mcnemar(x > 0.5, y > 0.5).p_value if kind == "binary"
                   else fixed_p_values(kind, x, y, tau)[1])
        fixed_diff = paired_bounded_difference(x, y)
        absolute = anytime_mean(x, null=tau, horizon=horizon)
        pair = (anytime_paired_binary(x > 0.5, y > 0.5, horizon=horizon) if kind == "binary"
                else anytime_paired_difference(x, y, horizon=horizon))
        score, diff, p_tau, p_paired = (absolute.interval, pair.interval, absolute.p_value,
                                        pair.p_value)
    else:
        fixed_diff, fixed_p = None, None  # the fixed-n result is the one that decides
        if kind == "f1":
            if gold is None:
                raise StatsInputError("an F1 cell needs the gold labels", "pass gold=")
            score = f1_interval(gold, model)  # type: ignore[arg-type]
            diff = paired_f1_difference(gold, model, baseline)  # type: ignore[arg-type]
        else:
            x, y = np.asarray(model, dtype=float), np.asarray(baseline, dtype=float)
            score = (wilson(round(float(x.mean()) * len(x)), len(x)) if kind == "binary"
                     else bounded_mean(x))
            diff = paired_bounded_difference(x, y)
        p_tau, p_paired = fixed_p_values(kind, model, baseline, tau, gold=gold)
    shown = constant_share(answers, space=space, horizon=horizon, share=share)
    return CellTest(anytime=anytime, score=score, diff=diff, p_tau=p_tau, p_paired=p_paired,
                    fixed_diff=fixed_diff, fixed_p_paired=fixed_p, constant=shown)
