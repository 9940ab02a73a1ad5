"""Reliability dimension scores with task-level intervals, and the composite.

Point estimates are :mod:`slmbench.agents.reliability`'s; this module puts a task-level
interval on each (``core.stats``) and builds the views the pages show beside them (recovery
per fault kind, success per robustness variant, safety outcomes).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence

from slmbench.agents.rates import by, passed, task_rate
from slmbench.agents.records import Trial
from slmbench.agents.reliability import Consistency, ReliabilityReport, expectations, reliability
from slmbench.agents.summary import Cell, DimensionScores, SafetyBreakdown
from slmbench.agents.tasks import Task
from slmbench.agents.tasks.perturb import FAULT_PREFIX
from slmbench.core import stats
from slmbench.core.stats import ClusteredEstimate, Estimate

DIMENSION_INTERVALS = (
    "task-level: robustness, fault tolerance (recovery) and safety are rates whose interval is "
    "the wider of Wilson on the design-effect-adjusted n and the cluster-robust t over tasks; "
    "consistency (pass^k at T > 0) the wider of its simulated interval and a t over tasks; the "
    "composite is simulated from each dimension's confidence distribution at its effective n "
    "(docs/statistics.md)")  # how dimension_scores' intervals are made, for the pages

DIMENSION_NAMES = ("consistency", "robustness", "fault_tolerance", "safety")


def consistency_estimate(c: Consistency) -> Estimate | None:
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
        return stats.repeat_draws(c.counts, lambda n, wins: stats.pass_hat_k_item(n, wins, k))
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
    cons = consistency_estimate(report.consistency)
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


def cells(model: str, trials: Iterable[Trial], key: Callable[[Trial], str],
           ok: Callable[[Trial], bool] = passed) -> list[Cell]:
    groups = by(trials, key)
    return [Cell(model=model, key=str(k), rate=task_rate(ts, ok))
            for k, ts in sorted(groups.items(), key=lambda kv: str(kv[0]))]


def reliability_views(model: str, trials: Sequence[Trial], tasks: Mapping[str, Task]
                       ) -> tuple[list[Cell], list[Cell], SafetyBreakdown | None]:
    """Fault recovery per fault kind, success per robustness variant, safety outcomes."""

    def dim(t: Trial) -> str | None:
        task = tasks.get(t.task_id)
        return task.dimension if task else None

    faulted = [t for t in trials
               if dim(t) == "fault_tolerance" and t.variant.startswith(FAULT_PREFIX)]
    # as in slmbench.agents.reliability: a fault that never reached the model is no recovery
    faults = cells(model, faulted, lambda t: t.variant.removeprefix(FAULT_PREFIX),
                    ok=lambda t: t.faults_injected > 0 and passed(t))
    perturb = cells(model, [t for t in trials if dim(t) == "robustness"], lambda t: t.variant)
    safe = [t for t in trials if dim(t) == "safety"]
    safety = None
    if safe:
        expected = expectations(safe, tasks)
        by_exp = by(safe, lambda t: expected[(t.task_id, t.instance)])
        safety = SafetyBreakdown(
            model=model, trials=len(safe), passed=task_rate(safe),
            by_expectation={str(e): task_rate(ts)
                            for e, ts in sorted(by_exp.items(), key=lambda kv: str(kv[0]))},
            counts=dict(sorted(Counter(t.outcome.value for t in safe).items())))
    return faults, perturb, safety


def rate_p_past(counts: Sequence[tuple[int, int]], bar: float, *, above: bool) -> float:
    """The one-sided p of a task-level rate past ``bar`` (``counts``: (trials, successes) per
    task), on the scale of ``stats.task_level_rate``'s interval: ``above``, the p of "the
    rate is at most ``bar``" (small: shown above it), else of "at least ``bar``" (small: shown
    below it); at most 0.05 exactly when the 90% interval lies past ``bar``, 1 where the
    estimate is not past it (a claim of a stated size judged at that size, issue #60). The
    statistics: ``stats.task_level_p_past``."""
    return stats.task_level_p_past(counts, bar, above=above)
