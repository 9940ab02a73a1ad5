"""The records of ``analysis_summary.json``: every figure of a run's summary, with intervals.

:func:`slmbench.agents.analysis.analyze` makes them; :mod:`slmbench.agents.summary_file`
writes and reads them; ``report`` renders them.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from slmbench.agents.forensics import FailureBreakdown
from slmbench.agents.funnel import STAGES
from slmbench.agents.reliability import MIN_TASKS, ReliabilityReport
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
BREAKS_BELOW = 0.5  # a funnel breaks at the first stage fewer than half of its reachers pass
HOLDS_AT = 0.5  # a configuration holds a level of the ladder where its lower bound reaches it
EQUIVALENCE_MARGIN = 0.10  # a temperature effect or a pair within ±10 points: negligible
# The rule version of Part A's verdicts (pairs and temperature effects), recorded with a page's
# verdicts so that "What changed" tells a move of rule from one of data (as Part B's
# CELL_VERSION). 2: two floors (neither side solves MIN_TASKS tasks) are not comparable on
# success and claim no equivalence (issue #60).
PAIR_RULE_VERSION = 2
FLOOR_TEXT = "both at the floor: not comparable on success"


def at_floor(*solved: int | None) -> bool:
    """Whether every side solves fewer than MIN_TASKS tasks (None: not recorded, so no)."""
    return bool(solved) and all(s is not None and s < MIN_TASKS for s in solved)

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
    dumped: ClusteredEstimate | None = None  # right tokens inside a tool dump (docs/scoring.md)
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


class SizedTests(_Frozen):
    """One-sided tests of a paired effect at whole-point sizes, for a claim that names a size
    (issue #60): at ``points[i]`` = s, ``fall[i]`` is the p of "the effect is at most −s
    points" (small: a fall of s points or more is excluded) and ``rise[i]`` the p of "at least
    +s" (small: a rise of s or more is excluded). Each is a one-sided half of
    ``stats.task_tost`` at margin s (its ``p_lower`` and ``p_upper``): at most 0.05 exactly
    when the 90% interval of the same per-task differences lies above −s (below +s)."""

    points: list[int]
    fall: list[float]
    rise: list[float]

    def fall_p(self, points: int) -> float | None:
        """The p of "a fall of ``points`` or more" (None: not tested at that size)."""
        return self.fall[self.points.index(points)] if points in self.points else None


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
    sized: SizedTests | None = None  # highest − lowest one-sided at 1..20 points (issue #60)

    @property
    def at_floor(self) -> bool:
        """Both temperatures solve fewer than MIN_TASKS tasks: not comparable on success, no
        claim of equivalence (and out of the TOSTs' Holm family)."""
        if self.lowest is None or self.highest is None:
            return False
        return at_floor(*(self.solved.get(f"{round(t, 4):g}") for t in (self.lowest,
                                                                         self.highest)))

    @property
    def equivalent(self) -> bool:
        """Whether the TOST shows the effect within ±EQUIVALENCE_MARGIN, Holm over the
        summary's TOSTs (α 0.05); never at the floor."""
        return (not self.at_floor and self.equivalence_p_holm is not None
                and self.equivalence_p_holm < ALPHA)


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
    # tasks each side solves at least once in the shared cells (None: written before #60)
    solved_a: int | None = None
    solved_b: int | None = None

    @property
    def at_floor(self) -> bool:
        """Neither side solves MIN_TASKS tasks: the pair is not comparable on success (two
        floors are "within ±10 points" however differently they fail), claims no
        equivalence and stays out of the TOSTs' Holm family."""
        return at_floor(self.solved_a, self.solved_b)

    @property
    def differs(self) -> bool:
        """Whether the sign test across tasks rejects no difference after Holm (α 0.05)."""
        return self.p_holm < ALPHA

    @property
    def equivalent(self) -> bool:
        """Whether the TOST shows the two within ±EQUIVALENCE_MARGIN, Holm over the
        summary's TOSTs (α 0.05); never at the floor."""
        return (not self.at_floor and self.equivalence_p_holm is not None
                and self.equivalence_p_holm < ALPHA)


class ExclusionBounds(_Frozen):
    """How far a configuration's capability accuracy could move had its trials that are not
    the model's (:mod:`slmbench.agents.exclusion`) counted: every one a failure, or every one
    a success. Dropping them is not ignorable missingness, so the page shows both beside the
    accuracy it reports."""

    model: str
    excluded: int  # capability trials counted apart
    as_failures: ClusteredEstimate  # every excluded trial counted, as a failure
    as_successes: ClusteredEstimate  # every excluded trial counted, as a success


class StageRate(_Frozen):
    """One stage of a configuration's funnel (:mod:`slmbench.agents.funnel`): its marginal
    rate over the trials where it applies, and its rate among those of them that passed every
    applicable stage before it (None for the first stage, or where none did)."""

    stage: str
    trials: int  # trials where the stage applies
    passed: int
    marginal: ClusteredEstimate | None  # None: it applies to no trial
    reached_previous: int  # of ``trials``, those that passed every stage before it
    given_previous: ClusteredEstimate | None
    not_applicable: dict[str, int] = Field(default_factory=dict)  # why -> trials
    tasks_passed: int = 0  # tasks (families) with at least one trial that passed it


class StageFunnel(_Frozen):
    """A configuration's stage funnel over its capability trials (the accuracy's trials):
    each stage's rates, ``acts`` under the strict grammar beside it, and how many trials
    stopped at each stage (``reached``: the last stage of their unbroken run, ``none``: the
    first reply was no action)."""

    model: str
    trials: int
    stages: list[StageRate]
    strict_acts: ClusteredEstimate | None
    reached: dict[str, int]
    unjudged: int = 0  # trials whose task is not among the given suites: no stage judged

    def stage(self, name: str) -> StageRate | None:
        return next((s for s in self.stages if s.stage == name), None)

    def given(self, name: str) -> ClusteredEstimate | None:
        """A stage's rate among the trials that passed every applicable stage before it
        (the first stage: of all the trials)."""
        rate = self.stage(name)
        if rate is None:
            return None
        return rate.marginal if name == STAGES[0] else rate.given_previous

    @property
    def breaks_at(self) -> str | None:
        """The stage where the configuration breaks: the first stage that fewer than half of
        the trials reaching it pass (:meth:`given`'s point estimate below 0.5); None where
        none is."""
        for s in STAGES:
            e = self.given(s)
            if e is not None and e.estimate is not None and e.estimate < BREAKS_BELOW:
                return s
        return None


class StageComparison(_Frozen):
    """Configuration ``a`` against ``b`` at one stage, on its marginal rate, paired by task
    over the cells both ran (as a pairwise comparison); ``p_holm``: the sign test's p, Holm
    over the funnel's comparisons only (a family of their own)."""

    stage: str
    a: str
    b: str
    cells: int
    comparison: TaskComparison
    p_holm: float

    @property
    def differs(self) -> bool:
        return self.p_holm < ALPHA


class LevelRate(_Frozen):
    """A level of a configuration's difficulty ladder (``agents/ladder_rates.py``)."""

    level: int
    trials: int
    successes: int
    tasks: int  # families with trials at this level (each one task: instances one cluster)
    families: list[str] = Field(default_factory=list)  # their ids
    generated: int = 0  # of ``trials``, those of a generated form (the rest: base instances)
    rate: ClusteredEstimate

    @property
    def holds(self) -> bool:  # the rate's lower bound reaches HOLDS_AT
        return self.rate.low is not None and self.rate.low >= HOLDS_AT


class LevelLadder(_Frozen):
    """A configuration's ladder: its levels; ``held``, the highest that holds (None: none)."""

    model: str
    levels: list[LevelRate]
    held: int | None

    @property
    def levels_run(self) -> list[int]:
        return [r.level for r in self.levels]


class StageReliability(_Frozen):
    """A reliability dimension measured at a stage of the funnel (issue #61), *stage-level*:
    never one of the seed's dimensions, never in a claim or the composite. ``stage`` is the
    deepest stage short of ``correct`` that the dimension's unperturbed trials reach on at
    least 3 tasks (:mod:`slmbench.agents.funnel_reliability`); ``score`` the dimension with
    "reached the stage" in place of success (robustness: on the rewordings of those tasks;
    fault tolerance: recovery to the stage under the fault; consistency: pass^k of reaching
    it), None with ``note`` when not measurable."""

    model: str
    dimension: str  # consistency | robustness | fault_tolerance
    stage: str | None  # None: no stage is reached on 3 tasks
    reached_tasks: int  # tasks whose unperturbed trials reach ``stage`` (or the first stage)
    score: ClusteredEstimate | Estimate | None  # consistency: a plain Estimate
    tasks: int = 0  # tasks behind ``score``
    note: str | None = None


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
    # the stage funnel per configuration (issue #61), and its comparisons (their own Holm)
    funnel: list[StageFunnel] = Field(default_factory=list)
    funnel_pairs: list[StageComparison] = Field(default_factory=list)
    # robustness, recovery and consistency at the deepest stage reached (stage-level, #61)
    stage_reliability: list[StageReliability] = Field(default_factory=list)
    # per configuration that ran a generated level: success per level, the highest held (#61)
    ladder: list[LevelLadder] = Field(default_factory=list)

    def accuracy_of(self, model: str) -> ModelAccuracy | None:
        return next((a for a in self.accuracy if a.model == model), None)

    def best(self) -> ModelAccuracy | None:
        """The configuration with the highest accuracy point estimate (ties: by name)."""
        return max(sorted(self.accuracy, key=lambda a: a.model),
                   key=lambda a: a.accuracy.estimate or 0.0, default=None)

    def pair(self, a: str, b: str) -> PairwiseComparison | None:
        """The task-paired comparison of two configurations, in either order."""
        return next((p for p in self.pairwise if {p.a, p.b} == {a, b}), None)
