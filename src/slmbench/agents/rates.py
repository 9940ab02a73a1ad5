"""Trials grouped and counted: a success, trials per key, and a task-level rate (the task is
the unit of inference, issue #37)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable
from typing import TypeVar

from slmbench.agents.records import Outcome, Trial
from slmbench.core import stats
from slmbench.core.stats import ClusteredEstimate

CAPABILITY = "capability"


def in_accuracy_scope(t: Trial) -> bool:
    """A trial the accuracy counts: capability suite, base variant, no injected fault."""
    return t.suite == CAPABILITY and t.variant == "base" and t.fault_plan is None

K = TypeVar("K")


def passed(trial: Trial) -> bool:
    """A trial counts as a success when its outcome is ``success`` (its scorer passed it)."""
    return trial.outcome == Outcome.SUCCESS



def by(trials: Iterable[Trial], key: Callable[[Trial], K]) -> dict[K, list[Trial]]:
    """``trials`` grouped by ``key``, each group in the given order."""
    out: dict[K, list[Trial]] = defaultdict(list)
    for t in trials:
        out[key(t)].append(t)
    return out


def task_counts(trials: Iterable[Trial], ok: Callable[[Trial], bool] = passed
                ) -> list[tuple[int, int]]:
    """``(trials, trials where ok)`` per task, in task order: what a task-level rate needs."""
    return [(len(ts), sum(map(ok, ts)))
            for _, ts in sorted(by(trials, lambda t: t.task_id).items())]


def task_rate(trials: Iterable[Trial], ok: Callable[[Trial], bool] = passed
              ) -> ClusteredEstimate:
    """The share of ``trials`` where ``ok`` holds, with its task-level interval and design."""
    return stats.task_level_rate(task_counts(trials, ok))
