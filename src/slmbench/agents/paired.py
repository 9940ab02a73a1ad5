"""Part A's paired comparisons: two configurations, or one model at its lowest and highest
temperature, paired by task, each with its sign test and its TOST, Holm over a summary.

A comparison pairs two sides only on the cells both ran, a cell being (variant,
temperature, instance) within a task (:func:`pair_cell`; a temperature effect pairs on
(variant, instance)): each task's difference is the mean over its shared cells of the cell's
success rate under ``a`` minus under ``b`` (:func:`paired_by_task`), and the task is the unit
of inference (``stats.task_paired``: the exact sign test across tasks, the paired interval,
the minimum detectable difference). Each also carries the TOST of the same per-task
differences within ±EQUIVALENCE_MARGIN (``stats.task_tost``, on the same hull at 90%): its
claim of no difference.

:func:`holm` makes the summary's two families: the sign tests of every pair and temperature
effect together (``p_holm``: "differs"), and their TOSTs together (``equivalence_p_holm``:
"within ±10 points"), each at family-wise error 5%. A comparison at the floor (neither side
solves MIN_TASKS tasks: ``at_floor``) claims no equivalence and stays out of the TOSTs'
family: two floors are within any margin by an exact bound, however differently they fail.
Used by :func:`slmbench.agents.analysis.analyze` only.
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence

from slmbench.agents.rates import by, passed, task_rate
from slmbench.agents.records import Trial
from slmbench.agents.summary import (
    EQUIVALENCE_MARGIN,
    PairwiseComparison,
    SizedTests,
    TemperatureEffect,
)
from slmbench.core import stats

__all__ = ["SIZE_POINTS", "Cells", "by_temperature", "cells_of", "holm", "holm_at_sizes",
           "pair_cell", "paired_by_task", "pairwise", "sized_tests", "solved_by_task",
           "temp_key", "temperature_effect"]

SIZE_POINTS = tuple(range(1, 21))  # the sizes (points) a claim of an effect is tested at


def temp_key(t: float) -> str:
    return f"{round(t, 4):g}"


Cells = dict[str, dict[tuple[str, ...], list[bool]]]  # task -> cell -> outcomes


def cells_of(trials: Iterable[Trial], cell: Callable[[Trial], tuple[str, ...]]) -> Cells:
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


def solved_by_task(a: Cells, b: Cells) -> tuple[int, int]:
    """How many tasks each side solves at least once in the cells both ran."""
    solved = [0, 0]
    for task in set(a) & set(b):
        shared = set(a[task]) & set(b[task])
        solved[0] += any(any(a[task][c]) for c in shared)
        solved[1] += any(any(b[task][c]) for c in shared)
    return solved[0], solved[1]


def temperature_effect(model: str, trials: list[Trial]) -> TemperatureEffect:
    by_t = by(trials, lambda t: round(t.temperature, 4))
    temps = sorted(by_t)
    per = {temp_key(t): task_rate(by_t[t]) for t in temps}
    solved = {temp_key(t): len({x.task_id for x in by_t[t] if passed(x)}) for t in temps}
    if len(temps) < 2:
        return TemperatureEffect(model=model, per_temperature=per, lowest=None, highest=None,
                                 comparison=None, solved=solved,
                                 note="one temperature only: no temperature effect to measure")
    lo, hi = temps[0], temps[-1]
    diffs, cells = paired_by_task(cells_of(by_t[hi], lambda t: (t.variant, str(t.instance))),
                                  cells_of(by_t[lo], lambda t: (t.variant, str(t.instance))))
    if not diffs:
        return TemperatureEffect(model=model, per_temperature=per, lowest=lo, highest=hi,
                                 comparison=None, solved=solved,
                                 note="no task ran at both temperatures")
    return TemperatureEffect(model=model, per_temperature=per, lowest=lo, highest=hi,
                             comparison=stats.task_paired(diffs, cells=cells), solved=solved,
                             equivalence=stats.task_tost(diffs, EQUIVALENCE_MARGIN),
                             sized=sized_tests(diffs))


def sized_tests(diffs: Sequence[float], points: Sequence[int] = SIZE_POINTS) -> SizedTests:
    """The one-sided tests of per-task differences at each size in ``points``: the two halves
    of ``stats.task_tost`` at that margin (a claim that names a size is judged at it)."""
    tosts = [stats.task_tost(diffs, s / 100) for s in points]
    return SizedTests(points=list(points), fall=[t.p_lower for t in tosts],
                      rise=[t.p_upper for t in tosts])


def holm_at_sizes(family: Sequence[Sequence[float]]) -> list[list[float]]:
    """Holm over a family of claims that each name a size: ``family[i][j]`` is claim i's
    one-sided p at its j-th size, j = 0 the size it states (the nested hypotheses further
    out have smaller p). Each p comes back Holm-adjusted over the family with every other
    claim at its stated size: a claim rejected only at a size further out is rejected there
    within the family's error (one claim's sizes are nested, so testing them together costs
    nothing more)."""
    heads = [ps[0] for ps in family]
    return [[stats.adjust_pvalues([p if k == i else h for k, h in enumerate(heads)],
                                  "holm")[i] for p in ps] for i, ps in enumerate(family)]


def pair_cell(t: Trial) -> tuple[str, ...]:
    """The cell two models pair on within a task: (variant, temperature, instance)."""
    return (t.variant, temp_key(t.temperature), str(t.instance))


def pairwise(by_model: Mapping[str, list[Trial]]) -> list[PairwiseComparison]:
    """Every pair of configurations, paired by task over the (task, variant, temperature,
    instance) cells both ran (p_holm is set by :func:`holm` over the summary's family)."""
    cells = {m: cells_of(ts, pair_cell) for m, ts in by_model.items()}
    out = []
    for a, b in itertools.combinations(sorted(by_model), 2):
        diffs, n_cells = paired_by_task(cells[a], cells[b])
        if not diffs:
            continue
        temps = sorted({c[1] for task in set(cells[a]) & set(cells[b])
                        for c in set(cells[a][task]) & set(cells[b][task])}, key=float)
        comparison = stats.task_paired(diffs, cells=n_cells)
        solved_a, solved_b = solved_by_task(cells[a], cells[b])
        out.append(PairwiseComparison(a=a, b=b, tasks=comparison.tasks, cells=n_cells,
                                      temperatures=temps, comparison=comparison,
                                      p_holm=comparison.sign_test.p_value,
                                      equivalence=stats.task_tost(diffs, EQUIVALENCE_MARGIN),
                                      solved_a=solved_a, solved_b=solved_b))
    return out


def by_temperature(by_model: Mapping[str, list[Trial]]) -> list[PairwiseComparison]:
    """Every pair at each temperature both ran (:func:`pairwise` on that temperature's
    trials), Holm-adjusted over this family."""
    temps = sorted({temp_key(t.temperature) for ts in by_model.values() for t in ts},
                   key=float)
    pairs: list[PairwiseComparison] = []
    for k in temps:
        at = {m: [t for t in ts if temp_key(t.temperature) == k] for m, ts in by_model.items()}
        pairs += pairwise({m: ts for m, ts in at.items() if ts})
    adjusted = stats.adjust_pvalues([p.comparison.sign_test.p_value for p in pairs], "holm")
    held = _holm_tost([p.model_copy(update={"p_holm": h})
                       for p, h in zip(pairs, adjusted, strict=True)])
    return [p for p in held if isinstance(p, PairwiseComparison)]


def holm(pairs: list[PairwiseComparison], temps: list[TemperatureEffect]
          ) -> tuple[list[PairwiseComparison], list[TemperatureEffect]]:
    """Holm over one family: every model pair and every temperature effect of the summary."""
    swept = [t for t in temps if t.comparison is not None]
    raw = [p.comparison.sign_test.p_value for p in pairs]
    raw += [t.comparison.sign_test.p_value for t in swept if t.comparison is not None]
    adjusted = iter(stats.adjust_pvalues(raw, "holm"))
    pairs = [p.model_copy(update={"p_holm": next(adjusted)}) for p in pairs]
    by_model = {t.model: next(adjusted) for t in swept}
    temps = [t.model_copy(update={"p_holm": by_model.get(t.model)}) for t in temps]
    both = _holm_tost([*pairs, *temps])  # the claims of no difference: a family of their own
    return ([x for x in both if isinstance(x, PairwiseComparison)],
            [x for x in both if isinstance(x, TemperatureEffect)])


def _holm_tost(found: Sequence[PairwiseComparison | TemperatureEffect]
               ) -> list[PairwiseComparison | TemperatureEffect]:
    """Each with ``equivalence_p_holm``: its TOST's p, Holm over every TOST among ``found``
    (a page may state several claims of no difference; together they keep α). A comparison
    at the floor is no claim: it keeps its TOST but no Holm p, and is not counted."""
    tested = [x.equivalence is not None and not x.at_floor for x in found]
    adjusted = iter(stats.adjust_pvalues(
        [x.equivalence.p_value for x, t in zip(found, tested, strict=True)
         if t and x.equivalence is not None], "holm"))
    return [x.model_copy(update={"equivalence_p_holm": next(adjusted) if t else None})
            for x, t in zip(found, tested, strict=True)]
