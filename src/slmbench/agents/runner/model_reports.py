"""Per-model run reports (``reports/<model-slug>.json``) and the ``trials.jsonl`` export.

The schema is :class:`ModelReport`, versioned by ``REPORT_SCHEMA_VERSION`` and
documented in ``docs/report-schema.md``. Reports are rebuilt from the run
store at the end of every session and written atomically, so they always
describe exactly the trials stored.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict

from slmbench.agents.exclusion import rated as rated_trials
from slmbench.agents.records import Outcome, Trial
from slmbench.agents.store import RunStore
from slmbench.core.sqlite import writing
from slmbench.core.stats import ClusteredEstimate, Estimate, task_level_rate, wilson

REPORT_SCHEMA_VERSION = 3  # 3: task-level rates with their design (issue #37)


class TaskOutcomes(BaseModel):
    """Every stored trial of one task (all variants, temperatures and repeats)."""

    model_config = ConfigDict(frozen=True)

    task_id: str
    suite: str
    n: int
    success: Estimate | None  # Wilson 95%; None when no trial is the model's (agents.exclusion)
    outcomes: dict[str, int]
    mean_score: float | None  # mean Score.value over trials that have a score
    mean_steps: float


class LatencyStats(BaseModel):
    """Seconds per trial: inside the model (``model_*``) and end to end (``wall_*``)."""

    model_config = ConfigDict(frozen=True)

    model_mean_s: float
    model_median_s: float
    model_p95_s: float
    wall_mean_s: float
    wall_p95_s: float


class TokenStats(BaseModel):
    model_config = ConfigDict(frozen=True)

    prompt_total: int
    completion_total: int
    prompt_mean: float
    completion_mean: float


class RunnerStats(BaseModel):
    """What the runner measured while running this model (all sessions added up)."""

    model_config = ConfigDict(frozen=True)

    trials_run: int = 0  # trials this model ran (resumed sessions added up)
    retries: int = 0  # transient backend faults retried
    backend_errors: int = 0  # trials stored as backend_error
    cache_hits: int = 0  # generate calls answered from the response cache
    model_calls: int = 0  # generate calls that reached the model
    wall_s: float = 0.0  # time spent running this model's trials
    completion_tokens: int = 0  # tokens the model generated (cache hits excluded)
    trials_per_min: float = 0.0
    tokens_per_s: float = 0.0  # completion_tokens / wall_s


class ModelReport(BaseModel):
    """One model's results in one run."""

    model_config = ConfigDict(frozen=True)

    schema_version: int = REPORT_SCHEMA_VERSION
    model: str
    run_dir: str
    experiment: str | None
    grid_fingerprint: str
    generated_at: str
    planned: int
    stored: int
    complete: bool
    success: ClusteredEstimate | None  # task-level 95% interval; None with no trial yet
    outcomes: dict[str, int]
    by_suite: dict[str, ClusteredEstimate]
    by_temperature: dict[str, ClusteredEstimate]
    by_variant: dict[str, ClusteredEstimate]
    tasks: list[TaskOutcomes]
    dimensions: dict[str, Any] | None
    dimensions_note: str | None
    latency: LatencyStats | None
    tokens: TokenStats
    runner: RunnerStats


def model_slug(spec: str, taken: Iterable[str] = ()) -> str:
    """A file-name-safe name for a model spec; a hash suffix if another spec took it."""
    slug = re.sub(r"[^A-Za-z0-9._-]+", "_", spec).strip("_.") or "model"
    if len(slug) > 80 or slug in set(taken):
        slug = f"{slug[:60]}-{hashlib.sha256(spec.encode()).hexdigest()[:8]}"
    return slug


def _task_rate(trials: Sequence[Trial]) -> ClusteredEstimate:
    """Success among ``trials`` with its task-level interval and design (the task is the
    unit that repeats: ``stats.task_level_rate``)."""
    by: dict[str, list[bool]] = defaultdict(list)
    for t in trials:
        by[t.task_id].append(t.outcome == Outcome.SUCCESS)
    return task_level_rate([(len(v), sum(v)) for _, v in sorted(by.items())])


def _rates(groups: dict[str, list[Trial]]) -> dict[str, ClusteredEstimate]:
    return {k: _task_rate(v) for k, v in sorted(groups.items())}


def _dimensions(trials: Sequence[Trial],
                tasks: Mapping[str, Any]) -> tuple[dict[str, Any] | None, str | None]:
    """Reliability dimension scores (``agents.reliability``) of the reliability-suite trials."""
    try:
        from slmbench.agents.reliability import reliability
        from slmbench.agents.tasks import Task
    except ImportError:
        return None, "slmbench.agents.reliability is not available in this version"
    if not all(isinstance(tasks.get(t.task_id), Task) for t in trials):
        return None, "some trials' tasks are not known slmbench tasks"
    if not any(tasks[t.task_id].dimension for t in trials):
        return None, "no reliability-suite trials in this run"
    return reliability(trials, tasks).model_dump(mode="json"), None


