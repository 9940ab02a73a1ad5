"""Run the eligibility matrix: tasks x models x prompts, both readings, against baselines."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Protocol

from pydantic import BaseModel, Field

from slmbench.core import stats
from slmbench.microtasks.cells import EligibilityCell, PromptSummary, TauSweepRow
from slmbench.microtasks.datasets.records import AnyItem, TaskName
from slmbench.microtasks.eligibility import (
    SequentialRule,
    by_prompt,
    family_wise,
    judge,
    sequential_rules,
    tau_sweep,
)
from slmbench.microtasks.readout import ItemReading
from slmbench.microtasks.samples import select_items
from slmbench.microtasks.session import Block, ModelReadings, Progress, Session
from slmbench.microtasks.spec import MicroTask
from slmbench.microtasks.store import ReadCounts, ReadingStore
from slmbench.models.base import Model
from slmbench.models.catalog import precision_of
from slmbench.models.ray import RayCluster


class CellProgress(Protocol):
    """Live progress of a matrix run, one (model, task, prompt) block at a time.

    ``advance`` gets the items read so far and, when reading until decided, the generation
    reading's running estimate with its confidence-sequence bounds (None otherwise).
    """

    def start(self, label: str, total: int) -> None: ...

    def advance(self, read: int, estimate: stats.Estimate | None) -> None: ...

    def finish(self, read: int, verdict: str) -> None: ...


class MatrixRun(BaseModel):
    """Everything one ``slmbench eligibility`` run measured, as written to JSON."""

    command: str
    created: str
    models: list[str]
    tasks: list[TaskName]
    prompts: list[str]
    limit: int | None
    seed: int
    items: dict[str, list[str]]
    baseline_scores: dict[str, dict[str, float]]
    cells: list[EligibilityCell]
    tau_sweep: list[TauSweepRow]
    by_prompt: list[PromptSummary]
    readings: list[ItemReading]
    notes: list[str]
    read_counts: ReadCounts = Field(default_factory=ReadCounts)
    sequential: bool = False  # read each cell until decided (else every chosen item)


def run_matrix(models: Sequence[str], tasks: Sequence[MicroTask], prompt_ids: Sequence[str],
               *, limit: int | None = None, seed: int = 0, source: Path | None = None,
               command: str = "", progress: Progress | None = None,
               loader: Callable[[str], Model] | None = None,
               store: ReadingStore | None = None, sequential: bool = False,
               cell_progress: CellProgress | None = None,
               ray: RayCluster | None = None, family: int | None = None,
               stored_only: bool = False) -> MatrixRun:
    """Read every (model, task, prompt, item) and score the cells.

    ``sequential``: read each (model, task, prompt) block in the seeded order only until its
    cells are settled (``eligibility.SequentialRule``; τ fixed on all chosen items first),
    else to the last chosen item. ``family``: the configurations tested together, for the
    "eligible" stop (default: this run's, models x tasks x prompts x 2 readings); the cells
    get their family-wise verdict over this run (:func:`family_runs` over several runs).
    ``stored_only`` (with a ``store``): a block also stops before its first reading the store
    lacks, so its cells show what the stored readings settle (a cell still unsettled then
    has items unread). ``cell_progress`` is told of every item read, each cell started at its
    first reading and finished before the next one starts.

    With a ``store``, each reading is committed as it is made and stored ones are reused: a
    rerun after an interruption reads only what is missing (and loads no model that has
    nothing left to read). ``ray``: the models run there (``session.read_on``), with the
    same readings.
    """
    chosen: dict[TaskName, list[AnyItem]] = {}
    fits: dict[TaskName, list[AnyItem]] = {}
    for task in tasks:
        everything = task.load_items(source)
        fits[task.name] = [i for i in everything if i.split == "fit"]
        chosen[task.name] = select_items(task, everything, limit, seed)
    precisions = {spec: precision_of(spec) for spec in models}
    baselines = {t.name: t.baselines(fits[t.name], chosen[t.name]) for t in tasks}
    family = family or family_size(models, tasks, prompt_ids)
    rules = ({t.name: sequential_rules(t, chosen[t.name], baselines[t.name], family)
              for t in tasks} if sequential else {})
    session = Session(store, loader, progress, ray=ray)
    read: list[ModelReadings] = []
    for spec in models:
        ticker = _Cells(cell_progress)
        blocks = [Block(t, p, chosen[t.name],
                        _until(rules.get(t.name), len(chosen[t.name]), f"{spec} · {t.name} · {p}",
                               ticker, _next_stored(store, spec, t, p, chosen[t.name])
                               if stored_only else None))
                  for t in tasks for p in prompt_ids]
        try:
            read.append(session.read(spec, blocks))
        finally:
            ticker.close("stopped")
    judged = judge(read, precisions, tasks, chosen, baselines, rules)
    return MatrixRun(command=command, created=datetime.now(UTC).isoformat(timespec="seconds"),
                     models=list(models), tasks=[t.name for t in tasks],
                     prompts=list(prompt_ids), limit=limit, seed=seed,
                     items={t.name: [i.id for i in chosen[t.name]] for t in tasks},
                     baseline_scores=judged.baseline_scores, cells=judged.cells,
                     tau_sweep=judged.tau_sweep, by_prompt=judged.by_prompt,
                     readings=[r for got in read for b in got.blocks for r in b.readings],
                     notes=sorted(session.notes), read_counts=session.counts,
                     sequential=sequential)


def family_size(models: Sequence[str], tasks: Sequence[object], prompt_ids: Sequence[str]) -> int:
    """How many configurations (model, task, prompt, reading) a matrix of these tests: the
    family its "eligible" stop and its Holm correction are over (``tasks``: the tasks or their
    names, only counted)."""
    return len(models) * len(tasks) * len(prompt_ids) * 2  # generation and log-prob


def family_runs(runs: Sequence[MatrixRun]) -> list[MatrixRun]:
    """``runs`` with the family-wise verdict over *all* their cells together
    (:func:`~slmbench.microtasks.eligibility.family_wise`: one hypothesis per model, task,
    prompt and reading on the task's deciding metric, Holm): an eligibility run's matrix, or
    every block of a study. The deciding metric is read from the cells (each task's first:
    :func:`run_matrix` writes them in the task's metric order), so a stored run of a task no
    longer registered (a user's task file) is judged the same. The same cells give the same
    verdicts, so it can be applied again to a set it was applied to."""
    cells = family_wise([c for r in runs for c in r.cells])
    out, at = [], 0
    for r in runs:
        mine = cells[at:at + len(r.cells)]
        at += len(r.cells)
        out.append(r.model_copy(update={"cells": mine, "tau_sweep": tau_sweep(mine),
                                        "by_prompt": by_prompt(mine)}))
    return out


def _next_stored(store: ReadingStore | None, spec: str, task: MicroTask, prompt_id: str,
                 items: Sequence[AnyItem]) -> Callable[[int], bool]:
    """Whether the store holds the reading after the first ``n`` items of a block."""
    def stored(n: int) -> bool:
        return (store is not None and n < len(items)
                and store.get(spec, task, prompt_id, items[n]) is not None)

    return stored


class _Cells:
    """Tells ``progress`` of one model's blocks in the order they are read: a cell starts at
    its first reading (not when its block is built) and finishes when its stop test ends it,
    at its last item, or when the next cell starts or the model's reading ends."""

    def __init__(self, progress: CellProgress | None) -> None:
        self.progress = progress
        self.open: tuple[str, list[int]] | None = None  # (label, [items read])

    def begin(self, label: str, total: int, counter: list[int]) -> None:
        if self.progress is None or (self.open is not None and self.open[1] is counter):
            return
        self.close("stopped")
        self.progress.start(label, total)
        self.open = (label, counter)

    def close(self, verdict: str) -> None:
        if self.progress is not None and self.open is not None:
            self.progress.finish(self.open[1][0], verdict)
        self.open = None


def _until(rules: dict[str, SequentialRule] | None, total: int, label: str,
           cells: _Cells, stored: Callable[[int], bool] | None = None
           ) -> Callable[[ItemReading], bool] | None:
    """A block's stop test (``rules``: both readings of the deciding metric settled;
    ``stored``: also stop when the next reading is not stored) and its progress report
    through ``cells``; None when there is none of them."""
    if rules is None and cells.progress is None and stored is None:
        return None
    rule = next(iter(rules.values())) if rules else None  # the task's first metric decides
    generation = rule.tracker() if rule else None
    logprob = rule.tracker() if rule else None
    read = [0]

    def until(reading: ItemReading) -> bool:
        cells.begin(label, total, read)
        read[0] += 1
        done = False
        if generation is not None and logprob is not None:
            verdict = generation.feed(reading.generation_ranking)
            done = verdict != "undecided"
            if reading.logprob_ranking is not None:
                done = logprob.feed(reading.logprob_ranking) != "undecided" and done
        if cells.progress:
            cells.progress.advance(read[0], generation.estimate if generation else None)
            if done or read[0] == total:
                cells.close("settled" if done else "full split")
        return done or (stored is not None and not stored(read[0]))

    return until
