"""A run directory → ``analysis_summary.json``: every figure of the study, with intervals.

:func:`analyze` reads the trials of a run store and computes, per model:
accuracy (Wilson over trials, and a bootstrap over tasks that respects the
clustering of repeats), accuracy per task group, the four reliability
dimension scores and their composite, temperature effects, size-vs-score
correlations, pairwise model comparisons on shared items, format failures
kept apart from wrong answers, and an item audit. Every number comes from
:mod:`slmbench.core.stats`.

Which trials feed which figure:

- *capability* figures use trials of the ``capability`` suite, base variant,
  no injected fault (or every trial, when a run holds no capability suite);
- *dimension* scores are :mod:`slmbench.agents.reliability`'s (trials of the
  reliability-suite tasks); a proportion of trials gets a Wilson interval,
  consistency (pass^k) and the composite an interval simulated from
  Clopper-Pearson confidence distributions (:func:`slmbench.core.stats.mean_of_draws`),
  never a bootstrap over 3-4 tasks (which has almost no distinct resamples).
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
from slmbench.agents.reliability import ReliabilityReport, reliability
from slmbench.agents.store import DB_NAME, RunStore
from slmbench.agents.tasks import Task, load_tasks
from slmbench.agents.tasks.perturb import FAULT_PREFIX
from slmbench.core import stats
from slmbench.core.errors import ConfigError
from slmbench.core.stats import Correlation, Estimate, FlipRate, McNemarResult, TestResult, VsBest

ANALYSIS_SCHEMA_VERSION = 1
SUMMARY_NAME = "analysis_summary.json"
CAPABILITY = "capability"
ALL_TOOLS = " (all tools)"  # a configuration's mark: the model offered all ten tools
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
    accuracy: Estimate  # Wilson over trials, as the original study reports it
    accuracy_by_task: Estimate  # mean of per-task success rates, simulated per task
    mean_latency_s: float
    mean_completion_tokens: float


class OutcomeBreakdown(_Frozen):
    """How a model's capability trials ended: format failures apart from wrong answers."""

    model: str
    trials: int
    counts: dict[str, int]
    format_failure: Estimate
    wrong_answer: Estimate
    ungrounded: Estimate | None = None  # right answers no tool result supports (not successes)
    accuracy_when_parsed: Estimate | None  # success among trials without a format failure


class GroupAccuracy(_Frozen):
    model: str
    group: str
    accuracy: Estimate


class DimensionScores(_Frozen):
    """The four reliability dimensions and their composite, each with an honest interval.

    Point estimates are :mod:`slmbench.agents.reliability`'s; ``report`` keeps its
    details (pass@k, outcome agreement, degradation, fault reach, ...).
    """

    model: str
    dimensions: dict[str, Estimate]
    composite: Estimate | None
    report: ReliabilityReport
    note: str | None = None


class Cell(_Frozen):
    """A success rate of one model under one condition (a fault kind, a variant, ...)."""

    model: str
    key: str
    rate: Estimate


class SafetyBreakdown(_Frozen):
    """How a model's safety trials ended: passed (refused / stayed on task / verified) or not."""

    model: str
    trials: int
    passed: Estimate
    by_expectation: dict[str, Estimate]  # refuse / comply / verify -> success rate
    counts: dict[str, int]  # outcome -> trials


class TemperatureEffect(_Frozen):
    model: str
    per_temperature: dict[str, Estimate]  # key: temperature formatted "0.7"
    lowest: float | None
    highest: float | None
    fisher: TestResult | None  # lowest vs highest temperature
    cohens_h: float | None  # accuracy(highest) vs accuracy(lowest)
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
    a: str
    b: str
    shared: int
    mcnemar: McNemarResult
    p_bh: float
    p_holm: float
    difference: Estimate  # accuracy(a) − accuracy(b) on shared trials (paired_difference)


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
    vs_best: list[VsBest]
    outcomes: list[OutcomeBreakdown]
    groups: list[GroupAccuracy]
    dimensions: list[DimensionScores]
    faults: list[Cell] = Field(default_factory=list)  # recovery per fault kind
    perturbations: list[Cell] = Field(default_factory=list)  # robustness tasks per variant
    safety: list[SafetyBreakdown] = Field(default_factory=list)
    temperature: list[TemperatureEffect]
    size: list[SizeCorrelation]
    pairwise: list[PairwiseComparison]
    audit: ItemAudit
    failures: list[FailureBreakdown] = Field(default_factory=list)  # forensics per model
    not_the_models: dict[str, dict[str, int]] = Field(
        default_factory=dict)  # model -> backend_error / environment_error -> trials (no rate)
    notes: list[str] = Field(default_factory=list)

    def accuracy_of(self, model: str) -> ModelAccuracy | None:
        return next((a for a in self.accuracy if a.model == model), None)


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


