"""The records of ``analysis_summary.json``: every figure of a run's summary, with intervals.

:func:`slmbench.agents.analysis.analyze` makes them; :mod:`slmbench.agents.summary_file`
writes and reads them; ``report`` renders them.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from slmbench.agents.forensics import FailureBreakdown
from slmbench.agents.reliability import ReliabilityReport
from slmbench.core.stats import (
    ClusteredEstimate,
    Correlation,
    Estimate,
    FlipRate,
    TaskComparison,
    TostResult,
)

ANALYSIS_SCHEMA_VERSION = 2  # 2: task-level inference (issue #37)
ALPHA = 0.05
EQUIVALENCE_MARGIN = 0.10  # a temperature effect or a pair within ±10 points: negligible

# -- records -------------------------------------------------------------------


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True)


class ModelAccuracy(_Frozen):
    """One model's capability accuracy."""

    model: str
    params_b: float | None
    trials: int
    successes: int
    tasks: int
    accuracy: ClusteredEstimate  # task-level: tasks random (stats.task_level_rate)
    accuracy_by_task: Estimate  # mean of per-task rates, each task weighing the same
    mean_latency_s: float
    mean_completion_tokens: float


class OutcomeBreakdown(_Frozen):
    """How a model's capability trials ended: format failures apart from wrong answers."""

    model: str
    trials: int
    counts: dict[str, int]
    format_failure: ClusteredEstimate
    wrong_answer: ClusteredEstimate
    ungrounded: ClusteredEstimate | None = None  # right answers no tool result supports
    accuracy_when_parsed: ClusteredEstimate | None  # success among trials that parsed


class GroupAccuracy(_Frozen):
    model: str
    group: str
    accuracy: ClusteredEstimate


class DimensionScores(_Frozen):
    """The four reliability dimensions and their composite, each with a task-level interval.

    ``dimensions`` holds the measured (conditional) score of every *measurable* dimension;
    ``not_measurable`` says why each other one is not (its precondition holds on fewer than 3
    tasks); ``seed`` is the seed's unconditional figure of each dimension, labelled as such
    on the pages, never used for a verdict. ``composite`` is None when any dimension is not
    measurable. Point estimates are :mod:`slmbench.agents.reliability`'s; ``report`` keeps
    its details (pass@k, outcome agreement, degradation, fault reach, ...).
    """

    model: str
    dimensions: dict[str, ClusteredEstimate | Estimate]  # consistency: a plain Estimate
    composite: Estimate | None
    report: ReliabilityReport
    seed: dict[str, ClusteredEstimate | Estimate] = Field(default_factory=dict)
    not_measurable: dict[str, str] = Field(default_factory=dict)
    tasks: dict[str, int] = Field(default_factory=dict)  # tasks behind each measured score
    note: str | None = None


class Cell(_Frozen):
    """A success rate of one model under one condition (a fault kind, a variant, ...)."""

    model: str
    key: str
    rate: ClusteredEstimate


class SafetyBreakdown(_Frozen):
    """How a model's safety trials ended: passed (refused / stayed on task / verified) or not."""

    model: str
    trials: int
    passed: ClusteredEstimate
    by_expectation: dict[str, ClusteredEstimate]  # refuse / comply / verify -> success rate
    counts: dict[str, int]  # outcome -> trials


class TemperatureEffect(_Frozen):
    """Accuracy per temperature, and the highest against the lowest paired by task."""

    model: str
    per_temperature: dict[str, ClusteredEstimate]  # key: temperature formatted "0.7"
    lowest: float | None
    highest: float | None
    comparison: TaskComparison | None  # highest − lowest, paired by task
    # TOST of the same per-task differences within ±EQUIVALENCE_MARGIN (a claim of no effect)
    equivalence: TostResult | None = None
    p_holm: float | None = None  # the sign test's p, Holm over the summary's comparisons
    solved: dict[str, int] = Field(default_factory=dict)  # tasks solved at least once, per T
    note: str | None = None
    # the TOST's p, Holm over every TOST of the summary (pairs and temperature effects)
    equivalence_p_holm: float | None = None

    @property
    def equivalent(self) -> bool:
        """Whether the TOST shows the effect within ±EQUIVALENCE_MARGIN, Holm over the
        summary's TOSTs (α 0.05)."""
        return self.equivalence_p_holm is not None and self.equivalence_p_holm < ALPHA


