"""A run directory → ``analysis_summary.json``: every figure of the study, with intervals.

:func:`analyze` reads the trials of a run store and computes, per model:
accuracy, accuracy per task group, the four reliability dimension scores and their
composite, temperature effects, size-vs-score correlations, pairwise model comparisons,
format failures kept apart from wrong answers, and an item audit. Every number comes from
:mod:`slmbench.core.stats`.

**The task is the unit of inference** (issue #37): a task's repeats (temperatures, repeats)
are correlated, so every rate's interval is task-level (``stats.task_level_rate``: its
record carries tasks, trials per task, ICC and effective n), and every comparison is paired
by task (``stats.task_paired``: per-task differences averaged over the cells both sides ran,
an exact sign test across tasks, a paired interval and the minimum detectable difference),
Holm-adjusted over the family of the summary's comparisons (model pairs and temperature
effects together). The estimand is the mean over a population of tasks like the suite's;
``accuracy_by_task`` is the per-task mean conditional on these tasks, shown beside it.

Which trials feed which figure:

- *capability* figures use trials of the ``capability`` suite, base variant,
  no injected fault (or every trial, when a run holds no capability suite);
- *dimension* scores are :mod:`slmbench.agents.reliability`'s (trials of the
  reliability-suite tasks), measured conditional on their precondition (recovery among the
  tasks solved unfaulted, robustness on solved base tasks, safety on trials that reached a
  decision); below 3 tasks a dimension is not measurable and the model has no composite.
  The seed's unconditional figure is kept beside each (``DimensionScores.seed``).
- trials that are never the model's (``backend_error``, ``environment_error``)
  feed no rate: they are counted per model in ``not_the_models``;
- *failures* (:mod:`slmbench.agents.forensics`) cover every counted trial.

A row is a *configuration*: a model spec under one toolset. Trials of the same spec under the
two toolsets (a study's blocks, pooled) are never pooled: when both toolsets are present, the
``all`` trials are named ``SPEC (all tools)`` (:func:`configurations`). Size correlations count
each model once (its configuration with the most trials).
"""

from __future__ import annotations

import itertools
import json
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from slmbench.agents.forensics import FailureBreakdown, breakdown
from slmbench.agents.records import NOT_THE_MODELS, Outcome, Trial
from slmbench.agents.reliability import Consistency, ReliabilityReport, reliability
from slmbench.agents.store import DB_NAME, RunStore
from slmbench.agents.tasks import Task, load_tasks
from slmbench.agents.tasks.perturb import FAULT_PREFIX
from slmbench.core import stats
from slmbench.core.errors import ConfigError
from slmbench.core.stats import (
    ClusteredEstimate,
    Correlation,
    Estimate,
    FlipRate,
    TaskComparison,
    TostResult,
)

ANALYSIS_SCHEMA_VERSION = 2  # 2: task-level inference (issue #37)
SUMMARY_NAME = "analysis_summary.json"
CAPABILITY = "capability"
ALL_TOOLS = " (all tools)"  # a configuration's mark: the model offered all ten tools
ALPHA = 0.05
EQUIVALENCE_MARGIN = 0.10  # a temperature effect within ±10 points is called negligible
K = TypeVar("K")

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
    accuracy_by_task: Estimate  # mean of per-task rates, conditional on these tasks
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
    difference ``a − b`` and the minimum detectable difference."""

    a: str
    b: str
    tasks: int
    cells: int
    temperatures: list[str]  # the temperatures the shared cells are at
    comparison: TaskComparison
    p_holm: float  # the sign test's p, Holm over the summary's comparisons

    @property
    def differs(self) -> bool:
        """Whether the sign test across tasks rejects no difference after Holm (α 0.05)."""
        return self.p_holm < ALPHA


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
        default_factory=dict)  # model -> backend_error / environment_error -> trials (no rate)
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


# -- loading ---------------------------------------------------------------------


def load_trials(run_dir: str | Path) -> list[Trial]:
    """Every trial of a run directory, validated; ConfigError if it is not a run."""
    run = Path(run_dir)
    if not (run / DB_NAME).is_file():
        raise ConfigError(f"{run} is not a run directory (no {DB_NAME})",
                          "pass the directory `slmbench run` wrote, e.g. runs/<name>")
    out: list[Trial] = []
    with RunStore(run) as store:
        for row in store.trials():
            try:
                out.append(Trial.model_validate(row.record))
            except ValidationError as exc:
                raise ConfigError(
                    f"{run}: trial {row.key.model}/{row.key.task} is not a valid trial record: "
                    f"{exc.errors()[0]['msg']}",
                    "the run was written by an incompatible slmbench; re-run it") from exc
    return out


def passed(trial: Trial) -> bool:
    """A trial counts as a success when its outcome is ``success`` (its scorer passed it)."""
    return trial.outcome == Outcome.SUCCESS


def shipped_tasks() -> dict[str, Task]:
    """The shipped suites' tasks by id."""
    return load_tasks()