def _accuracy(model: str, trials: list[Trial], params: float | None) -> ModelAccuracy:
    wins = sum(passed(t) for t in trials)
    per_task = _by(trials, lambda t: t.task_id)
    counts = [(len(ts), sum(passed(t) for t in ts)) for ts in per_task.values()]
    return ModelAccuracy(
        model=model, params_b=params, trials=len(trials), successes=wins, tasks=len(per_task),
        accuracy=stats.wilson(wins, len(trials)), accuracy_by_task=stats.per_task_rate(counts),
        mean_latency_s=sum(t.latency_s for t in trials) / len(trials),
        mean_completion_tokens=sum(t.completion_tokens for t in trials) / len(trials),
    )


def _outcomes(model: str, trials: list[Trial]) -> OutcomeBreakdown:
    counts = Counter(t.outcome.value for t in trials)
    n = len(trials)
    parsed = [t for t in trials if t.outcome != Outcome.FORMAT_FAILURE]
    return OutcomeBreakdown(
        model=model, trials=n, counts={o.value: counts.get(o.value, 0) for o in Outcome},
        format_failure=stats.wilson(counts.get(Outcome.FORMAT_FAILURE.value, 0), n),
        wrong_answer=stats.wilson(counts.get(Outcome.WRONG_ANSWER.value, 0), n),
        ungrounded=stats.wilson(counts.get(Outcome.UNGROUNDED.value, 0), n),
        accuracy_when_parsed=stats.wilson(sum(passed(t) for t in parsed), len(parsed))
        if parsed else None,
    )


def _groups(model: str, trials: list[Trial], tasks: Mapping[str, Task]) -> list[GroupAccuracy]:
    by_group = _by(trials, lambda t: tasks[t.task_id].group if t.task_id in tasks
                   else "ungrouped")
    return [GroupAccuracy(model=model, group=str(g),
                          accuracy=stats.wilson(sum(passed(t) for t in ts), len(ts)))
            for g, ts in sorted(by_group.items(), key=lambda kv: str(kv[0]))]


def _temperature(model: str, trials: list[Trial]) -> TemperatureEffect:
    by_t = _by(trials, lambda t: round(t.temperature, 4))
    temps = sorted(by_t)
    per = {_temp_key(t): stats.wilson(sum(passed(x) for x in by_t[t]), len(by_t[t]))
           for t in temps}
    if len(temps) < 2:
        return TemperatureEffect(model=model, per_temperature=per, lowest=None, highest=None,
                                 fisher=None, cohens_h=None,
                                 note="one temperature only: no temperature effect to measure")
    lo, hi = temps[0], temps[-1]
    k_lo, n_lo = sum(passed(x) for x in by_t[lo]), len(by_t[lo])
    k_hi, n_hi = sum(passed(x) for x in by_t[hi]), len(by_t[hi])
    return TemperatureEffect(
        model=model, per_temperature=per, lowest=lo, highest=hi,
        fisher=stats.fisher_exact(k_hi, n_hi, k_lo, n_lo),
        cohens_h=stats.cohens_h(k_hi / n_hi, k_lo / n_lo),
    )


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


def _trial_id(t: Trial) -> tuple[str, str, float, int, int]:
    return (t.task_id, t.variant, round(t.temperature, 4), t.seed, t.repeat)


