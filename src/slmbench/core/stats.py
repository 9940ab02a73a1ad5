"""Statistics for slmbench: thin, documented wrappers over scipy and statsmodels.

Every function returns a frozen pydantic record, so a number always travels
with its interval, the method that produced it and the sample size behind it.
Nothing here re-implements a test that scipy or statsmodels already provides;
the wrappers only pick sound defaults (Wilson intervals, exact tests for small
counts, a fixed bootstrap seed, >= 10,000 resamples) and handle edge cases
(0/n, n/n, n=1, all ties) with a value and a plain ``note`` instead of a crash
or a silent NaN.

See ``docs/statistics.md`` for which test answers which question.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Literal, NamedTuple

import numpy as np
from confseq.boundaries import bernoulli_confidence_interval
from pydantic import BaseModel, ConfigDict
from scipy import stats as sps
from scipy.special import comb
from statsmodels.stats.contingency_tables import mcnemar as sm_mcnemar
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.proportion import proportion_confint, proportion_effectsize

from slmbench.core.errors import SlmbenchError

CONFIDENCE = 0.95
N_RESAMPLES = 10_000
SEED = 20240611
N_DRAWS = 20_000  # posterior draws behind a simulated interval
EXACT_MCNEMAR_BELOW = 25  # discordant pairs under which McNemar uses the exact binomial

IntervalMethod = Literal["wilson", "clopper-pearson"]
Alternative = Literal["two-sided", "greater", "less"]


class StatsInputError(SlmbenchError):
    """Inputs a statistic cannot be computed from (k > n, mismatched lengths, ...)."""


class _Record(BaseModel):
    """A statistic's result: frozen, so a number cannot be changed once it has its interval."""

    model_config = ConfigDict(frozen=True)


class Estimate(_Record):
    """A point estimate with its confidence interval.

    ``estimate``/``low``/``high`` are None only when the quantity is undefined
    for the data (e.g. a correlation of constant values); ``note`` says why.
    """

    estimate: float | None
    low: float | None
    high: float | None
    method: str
    n: int
    confidence: float = CONFIDENCE
    note: str | None = None

    def formatted(self, *, percent: bool = True, digits: int | None = None, unit: str = "",
                  missing: str = "–") -> str:
        """``62.0 [48.1, 74.2]`` (``percent``: x100, 1 digit; else 2 digits); ``missing``
        when the estimate is undefined. ``unit`` follows the point estimate."""
        if self.estimate is None:
            return missing
        scale = 100.0 if percent else 1.0
        d = digits if digits is not None else (1 if percent else 2)
        text = f"{self.estimate * scale:.{d}f}{unit}"
        if self.low is not None and self.high is not None:
            text += f" [{self.low * scale:.{d}f}, {self.high * scale:.{d}f}]"
        return text


class TestResult(_Record):
    """A hypothesis test: statistic, p-value, method and sample size."""

    statistic: float | None
    p_value: float
    method: str
    n: int
    note: str | None = None


class Correlation(_Record):
    """A correlation coefficient with its p-value and a bootstrap interval."""

    estimate: float | None
    p_value: float | None
    low: float | None
    high: float | None
    method: Literal["pearson", "spearman"]
    interval_method: str
    n: int
    meaningful: bool
    note: str | None = None


class VsBest(_Record):
    """One model compared with the best model: Fisher exact test, adjusted p-values, Cohen's h."""

    model: str
    successes: int
    n: int
    accuracy: float
    best: str
    odds_ratio: float | None
    p_value: float
    p_bh: float
    p_holm: float
    cohens_h: float
    significant_bh: bool


class McNemarResult(_Record):
    """McNemar's test on paired binary outcomes: discordant counts and the p-value."""

    n: int
    both: int
    only_a: int
    only_b: int
    neither: int
    statistic: float | None
    p_value: float
    method: str


class TostResult(_Record):
    """Two one-sided tests for equivalence of paired values within ``(-margin, margin)``.

    ``interval`` is the interval that decided: the ``1 − 2·alpha`` (90% at alpha 0.05)
    interval of the mean difference, inside ``(−margin, margin)`` exactly when
    ``equivalent``. A 95% interval printed beside the verdict can cross the margin while the
    test rightly claims equivalence; print this one with it (:meth:`formatted_interval`).
    None where the test is undefined.
    """

    mean_difference: float
    margin: float
    p_value: float | None
    p_lower: float | None
    p_upper: float | None
    equivalent: bool
    alpha: float
    method: str
    n: int
    note: str | None = None
    interval: tuple[float, float] | None = None

    @property
    def confidence(self) -> float:
        """The deciding interval's level, ``1 − 2·alpha``."""
        return 1 - 2 * self.alpha

    def formatted_interval(self, *, percent: bool = True, level: bool = True) -> str:
        """``90% CI [-9.2, 9.2]`` (points when ``percent``; ``[-9.2, 9.2]`` without
        ``level``), or ``–`` when undefined."""
        if self.interval is None:
            return "–"
        scale, digits = (100, 1) if percent else (1, 3)
        low, high = (f"{scale * v:.{digits}f}" for v in self.interval)
        return (f"{100 * self.confidence:g}% CI " if level else "") + f"[{low}, {high}]"