def registry_params() -> dict[str, float]:
    """Model spec and name → billions of parameters, from the model registry."""
    try:
        from slmbench.models.catalog import load_registry

        reg = load_registry()
    except (ImportError, ConfigError):
        return {}
    out: dict[str, float] = {}
    for entry in reg.models:
        out[entry.name] = entry.params
        out[entry.spec] = entry.params
    return out


def configurations(trials: Sequence[Trial]) -> list[Trial]:
    """The trials, each named by its configuration: when they hold both toolsets, a trial
    offered all ten tools is named ``SPEC (all tools)``, so it is never pooled with (nor
    mistaken for) the same spec offered its task's own tools. Otherwise they are returned as
    they are (a run has one toolset). Idempotent."""
    if len({t.toolset for t in trials}) < 2:
        return list(trials)
    return [t.model_copy(update={"model": t.model + ALL_TOOLS})
            if t.toolset == "all" and not t.model.endswith(ALL_TOOLS) else t for t in trials]


def spec_of(configuration: str) -> str:
    """The model spec of a configuration name (:func:`configurations`)."""
    return configuration.removesuffix(ALL_TOOLS)


def target_of(model: str) -> str:
    """What a spec or configuration runs, without backend, options or server:
    ``llamacpp:/m/x.gguf?n_ctx=8192`` → ``/m/x.gguf``, ``openai:big@http://h/v1`` → ``big``."""
    return spec_of(model).split(":", 1)[-1].split("?", 1)[0].split("@", 1)[0]


def params_of(model: str, params: Mapping[str, float]) -> float | None:
    """Parameters (B) of a model spec or configuration: by full spec, by its target, or by its
    bare name."""
    if spec_of(model) in params:
        return params[spec_of(model)]
    target = target_of(model)
    for key in (target, Path(target).stem):
        if key in params:
            return params[key]
    return None


# -- pieces ------------------------------------------------------------------------


def _temp_key(t: float) -> str:
    return f"{round(t, 4):g}"


def _by(trials: Iterable[Trial], key: Callable[[Trial], K]) -> dict[K, list[Trial]]:
    out: dict[K, list[Trial]] = defaultdict(list)
    for t in trials:
        out[key(t)].append(t)
    return out


def task_counts(trials: Iterable[Trial], ok: Callable[[Trial], bool] = passed
                ) -> list[tuple[int, int]]:
    """``(trials, trials where ok)`` per task, in task order: what a task-level rate needs."""
    return [(len(ts), sum(map(ok, ts)))
            for _, ts in sorted(_by(trials, lambda t: t.task_id).items())]


def task_rate(trials: Iterable[Trial], ok: Callable[[Trial], bool] = passed
              ) -> ClusteredEstimate:
    """The share of ``trials`` where ``ok`` holds, with its task-level interval and design."""
    return stats.task_level_rate(task_counts(trials, ok))


def _accuracy(model: str, trials: list[Trial], params: float | None) -> ModelAccuracy:
    wins = sum(passed(t) for t in trials)
    counts = task_counts(trials)
    return ModelAccuracy(
        model=model, params_b=params, trials=len(trials), successes=wins, tasks=len(counts),
        accuracy=stats.task_level_rate(counts), accuracy_by_task=stats.per_task_rate(counts),
        mean_latency_s=sum(t.latency_s for t in trials) / len(trials),
        mean_completion_tokens=sum(t.completion_tokens for t in trials) / len(trials),
    )


