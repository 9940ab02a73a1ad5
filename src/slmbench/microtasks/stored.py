"""Eligibility matrices rebuilt from a readings store alone: no model is ever loaded.

:func:`stored_matrices` replays :func:`~slmbench.microtasks.matrix.run_matrix` on each
(model, task, prompt) block with a loader that refuses to load: a block whose readings are
all in the store (every item, or, reading until decided, every item up to the one that
settled it) becomes a matrix exactly as the run that read it scored it; a block the store
does not hold to its end is reported as :class:`IncompleteBlock` with what it holds.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from slmbench.microtasks.datasets.records import TaskName
from slmbench.microtasks.matrix import MatrixRun, family_runs, run_matrix
from slmbench.microtasks.samples import select_items
from slmbench.microtasks.spec import MicroTask
from slmbench.microtasks.store import ReadingStore
from slmbench.models.base import Model

__all__ = ["IncompleteBlock", "StoredMatrices", "stored_keys", "stored_matrices"]


class IncompleteBlock(BaseModel):
    """A (model, task, prompt) block the store does not hold to its end."""

    model_config = ConfigDict(frozen=True)

    model: str
    task: TaskName
    prompt_id: str
    stored: int  # readings of the block's items in the store
    planned: int  # items the block could read


class StoredMatrices(BaseModel):
    """The matrices of every fully stored block, and the blocks left out."""

    runs: list[MatrixRun]
    incomplete: list[IncompleteBlock]


class _NotStored(Exception):
    """Raised by the refusing loader: the block needs a reading the store lacks."""


def _refuse(spec: str) -> Model:
    raise _NotStored(spec)


def stored_keys(store: ReadingStore) -> list[tuple[str, str, str]]:
    """Every (model, task, prompt) the store holds a reading of, in stored order."""
    return list(dict.fromkeys((r["model"], r["task"], r["prompt_id"]) for r in store.rows()))


def stored_matrices(store: ReadingStore, models: Sequence[str], tasks: Sequence[MicroTask],
                    prompt_ids: Sequence[str], *, limit: int | None = None, seed: int = 0,
                    sequential: bool = True, source: Path | None = None,
                    command: str = "") -> StoredMatrices:
    """One matrix per fully stored group of (model, task, prompt) blocks (the same items,
    order, τ and stop rule as ``run_matrix`` with these arguments, its "eligible" stops at
    the family of every model, task and prompt given); the other blocks as incomplete; the
    family-wise verdicts over all of them together. A task's blocks are tried together first
    (its baselines are fitted once), then per model, then per prompt, so only the blocks that
    lack readings are left out."""
    runs: list[MatrixRun] = []
    incomplete: list[IncompleteBlock] = []
    family = len(models) * len(tasks) * len(prompt_ids) * 2  # as the reading run's stops
    for task in tasks:
        items = select_items(task, task.load_items(source), limit, seed)
        held = {(m, p): sum(store.get(m, task, p, i) is not None for i in items)
                for m in models for p in prompt_ids}
        incomplete += [IncompleteBlock(model=m, task=task.name, prompt_id=p, stored=0,
                                       planned=len(items))
                       for (m, p), n in held.items() if n == 0]
        started = [(m, p) for (m, p), n in held.items() if n]

        def attempt(blocks: list[tuple[str, str]], task: MicroTask = task) -> bool:
            ms = list(dict.fromkeys(m for m, _ in blocks))
            ps = list(dict.fromkeys(p for _, p in blocks))
            if len(blocks) != len(ms) * len(ps):
                return False  # not a grid: split further
            try:
                runs.append(run_matrix(ms, [task], ps, limit=limit, seed=seed, source=source,
                                       command=command, loader=_refuse, store=store,
                                       sequential=sequential, family=family))
            except _NotStored:
                return False
            return True

        if started and attempt(started):
            continue
        for m in dict.fromkeys(m for m, _ in started):
            mine = [b for b in started if b[0] == m]
            if attempt(mine):
                continue
            for b in mine:
                if not attempt([b]):
                    incomplete.append(IncompleteBlock(model=b[0], task=task.name, prompt_id=b[1],
                                                      stored=held[b], planned=len(items)))
    return StoredMatrices(runs=family_runs(runs), incomplete=incomplete)
