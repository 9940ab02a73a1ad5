"""Stage-level reliability (issue #61): robustness, recovery and consistency at the deepest
stage of the funnel a model reaches, where success itself is at the floor.

A trial *reaches* a stage when every applicable stage from ``acts`` through it passed
(:attr:`slmbench.agents.funnel.StageReach.reached` is it or a later one). Per dimension, the
stage is the deepest one short of ``correct`` (``correct`` is the dimension itself, on the
page above) that the dimension's unperturbed trials reach on at least
:data:`~slmbench.agents.reliability.MIN_TASKS` tasks: the ``base`` variant (consistency: at
a sampling temperature, T > 0). The dimension is then :mod:`slmbench.agents.reliability`'s
own, with "reached the stage" in place of success: robustness is reaching it on the
rewordings of the tasks whose base trials reach it; recovery is reaching it with the fault
fired, on the fault tasks whose unfaulted trials reach it; consistency is pass^k of reaching
it over the repeats at T > 0. Intervals as the dimensions' (:mod:`slmbench.agents.dimensions`).

These figures are labelled *stage-level* wherever they show: they are never one of the seed's
dimensions, never in the composite and never in a seed claim.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence

from slmbench.agents.dimensions import consistency_estimate
from slmbench.agents.funnel import STAGES, StageReach, reach_all
from slmbench.agents.records import Trial
from slmbench.agents.reliability import MIN_TASKS, consistency, fault_tolerance, robustness
from slmbench.agents.summary import StageReliability
from slmbench.agents.tasks.model import Task
from slmbench.core import stats

__all__ = ["CANDIDATES", "DIMENSIONS", "deepest_stage", "reaches", "stage_reliability"]

DIMENSIONS = ("consistency", "robustness", "fault_tolerance")
CANDIDATES = STAGES[:-1]  # correct is the dimension itself


def reaches(r: StageReach | None, stage: str) -> bool:
    """Whether a trial's stages (``None``: its task is unknown) reach ``stage``: every
    applicable stage from ``acts`` through it passed."""
    if r is None or r.reached is None:
        return False
    return STAGES.index(r.reached) >= STAGES.index(stage)


def _unperturbed(dimension: str, t: Trial) -> bool:
    return t.variant == "base" and (dimension != "consistency" or t.temperature > 0)


def deepest_stage(dimension: str, trials: Sequence[Trial],
                  reached: Callable[[Trial, str], bool]) -> tuple[str | None, int]:
    """The deepest stage short of ``correct`` that the dimension's unperturbed trials reach
    on at least MIN_TASKS tasks, and on how many (None, and the tasks reaching ``acts``,
    when no stage is)."""
    base = [t for t in trials if _unperturbed(dimension, t)]
    found: tuple[str | None, int] = (
        None, len({t.task_id for t in base if reached(t, STAGES[0])}))
    for stage in CANDIDATES:  # reaching a stage implies reaching every stage before it
        tasks = len({t.task_id for t in base if reached(t, stage)})
        if tasks >= MIN_TASKS:
            found = (stage, tasks)
    return found


def _scored(dimension: str, trials: list[Trial], ok: Callable[[Trial], bool]
            ) -> tuple[stats.Estimate | None, int, str | None]:
    """The dimension with ``ok`` for success: its measured score with its interval, the
    tasks behind it, and why it is not measurable."""
    if dimension == "consistency":
        c = consistency(trials, ok=ok)
        if c.measured is None:
            return None, 0, c.note or "not measurable"
        return consistency_estimate(c), c.tasks, None
    dim = robustness(trials, ok) if dimension == "robustness" else fault_tolerance(trials, ok)
    if dim.measured is None:
        return None, 0, dim.note or "not measurable"
    return stats.task_level_rate(dim.measured_counts), len(dim.measured_counts), None


def stage_reliability(model: str, trials: Sequence[Trial], tasks: Mapping[str, Task]
                      ) -> list[StageReliability]:
    """One model's stage-level robustness, recovery and consistency (each dimension it has
    trials of), from its rated trials."""
    by_dim: dict[str, list[Trial]] = defaultdict(list)
    for t in trials:
        task = tasks.get(t.task_id)
        if task is not None and task.dimension in DIMENSIONS:
            by_dim[task.dimension].append(t)
    out = []
    for dimension in DIMENSIONS:
        ts = by_dim.get(dimension)
        if not ts:
            continue
        reach_of = {id(t): r for t, r in zip(ts, reach_all(ts, tasks), strict=True)}

        def reached(t: Trial, stage: str, reach_of: dict[int, StageReach | None] = reach_of
                    ) -> bool:
            return reaches(reach_of[id(t)], stage)

        stage, n = deepest_stage(dimension, ts, reached)
        if stage is None:
            out.append(StageReliability(
                model=model, dimension=dimension, stage=None, reached_tasks=n, score=None,
                note=f"not measurable: no stage short of correct is reached on {MIN_TASKS} "
                     f"tasks (acts on {n})"))
            continue
        score, behind, note = _scored(dimension, ts, lambda t, s=stage: reached(t, s))
        out.append(StageReliability(model=model, dimension=dimension, stage=stage,
                                    reached_tasks=n, score=score, tasks=behind, note=note))
    return out