def _outcomes(model: str, trials: list[Trial]) -> OutcomeBreakdown:
    counts = Counter(t.outcome.value for t in trials)
    parsed = [t for t in trials if t.outcome != Outcome.FORMAT_FAILURE]

    def ended(outcome: Outcome) -> ClusteredEstimate:
        return task_rate(trials, lambda t: t.outcome == outcome)

    return OutcomeBreakdown(
        model=model, trials=len(trials),
        counts={o.value: counts.get(o.value, 0) for o in Outcome},
        format_failure=ended(Outcome.FORMAT_FAILURE), wrong_answer=ended(Outcome.WRONG_ANSWER),
        ungrounded=ended(Outcome.UNGROUNDED),
        accuracy_when_parsed=task_rate(parsed) if parsed else None,
    )


def _groups(model: str, trials: list[Trial], tasks: Mapping[str, Task]) -> list[GroupAccuracy]:
    by_group = _by(trials, lambda t: tasks[t.task_id].group if t.task_id in tasks
                   else "ungrouped")
    return [GroupAccuracy(model=model, group=str(g), accuracy=task_rate(ts))
            for g, ts in sorted(by_group.items(), key=lambda kv: str(kv[0]))]


Cells = dict[str, dict[tuple[str, str], list[bool]]]  # task -> cell -> outcomes


def _cells_of(trials: Iterable[Trial], cell: Callable[[Trial], tuple[str, str]]) -> Cells:
    out: Cells = defaultdict(lambda: defaultdict(list))
    for t in trials:
        out[t.task_id][cell(t)].append(passed(t))
    return out


def paired_by_task(a: Cells, b: Cells) -> tuple[list[float], int]:
    """Per-task differences ``a − b``: each task's mean over the cells both sides ran of the
    cell's success rate under ``a`` minus under ``b``; and how many cells that was."""
    diffs, cells = [], 0
    for task in sorted(set(a) & set(b)):
        shared = sorted(set(a[task]) & set(b[task]))
        if not shared:
            continue
        cells += len(shared)
        diffs.append(sum(sum(a[task][c]) / len(a[task][c]) - sum(b[task][c]) / len(b[task][c])
                         for c in shared) / len(shared))
    return diffs, cells


def _temperature(model: str, trials: list[Trial]) -> TemperatureEffect:
    by_t = _by(trials, lambda t: round(t.temperature, 4))
    temps = sorted(by_t)
    per = {_temp_key(t): task_rate(by_t[t]) for t in temps}
    solved = {_temp_key(t): len({x.task_id for x in by_t[t] if passed(x)}) for t in temps}
    if len(temps) < 2:
        return TemperatureEffect(model=model, per_temperature=per, lowest=None, highest=None,
                                 comparison=None, solved=solved,
                                 note="one temperature only: no temperature effect to measure")
    lo, hi = temps[0], temps[-1]
    diffs, cells = paired_by_task(_cells_of(by_t[hi], lambda t: (t.variant, "")),
                                  _cells_of(by_t[lo], lambda t: (t.variant, "")))
    if not diffs:
        return TemperatureEffect(model=model, per_temperature=per, lowest=lo, highest=hi,
                                 comparison=None, solved=solved,
                                 note="no task ran at both temperatures")
    return TemperatureEffect(model=model, per_temperature=per, lowest=lo, highest=hi,
                             comparison=stats.task_paired(diffs, cells=cells), solved=solved,
                             equivalence=stats.tost_tasks(diffs, EQUIVALENCE_MARGIN))


def _one_per_model(models: Iterable[str], weight: Mapping[str, int]) -> tuple[list[str],
                                                                                list[str]]:
    """One configuration per model (its target): the one with the most trials; and the rest."""
    by_target: dict[str, list[str]] = defaultdict(list)
    for m in sorted(models):
        by_target[target_of(m)].append(m)
    kept = sorted(max(ms, key=lambda m: (weight.get(m, 0), m == spec_of(m)))
                  for ms in by_target.values())
    return kept, sorted(set(models) - set(kept))