def build_model_report(trials: Sequence[Trial], *, model: str, run_dir: Path,
                       experiment: str | None,
                       fingerprint: str, planned: int, runner: RunnerStats,
                       tasks: Mapping[str, Any]) -> ModelReport:
    """One model's :class:`ModelReport` from its stored trials (every rate over several tasks
    task-level; a task's own success rate Wilson over its trials)."""
    # trials that are not the model's (agents/exclusion.py): no rate counts them
    rated = rated_trials(trials)
    by_suite: dict[str, list[Trial]] = defaultdict(list)
    by_temp: dict[str, list[Trial]] = defaultdict(list)
    by_variant: dict[str, list[Trial]] = defaultdict(list)
    by_task: dict[str, list[Trial]] = defaultdict(list)
    for t in rated:
        by_suite[t.suite].append(t)
        by_temp[f"{t.temperature:g}"].append(t)
        by_variant[t.variant].append(t)
    for t in trials:
        by_task[t.task_id].append(t)
    task_rows = []
    for task_id, ts in sorted(by_task.items()):
        scores = [t.score.value for t in ts if t.score is not None]
        counted = rated_trials(ts)
        task_rows.append(TaskOutcomes(
            task_id=task_id, suite=ts[0].suite, n=len(ts),
            success=wilson(sum(t.outcome == Outcome.SUCCESS for t in counted), len(counted))
            if counted else None,
            outcomes=dict(Counter(t.outcome.value for t in ts)),
            mean_score=float(np.mean(scores)) if scores else None,
            mean_steps=float(np.mean([len(t.steps) for t in ts])),
        ))
    latency = None
    if trials:
        model_s = np.array([t.latency_s for t in trials])
        wall_s = np.array([t.wall_s for t in trials])
        latency = LatencyStats(
            model_mean_s=float(model_s.mean()), model_median_s=float(np.median(model_s)),
            model_p95_s=float(np.percentile(model_s, 95)), wall_mean_s=float(wall_s.mean()),
            wall_p95_s=float(np.percentile(wall_s, 95)),
        )
    n = max(1, len(trials))
    prompt = sum(t.prompt_tokens for t in trials)
    completion = sum(t.completion_tokens for t in trials)
    dims, note = _dimensions(rated, tasks)
    return ModelReport(
        model=model, run_dir=str(run_dir), experiment=experiment, grid_fingerprint=fingerprint,
        generated_at=datetime.now(UTC).isoformat(timespec="seconds"), planned=planned,
        stored=len(trials), complete=len(trials) >= planned,
        success=_task_rate(rated) if rated else None,
        outcomes=dict(Counter(t.outcome.value for t in trials)),
        by_suite=_rates(by_suite), by_temperature=_rates(by_temp), by_variant=_rates(by_variant),
        tasks=task_rows, dimensions=dims, dimensions_note=note, latency=latency,
        tokens=TokenStats(prompt_total=prompt, completion_total=completion,
                          prompt_mean=prompt / n, completion_mean=completion / n),
        runner=runner,
    )


def _write_atomic(path: Path, text: str) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    with writing(path, "run report"):
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(path)


def write_reports(store: RunStore, *, planned: dict[str, int], runner: dict[str, RunnerStats],
                  experiment: str | None, fingerprint: str,
                  tasks: Mapping[str, Any]) -> dict[str, Path]:
    """Write ``reports/<slug>.json`` for every model planned or stored, and ``trials.jsonl``."""
    out_dir = store.run_dir / "reports"
    with writing(out_dir, "reports folder"):
        out_dir.mkdir(parents=True, exist_ok=True)
    written: dict[str, Path] = {}
    models = list(dict.fromkeys([*planned, *store.models()]))
    for model in models:
        trials = [Trial.model_validate(s.record) for s in store.trials(model)]
        report = build_model_report(
            trials, model=model, run_dir=store.run_dir, experiment=experiment,
            fingerprint=fingerprint, planned=planned.get(model, len(trials)),
            runner=runner.get(model, RunnerStats()), tasks=tasks)
        path = out_dir / f"{model_slug(model, (p.stem for p in written.values()))}.json"
        _write_atomic(path, report.model_dump_json(indent=2) + "\n")
        written[model] = path
    store.export_jsonl(store.run_dir / "trials.jsonl")
    return written
