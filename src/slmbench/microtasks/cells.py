"""The records of an eligibility matrix: one configuration's cell (score, interval, τ,
verdict, p-values) and the tallies over cells. What the values mean and how they are decided
is :mod:`slmbench.microtasks.eligibility` (the rule); these are only the shapes that travel
(to the matrix JSON, the study page, the agreement page)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from slmbench.core import stats
from slmbench.microtasks.datasets.records import TaskName
from slmbench.microtasks.spec import Metric

__all__ = ["CELL_VERSION", "EligibilityCell", "IntervalKind", "PromptSummary", "Tally",
           "TauSweepRow", "Verdict"]

CELL_VERSION = 6  # 6: an anytime-valid interval as its sequence gives it (never widened to
#                   hold the estimate), the fixed-n paired result beside it, not deciding
#                   (issue #60); 5: one interval per cell (anytime-valid or fixed-n),
#                   p-values, Holm, an anytime-valid "constant" (4: the verdict weighs the
#                   paired half; 3: constant, top_share, verdict, sequence; 2: score, diff
#                   are Estimates)
Verdict = Literal["eligible", "ineligible", "undecided"]

IntervalKind = Literal["anytime-valid", "fixed-n"]
_SETTLED_EARLY = "settled early; the later items moved the estimate out of the interval"




class EligibilityCell(BaseModel):
    """One configuration's score, interval, τ and verdict on one metric.

    ``score`` and ``diff`` carry the one interval that applies (``interval_kind``): the
    anytime-valid confidence sequence of a cell read until decided (valid at the data-chosen
    stop), else the fixed-n interval of a cell read in full (F1 cells always are).
    ``p_value`` is the cell's p-value for "eligible" (the larger of the two halves' p-values,
    anytime-valid or fixed-n like its intervals; 1 for a constant cell); ``p_holm`` and
    ``family_eligible`` are its Holm-adjusted value and verdict over the ``family`` of
    configurations it was tested with (None until :func:`family_wise` ran, and for a
    secondary metric, which is no hypothesis of its own).
    """

    model_config = ConfigDict(frozen=True)

    task: TaskName
    model: str
    precision: str
    prompt_id: str
    reading: Literal["generation", "logprob"]
    metric: Metric
    n_items: int
    score: stats.Estimate  # the metric with the interval that applies (``interval_kind``)
    tau: float  # the τ-baseline's score on every item the cell could read: a fixed number
    tau_anchor: str
    tau_interval: stats.Estimate | None = None  # τ-baseline's fixed-n interval (not the rule's)
    baseline_scores: dict[str, float]
    diff: stats.Estimate  # model - τ-baseline on the items read, paired (``interval_kind``)
    format_failures: int
    eligible: bool
    note: str | None = None
    top_share: float | None = None  # share of items given the most frequent answer
    constant: bool = False  # shown to give one answer to >= CONSTANT_SHARE: never eligible
    constant_p: float | None = None  # anytime-valid p of "one answer above CONSTANT_SHARE"
    answer_space: int | None = None  # answers a decision could be (options + format failure)
    verdict: Verdict = "undecided"  # `cell_verdict` on `score` and `diff`
    interval_kind: IntervalKind = "fixed-n"
    n_split: int | None = None  # items the cell could read (None: n_items)
    seed_rule: bool = False  # the seed's rule alone: the bound above τ (and not constant)
    paired: bool = False  # the paired interval of model - τ-baseline lies above 0
    p_tau: float = 1.0  # p-value of "above τ" (the absolute half)
    p_paired: float = 1.0  # p-value of "above the τ-baseline on the items read"
    p_value: float = 1.0  # the cell's: max(p_tau, p_paired), 1 when constant
    stop_level: float | None = None  # the p-value an "eligible" stop needed (sequential)
    stop_rule_met: bool | None = None  # its stop rule is met at n_items (None: not sequential)
    family: int | None = None  # hypotheses in the family-wise correction (None: not run)
    p_holm: float | None = None
    family_eligible: bool | None = None  # eligible and Holm-adjusted p <= 1 - confidence
    # an anytime-valid cell's fixed-n result on every item it read, shown beside, never
    # deciding: the paired interval of model − τ-baseline and its p (accuracy: McNemar)
    fixed_diff: stats.Estimate | None = None
    fixed_p_paired: float | None = None
    version: Literal[2, 3, 4, 5, 6] = CELL_VERSION

    @property
    def undecided_with_items_left(self) -> bool:
        """Undecided with items of its split never read: reading on could still decide it."""
        return self.verdict == "undecided" and self.n_split is not None \
            and self.n_items < self.n_split

    @property
    def tau_text(self) -> str:
        """τ as every table prints it, a fixed number with its anchor and the items it was
        set on: ``0.766 (bm25, all 1043 items)``."""
        on = f", all {self.n_split} items" if self.n_split is not None else ""
        return f"{self.tau:.3f} ({self.tau_anchor}{on})"

    @property
    def diff_text(self) -> str:
        """The paired difference with its interval, named for what it is: ``+0.167 [0.05,
        0.28] vs bm25 on the 228 items read``; for an anytime-valid cell, whether the items
        read after it settled moved the estimate out of it, and the fixed-n result on the
        same items beside it, not deciding."""
        text = (f"{self.diff.formatted(percent=False, digits=3)} vs {self.tau_anchor} on the "
                f"{self.n_items} items read")
        if self.diff.note == stats.OUTSIDE_NOTE:
            text += f" ({_SETTLED_EARLY})"
        if self.fixed_diff is not None:
            q = self.fixed_p_paired
            p = "" if q is None else (f", {'McNemar ' if self.metric == 'accuracy' else ''}p "
                                      + ("<0.001" if q < 0.001 else f"{q:.3f}"))
            text += (f"; fixed-n on the same items, not deciding: "
                     f"{self.fixed_diff.formatted(percent=False, digits=3)}{p}")
        return text

    @property
    def score_text(self) -> str:
        """The score with its interval (``0.812 [0.77, 0.85]``), and, for an anytime-valid
        interval that no longer holds its estimate, the words that say so."""
        text = self.score.formatted(percent=False, digits=3)
        return text + (f" ({_SETTLED_EARLY})" if self.score.note == stats.OUTSIDE_NOTE else "")

    @property
    def interval_label(self) -> str:
        """What the printed intervals are: ``anytime-valid (confidence sequence)`` or
        ``fixed-n``."""
        return ("anytime-valid (confidence sequence)" if self.interval_kind == "anytime-valid"
                else "fixed-n")


class Tally(BaseModel):
    """How many of ``total`` configurations are eligible."""

    model_config = ConfigDict(frozen=True)

    eligible: int
    total: int


class TauSweepRow(Tally):
    """How many configurations pass when τ is set to one anchor."""

    anchor: str


class PromptSummary(Tally):
    """How many configurations pass under one prompt, cell by cell (``eligible``) and
    family-wise (``family_eligible``)."""

    prompt_id: str
    family_eligible: int = 0


