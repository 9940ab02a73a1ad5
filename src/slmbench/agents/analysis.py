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
``accuracy_by_task`` is the mean of per-task rates (each task weighing the same), beside it.
A task's instances (its family drawn in other worlds, issue #39) stay one task, one cluster:
its trials in every world and repeat count together, while a comparison pairs the two sides
only on the cells both ran, the instance being part of the cell.

Which trials feed which figure:

- *capability* figures use trials of the ``capability`` suite, base variant,
  no injected fault (or every trial, when a run holds no capability suite);
- *dimension* scores are :mod:`slmbench.agents.reliability`'s (trials of the
  reliability-suite tasks), measured conditional on their precondition (recovery among the
  tasks solved unfaulted, robustness on solved base tasks, safety on trials that reached a
  decision); below 3 tasks a dimension is not measurable and the model has no composite.
  The seed's unconditional figure is kept beside each (``DimensionScores.seed``).
- trials that are never the model's (:mod:`slmbench.agents.exclusion`: backend and
  environment errors, a context window set below the trained one) feed no rate: they are
  counted per model in ``not_the_models``, and ``exclusion_bounds`` gives each
  configuration's capability accuracy had they all counted as failures, or as successes;
- *failures* (:mod:`slmbench.agents.forensics`) cover every counted trial;
- the *stage funnel* (:mod:`slmbench.agents.funnel_rates`) covers the capability trials,
  its comparisons a Holm family of their own; its *stage-level reliability*
  (:mod:`slmbench.agents.funnel_reliability`) the reliability suite's trials;
- trials of a generated level of the difficulty ladder (``Trial.level`` other than
  ``"base"``) feed only the *ladder* (:mod:`slmbench.agents.ladder_rates`: success per level,
  the highest level held), beside the capability trials of the families' base instances:
  every other figure counts base-instance trials only, so a run's numbers do not move when
  levels are added to it.