class FlipRate(_Record):
    """Share of items whose outcome is not the same on every repeat."""

    rate: Estimate
    flipped: list[str]
    items: int
    per_item: dict[str, float]  # minority share of each item's repeats: 0 = stable, 0.5 = coin flip


# -- proportions ---------------------------------------------------------------


def _check_counts(k: int, n: int) -> None:
    if n < 1:
        raise StatsInputError(f"a proportion needs n >= 1 trials (got n={n})",
                              "there is no data for this cell; report it as missing")
    if not 0 <= k <= n:
        raise StatsInputError(f"successes must be between 0 and n (got k={k}, n={n})",
                              "count successes out of the same trials as n")


def proportion(k: int, n: int, *, method: IntervalMethod = "wilson",
               confidence: float = CONFIDENCE) -> Estimate:
    """Share ``k/n`` with a Wilson (default) or Clopper-Pearson interval (statsmodels)."""
    _check_counts(k, n)
    sm_method = "beta" if method == "clopper-pearson" else "wilson"
    low, high = proportion_confint(k, n, alpha=1 - confidence, method=sm_method)
    # both intervals reach 0 at k=0 and 1 at k=n exactly; remove float round-off there
    low = 0.0 if k == 0 else float(max(0.0, low))
    high = 1.0 if k == n else float(min(1.0, high))
    return Estimate(estimate=k / n, low=low, high=high,
                    method=method, n=n, confidence=confidence)


def wilson(k: int, n: int, *, confidence: float = CONFIDENCE) -> Estimate:
    """Wilson score interval for ``k`` successes in ``n`` trials."""
    return proportion(k, n, method="wilson", confidence=confidence)


def clopper_pearson(k: int, n: int, *, confidence: float = CONFIDENCE) -> Estimate:
    """Exact (Clopper-Pearson) interval for ``k`` successes in ``n`` trials."""
    return proportion(k, n, method="clopper-pearson", confidence=confidence)


def binomial_test(k: int, n: int, *, p0: float = 0.5, alternative: Alternative = "two-sided",
                  confidence: float = CONFIDENCE) -> tuple[TestResult, Estimate]:
    """Exact binomial test of ``k/n`` against ``p0`` and the exact interval (scipy)."""
    _check_counts(k, n)
    res = sps.binomtest(k, n, p0, alternative=alternative)
    ci = res.proportion_ci(confidence_level=confidence, method="exact")
    test = TestResult(statistic=k / n, p_value=float(res.pvalue),
                      method=f"exact binomial vs p0={p0} ({alternative})", n=n)
    est = Estimate(estimate=k / n, low=float(ci.low), high=float(ci.high),
                   method="clopper-pearson", n=n, confidence=confidence)
    return test, est


def cohens_h(p1: float, p2: float) -> float:
    """Cohen's h effect size between two proportions: 2·asin(√p1) − 2·asin(√p2)."""
    for p in (p1, p2):
        if not 0.0 <= p <= 1.0:
            raise StatsInputError(f"Cohen's h needs proportions in [0, 1] (got {p})",
                                  "pass shares, not percentages or counts")
    return float(proportion_effectsize(p1, p2))


def fisher_exact(k1: int, n1: int, k2: int, n2: int,
                 alternative: Alternative = "two-sided") -> TestResult:
    """Fisher's exact test of ``k1/n1`` against ``k2/n2``; statistic is the odds ratio."""
    _check_counts(k1, n1)
    _check_counts(k2, n2)
    table = [[k1, n1 - k1], [k2, n2 - k2]]
    odds, p = sps.fisher_exact(table, alternative=alternative)
    odds_f = float(odds)
    return TestResult(statistic=odds_f if math.isfinite(odds_f) else None, p_value=float(p),
                      method=f"fisher exact ({alternative})", n=n1 + n2,
                      note=None if math.isfinite(odds_f) else "odds ratio is infinite "
                      "(a zero cell); the p-value is still exact")


def adjust_pvalues(p_values: Sequence[float], method: Literal["fdr_bh", "holm"] = "fdr_bh"
                   ) -> list[float]:
    """Multiple-comparison adjusted p-values (statsmodels ``multipletests``)."""
    if not p_values:
        return []
    return [float(p) for p in multipletests(list(p_values), method=method)[1]]