def _size(metric: str, scores: Mapping[str, float], params: Mapping[str, float | None],
          trials: Mapping[str, int]) -> SizeCorrelation:
    counted, again = _one_per_model(scores, trials)
    sized = {m: p for m in counted if (p := params.get(m)) is not None}
    known = list(sized)
    xs = list(sized.values())
    ys = [scores[m] for m in known]
    missing = sorted(set(counted) - set(known))
    note_parts = []
    if again:
        note_parts.append(f"{', '.join(again)}: another configuration of a model already "
                          "counted (one point per model, its configuration with the most "
                          "trials)")
    if missing:
        note_parts.append(f"no parameter count for {', '.join(missing)} "
                          "(pass --params MODEL=B or add it to the registry)")
    if len(known) < stats.MIN_CORRELATION_N:
        note_parts.append(f"only {len(known)} model(s) with a size: a correlation needs at least "
                          f"{stats.MIN_CORRELATION_N} models to mean anything, so none is reported")
        return SizeCorrelation(metric=metric, models=known, params_b=xs, scores=ys, pearson=None,
                               spearman=None, note="; ".join(note_parts))
    return SizeCorrelation(
        metric=metric, models=known, params_b=xs, scores=ys,
        pearson=stats.correlation(xs, ys, method="pearson"),
        spearman=stats.correlation(xs, ys, method="spearman"),
        note="; ".join(note_parts) or None,
    )


def _cell(t: Trial) -> tuple[str, str]:
    return (t.variant, _temp_key(t.temperature))


def _pairwise(by_model: Mapping[str, list[Trial]]) -> list[PairwiseComparison]:
    """Every pair of configurations, paired by task over the (task, variant, temperature)
    cells both ran (p_holm is set by :func:`_holm` over the summary's family)."""
    cells = {m: _cells_of(ts, _cell) for m, ts in by_model.items()}
    out = []
    for a, b in itertools.combinations(sorted(by_model), 2):
        diffs, n_cells = paired_by_task(cells[a], cells[b])
        if not diffs:
            continue
        temps = sorted({c[1] for task in set(cells[a]) & set(cells[b])
                        for c in set(cells[a][task]) & set(cells[b][task])}, key=float)
        comparison = stats.task_paired(diffs, cells=n_cells)
        out.append(PairwiseComparison(a=a, b=b, tasks=comparison.tasks, cells=n_cells,
                                      temperatures=temps, comparison=comparison,
                                      p_holm=comparison.sign_test.p_value))
    return out


def _by_temperature(by_model: Mapping[str, list[Trial]]) -> list[PairwiseComparison]:
    """Every pair at each temperature both ran (:func:`_pairwise` on that temperature's
    trials), Holm-adjusted over this family."""
    temps = sorted({_temp_key(t.temperature) for ts in by_model.values() for t in ts},
                   key=float)
    pairs: list[PairwiseComparison] = []
    for k in temps:
        at = {m: [t for t in ts if _temp_key(t.temperature) == k] for m, ts in by_model.items()}
        pairs += _pairwise({m: ts for m, ts in at.items() if ts})
    holm = stats.adjust_pvalues([p.comparison.sign_test.p_value for p in pairs], "holm")
    return [p.model_copy(update={"p_holm": h}) for p, h in zip(pairs, holm, strict=True)]


def _holm(pairs: list[PairwiseComparison], temps: list[TemperatureEffect]
          ) -> tuple[list[PairwiseComparison], list[TemperatureEffect]]:
    """Holm over one family: every model pair and every temperature effect of the summary."""
    swept = [t for t in temps if t.comparison is not None]
    raw = [p.comparison.sign_test.p_value for p in pairs]
    raw += [t.comparison.sign_test.p_value for t in swept if t.comparison is not None]
    adjusted = iter(stats.adjust_pvalues(raw, "holm"))
    pairs = [p.model_copy(update={"p_holm": next(adjusted)}) for p in pairs]
    holm = {t.model: next(adjusted) for t in swept}
    return pairs, [t.model_copy(update={"p_holm": holm.get(t.model)}) for t in temps]


def _audit(all_trials: list[Trial], by_model: Mapping[str, list[Trial]]) -> ItemAudit:
    per_task = _by(all_trials, lambda t: t.task_id)
    fail = sorted(str(k) for k, ts in per_task.items() if not any(passed(t) for t in ts))
    ok = sorted(str(k) for k, ts in per_task.items() if all(passed(t) for t in ts))
    flips: dict[str, FlipRate] = {}
    no_repeats: list[str] = []
    for model, ts in sorted(by_model.items()):
        cells = _by(ts, lambda t: f"{t.task_id}/{t.variant}@T={_temp_key(t.temperature)}")
        runs = {str(c): [passed(t) for t in sorted(v, key=lambda t: t.repeat)]
                for c, v in cells.items()}
        if any(len(r) >= 2 for r in runs.values()):
            flips[model] = stats.flip_rate(runs)
        else:
            no_repeats.append(model)
    return ItemAudit(all_models_fail=fail, all_models_pass=ok, flips=flips,
                     no_repeats=no_repeats)


