"""Two harness settings on the same trials, paired: old vs new prompt, react vs native.

Two runs of one grid (same models, tasks, instances, variants, temperatures, seeds and
repeats) under two settings pair trial by trial on the trial's identity (its instance
included: a task's instances are different trials), and the
inference is at the task level (issue #37): :func:`compare_trials` gives each side's success
rate with its task-level interval and design (``stats.task_level_rate``) and the comparison
paired by task (``stats.task_paired``: each task's mean of ``a − b`` over its shared trials,
the exact sign test across tasks, the paired interval and the minimum detectable
difference). Trials that are never the model's (``backend_error``, ``environment_error``)
drop their pair and are counted in ``excluded``.

The scaffold comparison is :func:`compare_runs` on a ``--scaffold react`` and a
``--scaffold native`` run of one model; native needs a backend with tool-call
parsing (``Model.supports_native_tools``).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from slmbench.agents.exclusion import excluded_as
from slmbench.agents.records import Outcome, Trial
from slmbench.core import stats
from slmbench.core.errors import ConfigError
from slmbench.core.stats import ClusteredEstimate, Estimate, TaskComparison

__all__ = ["PairedComparison", "compare_runs", "compare_trials", "pair_trials"]

TrialId = tuple[str, str, str, float, int, int, int]


class PairedComparison(BaseModel):
    """Setting ``a`` against setting ``b`` on the trials both ran."""

    model_config = ConfigDict(frozen=True)

    a: str
    b: str
    pairs: int
    excluded: int  # pairs dropped: a side is not the model's (agents.exclusion)
    unpaired: int  # trials only one side holds
    success_a: ClusteredEstimate | Estimate  # Estimate (undefined) only with no pairs
    success_b: ClusteredEstimate | Estimate
    difference: Estimate  # success(a) − success(b), paired by task (by_task.difference)
    by_task: TaskComparison | None  # None with no pairs


def _identity(t: Trial) -> TrialId:
    return (t.model, t.task_id, t.variant, round(t.temperature, 4), t.seed, t.repeat,
            t.instance)


def pair_trials(a: Sequence[Trial], b: Sequence[Trial]) -> tuple[list[tuple[Trial, Trial]], int]:
    """Pairs of the same trial under both settings, in a stable order; and how many are unpaired.
    """
    left = {_identity(t): t for t in a}
    right = {_identity(t): t for t in b}
    shared = sorted(set(left) & set(right))
    return [(left[k], right[k]) for k in shared], len(set(left) ^ set(right))


def compare_trials(a: Sequence[Trial], b: Sequence[Trial], *, label_a: str = "a",
                   label_b: str = "b") -> PairedComparison:
    """Success of ``a`` and ``b`` on their shared trials, and the paired difference."""
    pairs, unpaired = pair_trials(a, b)
    kept = [(x, y) for x, y in pairs if excluded_as(x) is None and excluded_as(y) is None]
    by_task: dict[str, list[tuple[bool, bool]]] = defaultdict(list)
    for x, y in kept:
        by_task[x.task_id].append((x.outcome == Outcome.SUCCESS, y.outcome == Outcome.SUCCESS))
    if not kept:
        none = Estimate(estimate=None, low=None, high=None, method="task-level", n=0,
                        note="no shared trials")
        return PairedComparison(a=label_a, b=label_b, pairs=0, excluded=len(pairs),
                                unpaired=unpaired, success_a=none, success_b=none,
                                difference=none, by_task=None)
    tasks = sorted(by_task)
    diffs = [sum(a - b for a, b in by_task[k]) / len(by_task[k]) for k in tasks]
    test = stats.task_paired(diffs, cells=len(kept))
    return PairedComparison(
        a=label_a, b=label_b, pairs=len(kept), excluded=len(pairs) - len(kept),
        unpaired=unpaired, success_a=_rate([[a for a, _ in by_task[k]] for k in tasks]),
        success_b=_rate([[b for _, b in by_task[k]] for k in tasks]),
        difference=test.difference, by_task=test)


def _rate(per_task: list[list[bool]]) -> ClusteredEstimate:
    return stats.task_level_rate([(len(ok), sum(ok)) for ok in per_task])


def compare_runs(run_a: str | Path, run_b: str | Path, *, label_a: str | None = None,
                 label_b: str | None = None) -> PairedComparison:
    """:func:`compare_trials` on the trials stored in two run directories."""
    from slmbench.agents.loading import load_trials

    a, b = load_trials(run_a), load_trials(run_b)
    if not pair_trials(a, b)[0]:
        raise ConfigError(f"{run_a} and {run_b} share no trial",
                          "compare two runs of the same grid (same tasks, seeds, repeats)")
    return compare_trials(a, b, label_a=label_a or str(run_a), label_b=label_b or str(run_b))