def compare_to_best(counts: Mapping[str, tuple[int, int]], *, alpha: float = 0.05
                    ) -> list[VsBest]:
    """Fisher exact test of every model against the most accurate one.

    ``counts`` maps a name to ``(successes, trials)``. The best model is the
    one with the highest accuracy (ties broken by name); it is compared with
    nothing and gets p = 1. The other p-values are adjusted with
    Benjamini-Hochberg and, separately, Holm.
    """
    if not counts:
        return []
    for k, n in counts.values():
        _check_counts(k, n)
    best = max(sorted(counts), key=lambda m: counts[m][0] / counts[m][1])
    kb, nb = counts[best]
    others = [m for m in sorted(counts) if m != best]
    tests = {m: fisher_exact(counts[m][0], counts[m][1], kb, nb) for m in others}
    raw = [tests[m].p_value for m in others]
    bh = dict(zip(others, adjust_pvalues(raw, "fdr_bh"), strict=True))
    holm = dict(zip(others, adjust_pvalues(raw, "holm"), strict=True))
    out: list[VsBest] = []
    for m in sorted(counts):
        k, n = counts[m]
        is_best = m == best
        out.append(VsBest(
            model=m, successes=k, n=n, accuracy=k / n, best=best,
            odds_ratio=None if is_best else tests[m].statistic,
            p_value=1.0 if is_best else tests[m].p_value,
            p_bh=1.0 if is_best else bh[m], p_holm=1.0 if is_best else holm[m],
            cohens_h=cohens_h(k / n, kb / nb),
            significant_bh=False if is_best else bh[m] < alpha,
        ))
    return out


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
        return Estimate(estimate=self.total / self.n, low=self.low, high=self.high, n=self.n,
                        method=self._method(), confidence=self.confidence)

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


def _jeffreys_cells(counts: np.ndarray, draws: int, seed: int) -> np.ndarray:
    """Posterior draws of cell probabilities: Dirichlet with ½ added to every cell (Jeffreys)."""
    return np.random.default_rng(seed).dirichlet(counts + 0.5, size=draws)


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


# -- correlation -----------------------------------------------------------------

MIN_CORRELATION_N = 4
EXACT_CORRELATION_MAX_N = 8  # up to 8! = 40,320 orderings: exact permutation p-value


def _correlation_p(x: np.ndarray, y: np.ndarray, method: str) -> float:
    """Two-sided p-value: exact permutation test for n <= 8, else scipy's t-based value.

    The asymptotic p-value is badly wrong for tiny n (a perfect rank order of
    4 points gets p = 0 instead of the exact 1/12), and model comparisons
    usually have few models.
    """
    if method == "spearman":
        x, y = sps.rankdata(x), sps.rankdata(y)
    if x.size <= EXACT_CORRELATION_MAX_N:
        perm = sps.PermutationMethod(n_resamples=math.factorial(int(x.size)))
        return float(sps.pearsonr(x, y, method=perm).pvalue)
    return float(sps.pearsonr(x, y).pvalue)


def correlation(x: Sequence[float], y: Sequence[float], *,
                method: Literal["pearson", "spearman"] = "pearson",
                confidence: float = CONFIDENCE, n_resamples: int = N_RESAMPLES,
                seed: int = SEED) -> Correlation:
    """Pearson or Spearman correlation with its p-value (scipy) and a paired bootstrap interval.

    The p-value is exact (every permutation) for up to 8 points, else scipy's.

    With fewer than 4 points the coefficient is still reported but marked not
    meaningful; with constant input it is undefined (None) and the note says why.
    """
    xa, ya = _paired(x, y)
    n = int(xa.size)
    meaningful = n >= MIN_CORRELATION_N
    small = None if meaningful else (
        f"only {n} points: a correlation needs at least {MIN_CORRELATION_N} to mean anything")
    if n < 3 or np.ptp(xa) == 0 or np.ptp(ya) == 0:
        why = "fewer than 3 points" if n < 3 else "one variable is constant"
        return Correlation(estimate=None, p_value=None, low=None, high=None, method=method,
                           interval_method="none", n=n, meaningful=False,
                           note=f"correlation undefined: {why}")
    if method == "pearson":
        r = float(sps.pearsonr(xa, ya).statistic)
    else:
        r = float(sps.spearmanr(xa, ya).statistic)
    p = _correlation_p(xa, ya, method)

    def stat(u: np.ndarray, v: np.ndarray, axis: int = -1) -> np.ndarray:
        # vectorised over resamples; Spearman's rho is Pearson's r of the ranks.
        # A constant resample gives NaN, which bootstrap_interval leaves out.
        if method == "spearman":
            u, v = sps.rankdata(u, axis=axis), sps.rankdata(v, axis=axis)
        return sps.pearsonr(u, v, axis=axis).statistic

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        low, high, imethod = bootstrap_interval((xa, ya), stat, paired=True, vectorized=True,
                                                confidence=confidence,
                                                n_resamples=n_resamples, seed=seed)
    return Correlation(estimate=r, p_value=p, low=low, high=high, method=method,
                       interval_method=imethod, n=n, meaningful=meaningful, note=small)