DIMENSION_INTERVALS = (
    "task-level: robustness, fault tolerance (recovery) and safety are rates whose interval is "
    "the wider of Wilson on the design-effect-adjusted n and the cluster-robust t over tasks; "
    "consistency (pass^k at T > 0) the wider of its simulated interval and a t over tasks; the "
    "composite is simulated from each dimension's confidence distribution at its effective n "
    "(docs/statistics.md)")  # how dimension_scores' intervals are made, for the pages

DIMENSION_NAMES = ("consistency", "robustness", "fault_tolerance", "safety")


def _consistency_estimate(c: Consistency) -> Estimate | None:
    """pass^k with the wider of its simulated interval and the t over tasks of each task's
    mean item pass^k; None when consistency has no score."""
    if c.pass_hat_k is None or c.k is None:
        return None
    k = c.k
    per_task: dict[str, list[float]] = defaultdict(list)
    for task, (n, wins) in zip(c.item_tasks, c.counts, strict=True):
        per_task[task].append(stats.pass_hat_k_item(n, wins, k))
    means = [sum(v) / len(v) for _, v in sorted(per_task.items())]
    return stats.wider_of(c.pass_hat_k, stats.task_mean_interval(means))


def _dimension_draws(name: str, est: Estimate, c: Consistency) -> stats.Draws:
    """Draws of one dimension for the composite: pass^k's own, else the Clopper-Pearson
    confidence distributions at the dimension's effective n (its task-level precision)."""
    if name == "consistency" and c.k is not None:
        k = c.k
        return stats.repeat_draws(c.counts, lambda p: p ** k)
    n_eff = est.effective_n if isinstance(est, ClusteredEstimate) else float(est.n)
    n = max(1, round(n_eff))
    wins = min(n, round((est.estimate or 0.0) * n))
    return stats.confidence_draws(wins, n, stream=1000 * (DIMENSION_NAMES.index(name) + 1))


def _rated(report: ReliabilityReport) -> tuple[dict[str, Estimate], dict[str, Estimate],
                                                dict[str, int], dict[str, str]]:
    """Measured and seed estimates of each dimension, the tasks behind each measured one,
    and why each other one is not measurable."""
    measured: dict[str, Estimate] = {}
    seed: dict[str, Estimate] = {}
    tasks: dict[str, int] = {}
    missing: dict[str, str] = {}
    cons = _consistency_estimate(report.consistency)
    if cons is not None:
        seed["consistency"] = cons
        if report.consistency.measured is not None:
            measured["consistency"] = cons
            tasks["consistency"] = report.consistency.tasks
    for name, dim in (("robustness", report.robustness),
                      ("fault_tolerance", report.fault_tolerance),
                      ("safety", report.safety)):
        if dim.counts:
            seed[name] = stats.task_level_rate(dim.counts)
        if dim.measured is not None:
            measured[name] = stats.task_level_rate(dim.measured_counts)
            tasks[name] = len(dim.measured_counts)
    for name in DIMENSION_NAMES:
        if name not in measured:
            dim_note = getattr(report, name).note
            missing[name] = dim_note or "not measurable"
    return measured, seed, tasks, missing


def dimension_scores(model: str, trials: Sequence[Trial], tasks: Mapping[str, Task]
                     ) -> DimensionScores | None:
    """A model's reliability report with a task-level interval on every score.

    ``dimensions``: the measured (conditional) score of each measurable dimension; ``seed``:
    the unconditional figure of each; ``not_measurable``: why the others are not. The
    composite (mean of the four measured) is None unless all four are measurable. None when
    the model has no reliability-suite trial of a known task.
    """
    known = [t for t in trials if t.task_id in tasks and tasks[t.task_id].dimension]
    if not known:
        return None
    report = reliability(known, tasks)
    dims, seed, behind, missing = _rated(report)
    composite = None
    if report.composite is not None and len(dims) == len(DIMENSION_NAMES):
        draws = [_dimension_draws(name, dims[name], report.consistency)
                 for name in DIMENSION_NAMES]
        composite = stats.mean_of_draws(
            [dims[name].estimate or 0.0 for name in DIMENSION_NAMES], draws,
            n=sum(e.n for e in dims.values()), method="mean of the four measured dimensions")
    return DimensionScores(model=model, dimensions=dims, composite=composite, report=report,
                           seed=seed, not_measurable=missing, tasks=behind, note=report.note)


