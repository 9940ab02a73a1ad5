"""Records every statistic returns: a number with its interval, a test, a correlation."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from slmbench.core.errors import SlmbenchError

CONFIDENCE = 0.95
# an anytime-valid interval (intersected over the items read) that no longer holds its estimate
OUTSIDE_NOTE = ("settled early; the later items moved the estimate out of the interval "
                "(the anytime-valid bound, intersected over the items read, still holds)")
N_RESAMPLES = 10_000
SEED = 20240611
N_DRAWS = 20_000  # posterior draws behind a simulated interval
EXACT_MCNEMAR_BELOW = 25  # discordant pairs under which McNemar uses the exact binomial

IntervalMethod = Literal["wilson", "clopper-pearson"]
Alternative = Literal["two-sided", "greater", "less"]
# what a Part B score is: per-item 0/1 (accuracy), per-item values in [0, 1] (MRR, nDCG@5),
# or an F1 over the items' predictions
ScoreKind = Literal["binary", "bounded", "f1"]


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