# -- paired model-vs-model --------------------------------------------------------


def _paired(a: Sequence[float], b: Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if x.shape != y.shape or x.ndim != 1:
        raise StatsInputError(f"paired data needs two equal-length lists (got {x.shape} and "
                              f"{y.shape})", "pair the values item by item")
    if x.size == 0:
        raise StatsInputError("paired data is empty", "there are no shared items to compare")
    return x, y


def mcnemar(a: Sequence[bool], b: Sequence[bool]) -> McNemarResult:
    """McNemar's test of two models' pass/fail on the same items (statsmodels).

    Exact (binomial) when fewer than 25 pairs disagree, else chi-square with
    continuity correction. With no disagreement at all, p = 1.
    """
    x, y = _paired([bool(v) for v in a], [bool(v) for v in b])
    both = int(np.sum((x == 1) & (y == 1)))
    only_a = int(np.sum((x == 1) & (y == 0)))
    only_b = int(np.sum((x == 0) & (y == 1)))
    neither = int(np.sum((x == 0) & (y == 0)))
    discordant = only_a + only_b
    exact = discordant < EXACT_MCNEMAR_BELOW
    res = sm_mcnemar([[both, only_a], [only_b, neither]], exact=exact, correction=True)
    stat = float(res.statistic)
    return McNemarResult(
        n=int(x.size), both=both, only_a=only_a, only_b=only_b, neither=neither,
        statistic=stat if math.isfinite(stat) else None, p_value=float(res.pvalue),
        method="mcnemar exact" if exact else "mcnemar chi2 (continuity corrected)",
    )


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
    for the reliability composite (one :func:`confidence_draws` per dimension) and pass^k
    (one per task): each part's uncertainty carries into the mean, the interval never
    collapses to a point, and it errs on the wide side at small n (coverage:
    ``tests/core/test_coverage.py``; docs/statistics.md).
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

from collections import Counter  # noqa: E402  (this section's imports: an append-only merge)

from confseq.boundaries import (  # noqa: E402
    beta_binomial_log_mixture,
    gamma_exponential_log_mixture,
    gamma_exponential_mixture_bound,
)
from statsmodels.stats.proportion import proportions_ztest  # noqa: E402

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
    interval = Estimate(estimate=estimate, low=min(low, estimate), high=max(high, estimate),
                        n=int(d.size), confidence=confidence,
                        method=f"confidence sequence (confseq gamma-exponential mixture, "
                               f"empirical Bernstein, paired, horizon {horizon})")
    return AnytimeTest(interval=interval, null=0.0, p_value=p)


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


def anytime_paired_binary(a: Sequence[bool], b: Sequence[bool], *, horizon: int,
                          confidence: float = CONFIDENCE) -> AnytimeTest:
    """Paired difference of two pass rates on the same items, read in this order (0/1
    outcomes), with an anytime-valid interval and the anytime-valid p-value that ``a`` passes
    more often: a sequential McNemar test.

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
    interval = Estimate(estimate=estimate, low=min(low, estimate), high=max(high, estimate),
                        n=int(x.size), confidence=confidence,
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


# -- task-level (clustered) inference, Part A ------------------------------------------
#
# Part A repeats every task (temperatures, repeats): its trials are clustered by task, and the
# estimand is the mean over a population of tasks like the suite's. These functions infer at
# the task level and carry the design (tasks, trials per task, ICC, effective n) in their
# records. Coverage and false-positive rates: tests/core/test_task_level.py.

TASK_LEVEL_METHOD = ("task-level: the wider of Wilson on the design-effect-adjusted n (Kish, "
                     "one-way ANOVA ICC) and the cluster-robust t (CR1, t on tasks − 1 df)")
MDD_POWER = 0.8
MDD_ALPHA = 0.05


class ClusteredEstimate(Estimate):
    """A rate over trials that repeat tasks, with its task-level interval and its design.

    ``n`` is the trials; ``tasks`` the clusters; ``icc`` the one-way ANOVA intraclass
    correlation truncated at 0 (None: not estimable, every trial ended the same way, so the
    worst case, ICC 1, is assumed); ``design_effect`` is Kish's ``1 + (m − 1)·ICC`` with
    ``m = Σ nᵢ² / Σ nᵢ``; ``effective_n = n / design_effect``.
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


def _task_level_rows(k: np.ndarray, n: np.ndarray, confidence: float = CONFIDENCE
                     ) -> dict[str, np.ndarray]:
    """The task-level interval of every row of (rows, tasks) arrays of successes and trials:
    point, low, high, icc, design effect, effective n (see :func:`task_level_rate`)."""
    g = k.shape[1]
    total = n.sum(axis=1)
    p = k.sum(axis=1) / total
    m = (n ** 2).sum(axis=1) / total  # size-weighted trials per task (Kish)
    icc = _icc_rows(k, n)
    de = np.where(np.isnan(icc), m, 1 + (m - 1) * np.nan_to_num(icc))
    neff = total / de
    low, high = proportion_confint(p * neff, neff, alpha=1 - confidence, method="wilson")
    low, high = np.asarray(low, dtype=float), np.asarray(high, dtype=float)
    if g >= 2:
        resid = k - n * p[:, None]
        se = np.sqrt(g / (g - 1) * (resid ** 2).sum(axis=1)) / total
        half = sps.t.ppf(1 - (1 - confidence) / 2, g - 1) * se
        repeated = m > 1
        low = np.where(repeated, np.minimum(low, p - half), low)
        high = np.where(repeated, np.maximum(high, p + half), high)
    low = np.where(p == 0, 0.0, np.clip(low, 0.0, 1.0))
    high = np.where(p == 1, 1.0, np.clip(high, 0.0, 1.0))
    return {"p": p, "low": low, "high": high, "icc": icc, "de": de, "neff": neff}


def task_level_rate(counts: Sequence[tuple[int, int]], *, confidence: float = CONFIDENCE
                    ) -> ClusteredEstimate:
    """A success rate over trials that repeat tasks (``counts``: ``(trials n, successes c)``
    per task), inferred at the task level: the estimand is the mean over a population of
    tasks like these.

    The point is ``Σc / Σn``. The interval is the wider of (1) Wilson on the effective n
    ``Σn / (1 + (m − 1)·ICC)`` (Kish's design effect, ``m = Σn² / Σn``, ICC the one-way ANOVA
    estimator truncated at 0; when the ICC is not estimable because every trial ended the
    same way, the worst case ICC = 1 is taken, so the effective n is about the tasks) and
    (2) the cluster-robust (CR1) t interval on tasks − 1 degrees of freedom, which equals
    statsmodels' ``OLS(...).fit(cov_type="cluster", use_t=True)`` for a mean. With one trial
    per task it is Wilson over the trials; it is never zero-width.
    """
    k, n = _task_arrays(counts)
    row = {key: float(v[0]) for key, v in _task_level_rows(k, n, confidence).items()}
    icc = None if math.isnan(row["icc"]) else row["icc"]
    note = None
    if icc is None and row["de"] > 1:
        note = ("every trial ended the same way: the ICC is not estimable, so the worst case "
                "(ICC 1, effective n = tasks) is taken")
    return ClusteredEstimate(
        estimate=row["p"], low=row["low"], high=row["high"], method=TASK_LEVEL_METHOD,
        n=int(n.sum()), confidence=confidence, note=note, tasks=int(n.shape[1]),
        trials_per_task=float(n.mean()), icc=icc, design_effect=row["de"],
        effective_n=row["neff"])


def _sign_p(ahead: np.ndarray, nonzero: np.ndarray) -> np.ndarray:
    """Two-sided exact sign test p-values (binomial at ½; equals ``scipy.stats.binomtest``),
    vectorised; 1 where no task differs."""
    with np.errstate(invalid="ignore"):
        tail = np.minimum(sps.binom.cdf(ahead, nonzero, 0.5),
                          sps.binom.sf(ahead - 1, nonzero, 0.5))
    return np.where(nonzero > 0, np.minimum(1.0, 2 * tail), 1.0)


def _zero_spread_bounds(c: float, tasks: int, alpha: float) -> tuple[float, float]:
    """Where the mean of differences bounded in [−1, 1] lies when all ``tasks`` equal ``c``:
    the share of tasks that differ from ``c`` is at most ``u = 1 − alpha^(1/tasks)`` (exact
    one-sided binomial bound at 0 of ``tasks``), so the mean is within ``(1 − u)·c ± u``."""
    u = 1 - alpha ** (1 / tasks)
    return max(-1.0, (1 - u) * c - u), min(1.0, (1 - u) * c + u)


def minimum_detectable_difference(sd: float, tasks: int, *, alpha: float = MDD_ALPHA,
                                  power: float = MDD_POWER) -> float | None:
    """The smallest true mean difference a two-sided paired t test on ``tasks`` per-task
    differences detects with ``power`` at ``alpha``: statsmodels' ``TTestPower`` effect size
    times ``sd``. None when it is undefined (fewer than 2 tasks, or no spread: ``sd`` 0)."""
    from statsmodels.stats.power import TTestPower  # here: this section only appends

    if tasks < 2 or not sd > 0:
        return None
    d = TTestPower().solve_power(effect_size=None, nobs=tasks, alpha=alpha, power=power,
                                 alternative="two-sided")
    return float(d) * sd


def task_paired(differences: Sequence[float], *, cells: int | None = None,
                confidence: float = CONFIDENCE) -> TaskComparison:
    """Compare two sides paired by task from their per-task differences ``a − b`` (each in
    [−1, 1], averaged over the cells both ran; ``cells``: how many cells that was in all).

    Test: the exact sign test across tasks (ties dropped). Interval: :func:`wider_of` two, so
    it covers wherever either does: the paired t interval of the mean difference on tasks − 1
    df, and :func:`bounded_mean` of the differences on [−1, 1] (the Jeffreys Dirichlet
    posterior over the values seen and the range's ends). The t interval alone covers ~86%
    where few tasks differ, all one way (10% of 31 tasks, 5% of 62); the posterior alone
    ~92% on 62 tasks that all differ a little; the hull covers ≥ 95% in both
    (tests/core/test_task_level.py). With no spread (every task differs by the same amount,
    e.g. two floors) the exact bound of :func:`_zero_spread_bounds` instead, never a
    zero-width interval. ``mdd``: :func:`minimum_detectable_difference`.
    """
    d = np.asarray(differences, dtype=float)
    if d.ndim != 1 or d.size == 0:
        raise StatsInputError("a paired comparison needs at least one shared task",
                              "compare sides that ran some task in the same cells")
    if np.any(np.abs(d) > 1):
        raise StatsInputError("per-task differences of rates lie in [−1, 1]",
                              "pass differences of per-task success rates")
    n, mean = int(d.size), float(d.mean())
    a_ahead, b_ahead = int(np.sum(d > 0)), int(np.sum(d < 0))
    p = float(_sign_p(np.asarray(a_ahead), np.asarray(a_ahead + b_ahead)))
    sign = TestResult(statistic=float(a_ahead), p_value=p, n=n,
                      method="exact sign test across tasks (two-sided; ties dropped)")
    sd = float(d.std(ddof=1)) if n >= 2 else None
    note = None
    if sd:
        ci = sps.ttest_1samp(d, 0.0).confidence_interval(confidence)
        t = Estimate(estimate=mean, low=float(ci.low), high=float(ci.high), n=n,
                     method="paired t on per-task differences (tasks − 1 df)",
                     confidence=confidence)
        hull = wider_of(t, bounded_mean(d, bounds=(-1.0, 1.0), confidence=confidence),
                        bounds=(-1.0, 1.0))
        low, high, method = hull.low, hull.high, hull.method
    else:
        low, high = _zero_spread_bounds(mean, n, (1 - confidence) / 2)
        method = "exact bound: no spread in the per-task differences"
        note = (f"every task differs by the same amount ({mean:+.3f}): the interval bounds "
                "the share of tasks that could differ (exact binomial)")
    est = Estimate(estimate=mean, low=min(low, mean), high=max(high, mean), method=method, n=n,
                   confidence=confidence, note=note)
    return TaskComparison(tasks=n, cells=cells if cells is not None else n, a_ahead=a_ahead,
                          b_ahead=b_ahead, ties=n - a_ahead - b_ahead, mean_difference=mean,
                          sd=sd, difference=est, sign_test=sign,
                          mdd=minimum_detectable_difference(sd or 0.0, n), note=note)


def tost(differences: Sequence[float], margin: float, *, alpha: float = 0.05) -> TostResult:
    """Equivalence of paired differences (in [−1, 1]) within ``(−margin, margin)``: the one
    TOST, for per-task differences of rates (Part A, across tasks) and per-item differences
    of 0/1 outcomes (items scored by two precisions) alike.

    Exact for any distribution of the differences, sparse ones included: a unit (task, item)
    differs by at most 1 either way, so the mean lies between minus the share of units behind
    and the share ahead. Each share's one-sided exact binomial (Clopper–Pearson) bound at
    ``alpha`` gives the ``1 − 2·alpha`` ``interval`` that decides: equivalent exactly when it
    lies inside the margin, i.e. when
    ``p = max(P(Bin(n, margin) ≤ ahead), P(Bin(n, margin) ≤ behind))`` is under ``alpha``.
    Two identical sides are called equivalent once ``(1 − margin)^n < alpha``
    (n ≥ 29 tasks at ±10 points).

    A paired t TOST is not used: where few tasks differ, all one way, its interval is too
    narrow (at a true difference of +10 points carried by 10% of 31 tasks it claims
    equivalence 18% of the time at alpha 0.05). The price of exactness is power where many
    tasks differ by small amounts in both directions: the bound counts a task's direction, not
    its size, so such data read "not shown" (give the MDD beside it).
    """
    if not 0 < margin <= 1:
        raise StatsInputError(f"an equivalence margin must be in (0, 1] (got {margin})",
                              "choose the largest difference you would call negligible")
    d = np.asarray(differences, dtype=float)
    if d.ndim != 1 or d.size == 0:
        raise StatsInputError("an equivalence test needs at least one shared task or item",
                              "compare sides that ran some task (or item) in the same cells")
    if np.any(np.abs(d) > 1):
        raise StatsInputError("paired differences of rates or 0/1 outcomes lie in [−1, 1]",
                              "pass differences of per-task success rates or of 0/1 outcomes")
    n, ahead, behind = int(d.size), int(np.sum(d > 0)), int(np.sum(d < 0))
    p_upper = float(sps.binom.cdf(ahead, n, margin))  # H0: mean >= margin
    p_lower = float(sps.binom.cdf(behind, n, margin))  # H0: mean <= -margin
    p = max(p_upper, p_lower)
    return TostResult(mean_difference=float(d.mean()), margin=margin, p_value=p,
                      p_lower=p_lower, p_upper=p_upper, equivalent=bool(p < alpha),
                      alpha=alpha, n=n,
                      interval=(-_upper_share(behind, n, alpha), _upper_share(ahead, n, alpha)),
                      method=f"exact sign bound on per-task differences (margin ±{margin})",
                      note=f"{ahead} of {n} tasks ahead, {behind} behind")


def task_tost(differences: Sequence[float], margin: float, *, alpha: float = 0.05
              ) -> TostResult:
    """Equivalence of per-task differences of rates (each in [−1, 1]) within
    ``(−margin, margin)``: the interval-inclusion TOST on :func:`task_paired`'s interval at
    ``1 − 2·alpha`` (90%), so the page's 95% interval and its claim of no difference come
    from one method.

    With spread, that interval is the hull of the paired t interval and the bounded-mean
    posterior on [−1, 1]; each one-sided p is the larger of the two methods' (the t test
    against ±margin, the posterior's mass beyond ±margin, from the draws its interval uses),
    so ``p < alpha`` exactly when the interval lies inside the margin. With no spread (every
    task differs by the same ``c``), the exact bound of ``task_paired``: ``p =
    ((1 − margin)/(1 − |c|))^n`` for ``|c| < margin`` (``(1 − margin)^n`` for two identical
    sides: equivalent within ±0.1 from 29 tasks).

    Unlike :func:`tost`'s sign bound it sees how far tasks differ, not only which way: many
    small differences both ways can be shown negligible. Its error at ±margin is simulated,
    as the hull's coverage is, over sparse one-way, sparse two-way, 3-instance and dense
    differences (tests/core/test_task_level.py): within α where the sign bound is, and where
    every task differs a little it shows a zero difference equivalent (62 tasks, ±10 points)
    nearly always, the sign bound never.
    """
    d = np.asarray(differences, dtype=float)
    exact = tost(d, margin, alpha=alpha)  # the same input checks; its note counts the tasks
    n, mean = int(d.size), float(d.mean())
    if n < 2 or np.ptp(d) == 0:
        low, high = _zero_spread_bounds(mean, n, alpha)
        p_upper = p_lower = (((1 - margin) / (1 - abs(mean))) ** n if abs(mean) < margin
                             else 1.0)
        method = (f"exact bound with no spread in the per-task differences (margin "
                  f"±{margin})")
    else:
        hull = task_paired(d, confidence=1 - 2 * alpha).difference
        low, high = float(hull.low), float(hull.high)  # type: ignore[arg-type]
        counts, cells = _bounded_cells([d], (-1.0, 1.0))
        sims = _jeffreys_cells(counts, N_DRAWS, SEED) @ cells[:, 0]
        p_upper = max(float(sps.ttest_1samp(d, margin, alternative="less").pvalue),
                      float(np.mean(sims >= margin)))
        p_lower = max(float(sps.ttest_1samp(d, -margin, alternative="greater").pvalue),
                      float(np.mean(sims <= -margin)))
        method = (f"interval inclusion on the {100 * (1 - 2 * alpha):g}% hull of the paired t "
                  f"and the bounded-mean posterior (margin ±{margin})")
    p = max(p_upper, p_lower)
    return TostResult(mean_difference=mean, margin=margin, p_value=p, p_lower=p_lower,
                      p_upper=p_upper, equivalent=bool(p < alpha), alpha=alpha, n=n,
                      interval=(min(low, mean), max(high, mean)), method=method,
                      note=exact.note)


def _upper_share(k: int, n: int, alpha: float) -> float:
    """The exact one-sided (Clopper–Pearson) upper bound at ``alpha`` on a share seen k of n
    times (statsmodels' two-sided ``beta`` interval at ``2·alpha``; 1 when k = n)."""
    return float(proportion_confint(k, n, alpha=2 * alpha, method="beta")[1])


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


# -- variance components and power planning (issue #39) ---------------------------------------
# Nested one-way ANOVA by the method of moments (Searle, Casella & McCulloch, "Variance
# Components", §4.4, unbalanced two-stage nesting); the mean squares equal statsmodels'
# ``anova_lm`` of ``y ~ C(family) / C(instance)`` (tests/core/test_power.py checks it), the
# MDD is :func:`minimum_detectable_difference`. Coverage and power: tests/core/test_power.py.


class VarianceComponents(_Record):
    """How a per-trial value (a success, or a paired difference of two) varies: between
    families (``family``), between instances of one family (``instance``; None when no
    family has two instances, so it is inside ``family`` and cannot be told apart) and
    between trials of one instance (``trial``: repeats, sampling). Estimated by the nested
    ANOVA's method of moments, each truncated at 0. ``families``, ``instances`` (mean per
    family) and ``trials`` (mean per instance) describe the data they came from."""

    family: float
    instance: float | None
    trial: float
    families: int
    instances: float
    trials: float
    method: str = "nested ANOVA, method of moments (truncated at 0)"

    def family_sd(self, instances: int, trials: int) -> float:
        """The sd of a family's mean over ``instances`` × ``trials`` cells under these
        components; an unseparated instance term stays whole (more instances do not help)."""
        if instances < 1 or trials < 1:
            raise StatsInputError(f"a design needs ≥ 1 instance and trial, not "
                                  f"{instances} × {trials}", "plan at least 1 × 1")
        inst = 0.0 if self.instance is None else self.instance / instances
        return math.sqrt(self.family + inst + self.trial / (instances * trials))


def _nested_arrays(values: Sequence[Sequence[Sequence[float]]]
                   ) -> tuple[list[list[np.ndarray]], int]:
    cells = [[np.asarray(c, dtype=float) for c in fam if len(c)] for fam in values]
    cells = [fam for fam in cells if fam]
    n = sum(c.size for fam in cells for c in fam)
    if len(cells) < 2 or n <= sum(len(fam) for fam in cells):
        raise StatsInputError(
            "variance components need ≥ 2 families and some instance with ≥ 2 trials",
            "run repeats (or instances) of at least two families")
    return cells, n


def variance_components(values: Sequence[Sequence[Sequence[float]]]) -> VarianceComponents:
    """:class:`VarianceComponents` of ``values[family][instance][trial]`` (empty instances
    and families are dropped). StatsInputError below 2 families or with no replication."""
    cells, n = _nested_arrays(values)
    a = len(cells)
    b = sum(len(fam) for fam in cells)
    grand = sum(c.sum() for fam in cells for c in fam) / n
    n_i = np.array([sum(c.size for c in fam) for fam in cells], dtype=float)
    mean_i = np.array([sum(c.sum() for c in fam) for fam in cells]) / n_i
    ss_f = float((n_i * (mean_i - grand) ** 2).sum())
    ss_i = float(sum(c.size * (c.mean() - m) ** 2 for fam, m in zip(cells, mean_i, strict=True)
                     for c in fam))
    ss_w = float(sum(((c - c.mean()) ** 2).sum() for fam in cells for c in fam))
    ms_w = ss_w / (n - b)
    sq_within = np.array([sum(c.size ** 2 for c in fam) for fam in cells], dtype=float)
    k3 = (n - (n_i ** 2).sum() / n) / (a - 1)
    k2 = ((sq_within / n_i).sum() - sq_within.sum() / n) / (a - 1)
    ms_f = ss_f / (a - 1)
    instance: float | None = None
    if b > a:
        k1 = (n - (sq_within / n_i).sum()) / (b - a)
        instance = max(0.0, (ss_i / (b - a) - ms_w) / k1)
    family = max(0.0, (ms_f - ms_w - k2 * (instance or 0.0)) / k3)
    return VarianceComponents(family=family, instance=instance, trial=max(0.0, ms_w),
                              families=a, instances=b / a, trials=n / b)


def planned_mdd(components: VarianceComponents, *, families: int, instances: int,
                trials: int, alpha: float = MDD_ALPHA, power: float = MDD_POWER
                ) -> float | None:
    """The minimum detectable difference of a paired comparison of two models on
    ``families`` families × ``instances`` × ``trials``, when ``components`` are those of the
    paired per-trial differences: :func:`minimum_detectable_difference` of the sd of a
    family's mean difference (:meth:`VarianceComponents.family_sd`) on ``families``."""
    return minimum_detectable_difference(components.family_sd(instances, trials), families,
                                         alpha=alpha, power=power)