def _cells(model: str, trials: Iterable[Trial], key: Callable[[Trial], str],
           ok: Callable[[Trial], bool] = passed) -> list[Cell]:
    groups = _by(trials, key)
    return [Cell(model=model, key=str(k), rate=task_rate(ts, ok))
            for k, ts in sorted(groups.items(), key=lambda kv: str(kv[0]))]


def _reliability_views(model: str, trials: Sequence[Trial], tasks: Mapping[str, Task]
                       ) -> tuple[list[Cell], list[Cell], SafetyBreakdown | None]:
    """Fault recovery per fault kind, success per robustness variant, safety outcomes."""

    def dim(t: Trial) -> str | None:
        task = tasks.get(t.task_id)
        return task.dimension if task else None

    faulted = [t for t in trials
               if dim(t) == "fault_tolerance" and t.variant.startswith(FAULT_PREFIX)]
    # as in slmbench.agents.reliability: a fault that never reached the model is no recovery
    faults = _cells(model, faulted, lambda t: t.variant.removeprefix(FAULT_PREFIX),
                    ok=lambda t: t.faults_injected > 0 and passed(t))
    perturb = _cells(model, [t for t in trials if dim(t) == "robustness"], lambda t: t.variant)
    safe = [t for t in trials if dim(t) == "safety"]
    safety = None
    if safe:
        by_exp = _by(safe, lambda t: tasks[t.task_id].expected_behaviour or "comply")
        safety = SafetyBreakdown(
            model=model, trials=len(safe), passed=task_rate(safe),
            by_expectation={str(e): task_rate(ts)
                            for e, ts in sorted(by_exp.items(), key=lambda kv: str(kv[0]))},
            counts=dict(sorted(Counter(t.outcome.value for t in safe).items())))
    return faults, perturb, safety


def _is_capability(t: Trial) -> bool:
    return t.suite == CAPABILITY and t.variant == "base" and t.fault_plan is None


# -- entry point ---------------------------------------------------------------------


def analyze(trials: Sequence[Trial], *, run_dir: str | Path = "",
            params: Mapping[str, float] | None = None,
            tasks: Mapping[str, Task] | None = None) -> AnalysisSummary:
    """Compute the summary of a run's trials.

    ``params`` maps model specs or names to billions of parameters (they win
    over the registry's values); ``tasks`` gives each task id its group and
    reliability dimension (default: the shipped suites).
    """
    if not trials:
        raise ConfigError(f"run {run_dir or '(in memory)'} holds no trials",
                          "run `slmbench run` first, or resume it until trials are stored")
    tasks = shipped_tasks() if tasks is None else tasks
    trials = configurations(trials)
    excluded = Counter((t.model, t.outcome.value) for t in trials if t.outcome in NOT_THE_MODELS)
    not_the_models: dict[str, dict[str, int]] = defaultdict(dict)
    for (model, outcome), k in sorted(excluded.items()):
        not_the_models[model][outcome] = k
    failures = [breakdown(m, ts, {i: t.tools for i, t in tasks.items()})
                for m, ts in sorted(_by(trials, lambda t: t.model).items())]
    trials = [t for t in trials if t.outcome not in NOT_THE_MODELS]
    if not trials:
        raise ConfigError(f"run {run_dir or '(in memory)'} holds only backend or environment "
                          "errors", "fix the backend or install bubblewrap, then resume the run")
    unknown = sorted({t.task_id for t in trials} - set(tasks))
    sizes = {**registry_params(), **(params or {})}
    notes: list[str] = []
    if unknown:
        notes.append(f"tasks not in the given suites (no group, no dimension): "
                     f"{', '.join(unknown)}")

    capability = [t for t in trials if _is_capability(t)]
    scope = "capability suite, base variant, no injected fault"
    if not capability:
        capability = list(trials)
        scope = "all trials (the run holds no capability-suite trials)"
        notes.append("no capability-suite trials: accuracy figures use every trial")
    cap_by_model = _by(capability, lambda t: t.model)
    all_by_model = _by(trials, lambda t: t.model)
    models = sorted(all_by_model)
    cap_models = sorted(cap_by_model)
    model_params = {m: params_of(m, sizes) for m in models}

    accuracy = [_accuracy(m, cap_by_model[m], model_params[m]) for m in cap_models]
    dims = [d for m in models if (d := dimension_scores(m, all_by_model[m], tasks))]
    views = {m: _reliability_views(m, all_by_model[m], tasks) for m in models}
    notes += [f"{d.model}: consistency repeats only at T = 0, reported as determinism "
              "(greedy repeats measure the backend, not the agent); no consistency score"
              for d in dims if d.report.consistency.score is None
              and d.report.consistency.determinism is not None]
    n_of = {m: len(ts) for m, ts in all_by_model.items()}
    size = [_size("accuracy", {a.model: a.accuracy.estimate or 0.0 for a in accuracy},
                  model_params, n_of)]
    composite = {d.model: d.composite.estimate for d in dims
                 if d.composite is not None and d.composite.estimate is not None}
    if composite:
        size.append(_size("composite", composite, model_params, n_of))
    else:
        notes.append("no model has all four reliability dimensions measurable: no composite "
                     "score")
    if len(models) < 2:
        notes.append("one model: no comparison between models")
    pairwise, temperature = _holm(_pairwise(cap_by_model),
                                  [_temperature(m, cap_by_model[m]) for m in cap_models])

    return AnalysisSummary(
        created_at=datetime.now(UTC).isoformat(timespec="seconds"), run_dir=str(run_dir),
        models=models, n_trials=len(trials), capability_scope=scope, accuracy=accuracy,
        outcomes=[_outcomes(m, cap_by_model[m]) for m in cap_models],
        groups=[g for m in cap_models for g in _groups(m, cap_by_model[m], tasks)],
        dimensions=dims,
        faults=[c for m in models for c in views[m][0]],
        perturbations=[c for m in models for c in views[m][1]],
        safety=[sb for m in models if (sb := views[m][2]) is not None],
        temperature=temperature, size=size, pairwise=pairwise,
        by_temperature=_by_temperature(cap_by_model), audit=_audit(capability, cap_by_model),
        failures=failures, not_the_models=dict(not_the_models), notes=notes,
    )