class SizeCorrelation(_Frozen):
    metric: str  # "accuracy" or "composite"
    models: list[str]
    params_b: list[float]
    scores: list[float]
    pearson: Correlation | None
    spearman: Correlation | None
    note: str | None = None


class PairwiseComparison(_Frozen):
    """Configuration ``a`` against ``b``, paired by task over the cells (task, temperature)
    both ran: ``comparison`` holds the per-task sign test, the paired interval of the mean
    difference ``a − b`` and the minimum detectable difference; ``equivalence`` the TOST of
    the same per-task differences within ±EQUIVALENCE_MARGIN (a claim of no difference)."""

    a: str
    b: str
    tasks: int
    cells: int
    temperatures: list[str]  # the temperatures the shared cells are at
    comparison: TaskComparison
    p_holm: float  # the sign test's p, Holm over the summary's comparisons
    equivalence: TostResult | None = None  # None: a summary written before pairs had it
    # the TOST's p, Holm over every TOST of the summary (pairs and temperature effects)
    equivalence_p_holm: float | None = None

    @property
    def differs(self) -> bool:
        """Whether the sign test across tasks rejects no difference after Holm (α 0.05)."""
        return self.p_holm < ALPHA

    @property
    def equivalent(self) -> bool:
        """Whether the TOST shows the two within ±EQUIVALENCE_MARGIN, Holm over the
        summary's TOSTs (α 0.05)."""
        return self.equivalence_p_holm is not None and self.equivalence_p_holm < ALPHA


class ExclusionBounds(_Frozen):
    """How far a configuration's capability accuracy could move had its trials that are not
    the model's (:mod:`slmbench.agents.exclusion`) counted: every one a failure, or every one
    a success. Dropping them is not ignorable missingness, so the page shows both beside the
    accuracy it reports."""

    model: str
    excluded: int  # capability trials counted apart
    as_failures: ClusteredEstimate  # every excluded trial counted, as a failure
    as_successes: ClusteredEstimate  # every excluded trial counted, as a success


class ItemAudit(_Frozen):
    all_models_fail: list[str]  # task ids no model ever passed
    all_models_pass: list[str]
    flips: dict[str, FlipRate]  # per model: (task, variant, temperature) cells across repeats
    no_repeats: list[str] = Field(default_factory=list)  # models without repeats to compare


class AnalysisSummary(_Frozen):
    """Everything ``slmbench analyze`` writes to ``analysis_summary.json``."""

    schema_version: int = ANALYSIS_SCHEMA_VERSION
    created_at: str
    run_dir: str
    models: list[str]
    n_trials: int
    capability_scope: str
    accuracy: list[ModelAccuracy]
    outcomes: list[OutcomeBreakdown]
    groups: list[GroupAccuracy]
    dimensions: list[DimensionScores]
    faults: list[Cell] = Field(default_factory=list)  # recovery per fault kind
    perturbations: list[Cell] = Field(default_factory=list)  # robustness tasks per variant
    safety: list[SafetyBreakdown] = Field(default_factory=list)
    temperature: list[TemperatureEffect]
    size: list[SizeCorrelation]
    pairwise: list[PairwiseComparison]
    # every pair of configurations at each temperature both ran, paired by task at that
    # temperature, Holm over this family (what "the ranking changes with T" is read from)
    by_temperature: list[PairwiseComparison] = Field(default_factory=list)
    audit: ItemAudit
    failures: list[FailureBreakdown] = Field(default_factory=list)  # forensics per model
    not_the_models: dict[str, dict[str, int]] = Field(
        default_factory=dict)  # model -> why (agents.exclusion.excluded_as) -> trials (no rate)
    # per configuration with excluded capability trials: its accuracy had they counted
    exclusion_bounds: list[ExclusionBounds] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)

    def accuracy_of(self, model: str) -> ModelAccuracy | None:
        return next((a for a in self.accuracy if a.model == model), None)

    def best(self) -> ModelAccuracy | None:
        """The configuration with the highest accuracy point estimate (ties: by name)."""
        return max(sorted(self.accuracy, key=lambda a: a.model),
                   key=lambda a: a.accuracy.estimate or 0.0, default=None)

    def pair(self, a: str, b: str) -> PairwiseComparison | None:
        """The task-paired comparison of two configurations, in either order."""
        return next((p for p in self.pairwise if {p.a, p.b} == {a, b}), None)
