"""The stage funnel of a run (issue #61): per configuration, each stage's rate with its
task-level interval, and the configurations compared stage by stage.

Over the trials the accuracy counts (a configuration's capability trials, those that are the
model's: :func:`slmbench.agents.exclusion.rated` is applied before), each trial's stages are
:func:`slmbench.agents.funnel.reach_all`'s. A stage's *marginal* rate is over the trials where
it applies; its rate *given the previous* is over those of them that passed every applicable
stage before it. Both are ``stats.task_level_rate`` over tasks (the family is the task id, its
instances one cluster, as every rate of :mod:`slmbench.agents.rates`).

Two configurations are compared at each stage on the marginal rates, paired by task over the
cells both ran (:func:`slmbench.agents.paired.pair_cell`, ``stats.task_paired``), and every
such comparison of the run is one Holm family of its own: no comparison already in the
summary changes.
"""

from __future__ import annotations

import itertools
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence

from slmbench.agents.exclusion import rated
from slmbench.agents.funnel import STAGES, StageReach, reach_all
from slmbench.agents.paired import Cells, pair_cell, paired_by_task
from slmbench.agents.rates import task_rate
from slmbench.agents.records import Trial
from slmbench.agents.summary import StageComparison, StageFunnel, StageRate
from slmbench.agents.tasks.model import Task
from slmbench.core import stats

__all__ = ["stage_comparisons", "stage_funnel", "stage_funnels"]

Judged = list[tuple[Trial, StageReach]]


def _rate(judged: Judged, stage: str) -> StageRate:
    applies = [(t, r) for t, r in judged if r.stages[stage] is not None]
    before = [(t, r) for t, r in applies if r.passed_before(stage)]
    first = stage == STAGES[0]

    def ok(pairs: Judged) -> stats.ClusteredEstimate | None:
        if not pairs:
            return None
        passed = {id(t) for t, r in pairs if r.stages[stage]}
        return task_rate([t for t, _ in pairs], lambda t: id(t) in passed)

    return StageRate(
        stage=stage, trials=len(applies), passed=sum(bool(r.stages[stage]) for _, r in applies),
        marginal=ok(applies), reached_previous=len(before),
        given_previous=None if first else ok(before),
        not_applicable=dict(sorted(Counter(r.not_applicable[stage] for _, r in judged
                                           if r.stages[stage] is None).items())),
        tasks_passed=len({t.task_id for t, r in applies if r.stages[stage]}))


def _judged(trials: Sequence[Trial], tasks: Mapping[str, Task]) -> tuple[Judged, int]:
    found = reach_all(trials, tasks)
    judged = [(t, r) for t, r in zip(trials, found, strict=True) if r is not None]
    return judged, len(trials) - len(judged)


def stage_funnel(model: str, trials: Sequence[Trial], tasks: Mapping[str, Task]
                 ) -> StageFunnel:
    """The :class:`StageFunnel` of one configuration's ``trials`` (those not the model's are
    dropped here, as in every rate)."""
    return _funnel(model, *_judged(rated(trials), tasks))


def _funnel(model: str, judged: Judged, unjudged: int) -> StageFunnel:
    strict = {id(t) for t, r in judged if r.strict_acts}
    reached = Counter(r.reached or "none" for _, r in judged)
    return StageFunnel(
        model=model, trials=len(judged), stages=[_rate(judged, s) for s in STAGES],
        strict_acts=task_rate([t for t, _ in judged], lambda t: id(t) in strict)
        if judged else None,
        reached={s: reached[s] for s in ("none", *STAGES) if reached[s]}, unjudged=unjudged)


def _cells(judged: Judged, stage: str) -> Cells:
    out: Cells = defaultdict(lambda: defaultdict(list))
    for t, r in judged:
        if (ok := r.stages[stage]) is not None:
            out[t.task_id][pair_cell(t)].append(ok)
    return out


def stage_comparisons(by_model: Mapping[str, Judged]) -> list[StageComparison]:
    """Every pair of configurations at every stage, paired by task on the marginal rates,
    Holm over these comparisons together."""
    found: list[StageComparison] = []
    for stage in STAGES:
        cells = {m: _cells(judged, stage) for m, judged in by_model.items()}
        for a, b in itertools.combinations(sorted(by_model), 2):
            diffs, n_cells = paired_by_task(cells[a], cells[b])
            if not diffs:
                continue
            comparison = stats.task_paired(diffs, cells=n_cells)
            found.append(StageComparison(stage=stage, a=a, b=b, cells=n_cells,
                                         comparison=comparison,
                                         p_holm=comparison.sign_test.p_value))
    adjusted = stats.adjust_pvalues([c.comparison.sign_test.p_value for c in found], "holm")
    return [c.model_copy(update={"p_holm": p}) for c, p in zip(found, adjusted, strict=True)]


def stage_funnels(by_model: Mapping[str, Sequence[Trial]], tasks: Mapping[str, Task]
                  ) -> tuple[list[StageFunnel], list[StageComparison]]:
    """Each configuration's funnel, and the stage comparisons between them."""
    judged = {m: _judged(rated(ts), tasks) for m, ts in sorted(by_model.items())}
    return ([_funnel(m, *j) for m, j in judged.items()],
            stage_comparisons({m: j[0] for m, j in judged.items()}))