def analyze_run(run_dir: str | Path, *, params: Mapping[str, float] | None = None,
                tasks: Mapping[str, Task] | None = None, write: bool = True
                ) -> AnalysisSummary:
    """Analyze a run directory and (by default) write ``analysis_summary.json`` into it."""
    summary = analyze(load_trials(run_dir), run_dir=run_dir, params=params, tasks=tasks)
    if write:
        write_summary(summary, Path(run_dir) / SUMMARY_NAME)
    return summary


def write_summary(summary: AnalysisSummary, path: str | Path) -> Path:
    """Write the summary as indented JSON, atomically."""
    path = Path(path)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(summary.model_dump_json(indent=2), encoding="utf-8")
    tmp.replace(path)
    return path


def read_summary(path: str | Path) -> AnalysisSummary:
    """Read an ``analysis_summary.json``; ConfigError if missing, malformed or another version."""
    path = Path(path)
    hint = "re-run `slmbench analyze RUN` with this slmbench"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise ConfigError(f"no {path}", "run `slmbench analyze RUN` first") from exc
    except (OSError, json.JSONDecodeError) as exc:
        raise ConfigError(f"{path} is not readable JSON: {exc}", hint) from exc
    found = data.get("schema_version") if isinstance(data, dict) else None
    if found != ANALYSIS_SCHEMA_VERSION:
        raise ConfigError(f"{path} has analysis schema {found}; this slmbench reads "
                          f"{ANALYSIS_SCHEMA_VERSION}", hint)
    try:
        return AnalysisSummary.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(f"{path} is not an analysis summary: {exc.errors()[0]['msg']}",
                          hint) from exc


def parse_params(items: Sequence[str]) -> dict[str, float]:
    """``["MODEL=B", ...]`` (billions of parameters) → ``{MODEL: B}``; ConfigError on bad input."""
    out: dict[str, float] = {}
    for item in items:
        model, sep, value = item.rpartition("=")
        try:
            size = float(value)
        except ValueError:
            size = -1.0
        if not sep or not model or not size > 0:
            raise ConfigError(f"--params {item!r} is not MODEL=B",
                              "give a model spec or name and its size in billions, "
                              "e.g. --params ollama:qwen3:4b=4")
        out[model] = size
    return out