A row is a *configuration*: a model spec under one toolset. Trials of the same spec under the
two toolsets (a study's blocks, pooled) are never pooled: when both toolsets are present, the
``all`` trials are named ``SPEC (all tools)``
(:func:`~slmbench.agents.configurations.configurations`). Size correlations count each model
once (its configuration with the most trials).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path

from slmbench.agents import paired
from slmbench.agents.configurations import configurations, params_of, spec_of, target_of
from slmbench.agents.dimensions import dimension_scores, reliability_views
from slmbench.agents.exclusion import excluded_as, rated
from slmbench.agents.forensics import breakdown
from slmbench.agents.funnel_rates import stage_funnels
from slmbench.agents.funnel_reliability import stage_reliability
from slmbench.agents.ladder_rates import level_ladders, split
from slmbench.agents.loading import load_trials, registry_params, shipped_tasks
from slmbench.agents.rates import by, in_accuracy_scope, passed, task_counts, task_rate
from slmbench.agents.records import Outcome, Trial
from slmbench.agents.summary import (
    AnalysisSummary,
    ExclusionBounds,
    GroupAccuracy,
    ItemAudit,
    ModelAccuracy,
    OutcomeBreakdown,
    SizeCorrelation,
)
from slmbench.agents.summary_file import SUMMARY_NAME, write_summary
from slmbench.agents.tasks import Task
from slmbench.core import stats
from slmbench.core.errors import ConfigError
from slmbench.core.stats import ClusteredEstimate, FlipRate


def _accuracy(model: str, trials: list[Trial], params: float | None) -> ModelAccuracy:
    wins = sum(passed(t) for t in trials)
    counts = task_counts(trials)
    return ModelAccuracy(
        model=model, params_b=params, trials=len(trials), successes=wins, tasks=len(counts),
        accuracy=stats.task_level_rate(counts), accuracy_by_task=stats.per_task_rate(counts),
        mean_latency_s=sum(t.latency_s for t in trials) / len(trials),
        mean_completion_tokens=sum(t.completion_tokens for t in trials) / len(trials),
    )


def _exclusion_bounds(trials: Sequence[Trial]) -> list[ExclusionBounds]:
    """Per configuration with capability trials counted apart: its capability accuracy had
    every one of them counted as a failure, and as a success (``trials``: before
    :func:`~slmbench.agents.exclusion.rated`; every trial when none is a capability trial,
    as the accuracy itself)."""
    pool = [t for t in trials if in_accuracy_scope(t)] or list(trials)  # as accuracy counts
    out = []
    for model, ts in sorted(by(pool, lambda t: t.model).items()):
        excluded = sum(excluded_as(t) is not None for t in ts)
        if excluded:
            out.append(ExclusionBounds(
                model=model, excluded=excluded,
                as_failures=task_rate(ts, passed),
                as_successes=task_rate(ts, lambda t: passed(t) or excluded_as(t) is not None)))
    return out


def _outcomes(model: str, trials: list[Trial]) -> OutcomeBreakdown:
    counts = Counter(t.outcome.value for t in trials)
    parsed = [t for t in trials if t.outcome != Outcome.FORMAT_FAILURE]

    def ended(outcome: Outcome) -> ClusteredEstimate:
        return task_rate(trials, lambda t: t.outcome == outcome)

    return OutcomeBreakdown(
        model=model, trials=len(trials),
        counts={o.value: counts.get(o.value, 0) for o in Outcome},
        format_failure=ended(Outcome.FORMAT_FAILURE), wrong_answer=ended(Outcome.WRONG_ANSWER),
        ungrounded=ended(Outcome.UNGROUNDED), dumped=ended(Outcome.DUMPED),
        accuracy_when_parsed=task_rate(parsed) if parsed else None,
    )


def _groups(model: str, trials: list[Trial], tasks: Mapping[str, Task]) -> list[GroupAccuracy]:
    by_group = by(trials, lambda t: tasks[t.task_id].group if t.task_id in tasks
                   else "ungrouped")
    return [GroupAccuracy(model=model, group=str(g), accuracy=task_rate(ts))
            for g, ts in sorted(by_group.items(), key=lambda kv: str(kv[0]))]


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


def _flip_cell(t: Trial) -> str:
    """The cell whose repeats a flip is counted over: ``TASK/VARIANT@T=0.7``, and ``#i`` after
    the task for a drawn instance (another world is another cell)."""
    task = f"{t.task_id}#{t.instance}" if t.instance else t.task_id
    return f"{task}/{t.variant}@T={paired.temp_key(t.temperature)}"


def _audit(all_trials: list[Trial], by_model: Mapping[str, list[Trial]]) -> ItemAudit:
    per_task = by(all_trials, lambda t: t.task_id)
    fail = sorted(str(k) for k, ts in per_task.items() if not any(passed(t) for t in ts))
    ok = sorted(str(k) for k, ts in per_task.items() if all(passed(t) for t in ts))
    flips: dict[str, FlipRate] = {}
    no_repeats: list[str] = []
    for model, ts in sorted(by_model.items()):
        cells = by(ts, _flip_cell)
        runs = {str(c): [passed(t) for t in sorted(v, key=lambda t: t.repeat)]
                for c, v in cells.items()}
        if any(len(r) >= 2 for r in runs.values()):
            flips[model] = stats.flip_rate(runs)
        else:
            no_repeats.append(model)
    return ItemAudit(all_models_fail=fail, all_models_pass=ok, flips=flips,
                     no_repeats=no_repeats)


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
    ladder = level_ladders(trials)  # base and generated levels; their own records only
    trials, _ = split(trials)  # every other figure: the families' base instances only
    if not trials:
        raise ConfigError(f"run {run_dir or '(in memory)'} holds no trial of a base instance "
                          "(only generated levels of the ladder)",
                          "run the families' base instances too: every figure but the "
                          "ladder counts them")
    excluded = Counter((t.model, why) for t in trials if (why := excluded_as(t)))
    not_the_models: dict[str, dict[str, int]] = defaultdict(dict)
    for (model, outcome), k in sorted(excluded.items()):
        not_the_models[model][outcome] = k
    failures = [breakdown(m, ts, {i: t.tools for i, t in tasks.items()})
                for m, ts in sorted(by(trials, lambda t: t.model).items())]
    bounds = _exclusion_bounds(trials)
    trials = rated(trials)
    if not trials:
        raise ConfigError(f"run {run_dir or '(in memory)'} holds only trials that are not the "
                          "model's (backend, environment or context-window errors)",
                          "fix the backend or install bubblewrap, then resume the run; or "
                          "run again with ?n_ctx= at the model's trained window")
    unknown = sorted({t.task_id for t in trials} - set(tasks))
    sizes = {**registry_params(), **(params or {})}
    notes: list[str] = []
    if unknown:
        notes.append(f"tasks not in the given suites (no group, no dimension): "
                     f"{', '.join(unknown)}")

    capability = [t for t in trials if in_accuracy_scope(t)]
    scope = "capability suite, base variant, no injected fault"
    if not capability:
        capability = list(trials)
        scope = "all trials (the run holds no capability-suite trials)"
        notes.append("no capability-suite trials: accuracy figures use every trial")
    cap_by_model = by(capability, lambda t: t.model)
    all_by_model = by(trials, lambda t: t.model)
    models = sorted(all_by_model)
    cap_models = sorted(cap_by_model)
    model_params = {m: params_of(m, sizes) for m in models}

    accuracy = [_accuracy(m, cap_by_model[m], model_params[m]) for m in cap_models]
    dims = [d for m in models if (d := dimension_scores(m, all_by_model[m], tasks))]
    views = {m: reliability_views(m, all_by_model[m], tasks) for m in models}
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
    funnel, funnel_pairs = stage_funnels(cap_by_model, tasks)
    pairwise, temperature = paired.holm(
        paired.pairwise(cap_by_model),
        [paired.temperature_effect(m, cap_by_model[m]) for m in cap_models])

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
        by_temperature=paired.by_temperature(cap_by_model), audit=_audit(capability, cap_by_model),
        failures=failures, not_the_models=dict(not_the_models), exclusion_bounds=bounds,
        notes=notes, funnel=funnel, funnel_pairs=funnel_pairs,
        stage_reliability=[x for m in models for x in stage_reliability(m, all_by_model[m], tasks)],
        ladder=ladder,
    )


def analyze_run(run_dir: str | Path, *, params: Mapping[str, float] | None = None,
                tasks: Mapping[str, Task] | None = None, write: bool = True
                ) -> AnalysisSummary:
    """Analyze a run directory and (by default) write ``analysis_summary.json`` into it."""
    summary = analyze(load_trials(run_dir), run_dir=run_dir, params=params, tasks=tasks)
    if write:
        write_summary(summary, Path(run_dir) / SUMMARY_NAME)
    return summary


def analyze_and_write(trials: Sequence[Trial], summary_path: str | Path, *,
                      run_dir: str | Path = "", params: Mapping[str, float] | None = None
                      ) -> AnalysisSummary:
    """``trials`` analysed afresh (so a report never shows a stale summary), the summary
    written to ``summary_path``: what ``report.build_report`` draws its pages from."""
    summary = analyze(trials, run_dir=run_dir, params=params)
    write_summary(summary, summary_path)
    return summary