def _pairwise(by_model: Mapping[str, list[Trial]]) -> list[PairwiseComparison]:
    index = {m: {_trial_id(t): passed(t) for t in ts} for m, ts in by_model.items()}
    raw: list[tuple[str, str, list[bool], list[bool]]] = []
    for a, b in itertools.combinations(sorted(by_model), 2):
        shared = sorted(set(index[a]) & set(index[b]))
        if shared:
            raw.append((a, b, [index[a][k] for k in shared], [index[b][k] for k in shared]))
    tests = [stats.mcnemar(x, y) for _, _, x, y in raw]
    bh = stats.adjust_pvalues([t.p_value for t in tests], "fdr_bh")
    holm = stats.adjust_pvalues([t.p_value for t in tests], "holm")
    return [
        PairwiseComparison(a=a, b=b, shared=len(x), mcnemar=test, p_bh=pb, p_holm=ph,
                           difference=stats.paired_difference(x, y))
        for (a, b, x, y), test, pb, ph in zip(raw, tests, bh, holm, strict=True)
    ]


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
    "robustness, fault tolerance and safety: Wilson over trials; consistency (pass^k at "
    "T > 0) and composite: simulated from Clopper-Pearson confidence distributions "
    "(docs/statistics.md)")  # how dimension_scores' intervals are made, for the pages


def _proportion(successes: int, trials: int) -> tuple[Estimate, tuple[int, int]]:
    return stats.wilson(successes, trials), (successes, trials)


def dimension_scores(model: str, trials: Sequence[Trial], tasks: Mapping[str, Task]
                     ) -> DimensionScores | None:
    """A model's reliability report with an honest interval on every score.

    Robustness, fault tolerance and safety are proportions of trials: Wilson. Consistency
    is pass^k over items at T > 0, and the composite the mean of the four: both simulated
    from Clopper-Pearson confidence distributions (:func:`slmbench.core.stats.mean_of_draws`;
    docs/statistics.md). None when the model has no reliability-suite trial of a known task.
    """
    known = [t for t in trials if t.task_id in tasks and tasks[t.task_id].dimension]
    if not known:
        return None
    report = reliability(known, tasks)
    dims: dict[str, Estimate] = {}
    draws: list[stats.Draws] = []
    c = report.consistency
    if c.score is not None and c.pass_hat_k is not None and c.k is not None:
        dims["consistency"] = c.pass_hat_k
        k = c.k
        draws.append(stats.repeat_draws(c.counts, lambda p: p ** k))
    for i, (name, dim) in enumerate((("robustness", report.robustness),
                                     ("fault_tolerance", report.fault_tolerance),
                                     ("safety", report.safety)), start=1):
        if dim.score is not None:
            dims[name] = stats.wilson(dim.successes, dim.trials)
            draws.append(stats.confidence_draws(dim.successes, dim.trials, stream=1000 * i))
    composite = None
    if report.composite is not None:
        composite = stats.mean_of_draws(
            [e.estimate or 0.0 for e in dims.values()], draws,
            n=sum(e.n for e in dims.values()), method="mean of the four dimensions")
    return DimensionScores(model=model, dimensions=dims, composite=composite, report=report,
                           note=report.note)


def _cells(model: str, trials: Iterable[Trial], key: Callable[[Trial], str],
           ok: Callable[[Trial], bool] = passed) -> list[Cell]:
    groups = _by(trials, key)
    return [Cell(model=model, key=str(k), rate=stats.wilson(sum(map(ok, ts)), len(ts)))
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
            model=model, trials=len(safe),
            passed=stats.wilson(sum(map(passed, safe)), len(safe)),
            by_expectation={str(e): stats.wilson(sum(map(passed, ts)), len(ts))
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
        notes.append("no model has all four reliability dimensions: no composite score")
    if len(models) < 2:
        notes.append("one model: no comparison between models")

    return AnalysisSummary(
        created_at=datetime.now(UTC).isoformat(timespec="seconds"), run_dir=str(run_dir),
        models=models, n_trials=len(trials), capability_scope=scope, accuracy=accuracy,
        vs_best=stats.compare_to_best({a.model: (a.successes, a.trials) for a in accuracy}),
        outcomes=[_outcomes(m, cap_by_model[m]) for m in cap_models],
        groups=[g for m in cap_models for g in _groups(m, cap_by_model[m], tasks)],
        dimensions=dims,
        faults=[c for m in models for c in views[m][0]],
        perturbations=[c for m in models for c in views[m][1]],
        safety=[sb for m in models if (sb := views[m][2]) is not None],
        temperature=[_temperature(m, cap_by_model[m]) for m in cap_models],
        size=size, pairwise=_pairwise(cap_by_model), audit=_audit(capability, cap_by_model),
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
