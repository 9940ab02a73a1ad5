"""``slmbench diagnose``: read the fit and eval samples under ``p0``, then the threshold
diagnostic (:mod:`.thresholds`) and the failure regime (:mod:`.regimes`) of each cell."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path

from pydantic import BaseModel, Field

from slmbench.microtasks.datasets.records import TaskName
from slmbench.microtasks.diagnostics.regimes import Regime, classify
from slmbench.microtasks.diagnostics.thresholds import DiagnosticCell, diagnose, scored_item
from slmbench.microtasks.prompts import FROZEN
from slmbench.microtasks.readout import ItemReading
from slmbench.microtasks.samples import fit_sample, select_items
from slmbench.microtasks.session import (
    Block,
    Progress,
    Session,
)
from slmbench.microtasks.spec import MicroTask
from slmbench.microtasks.store import ReadCounts, ReadingStore
from slmbench.models.base import Model
from slmbench.models.catalog import precision_of
from slmbench.models.ray import RayCluster


class DiagnosticReport(BaseModel):
    """Everything one ``slmbench diagnose`` run measured, as written to diagnostics.json."""

    command: str
    created: str
    models: list[str]
    tasks: list[TaskName]
    limit: int | None
    fit_limit: int | None
    seed: int
    cells: list[DiagnosticCell]
    regimes: list[Regime]
    readings: list[ItemReading]
    notes: list[str]
    read_counts: ReadCounts = Field(default_factory=ReadCounts)


def run_diagnose(models: Sequence[str], tasks: Sequence[MicroTask], *, limit: int | None,
                 fit_limit: int | None, seed: int = 0, source: Path | None = None,
                 command: str = "", progress: Progress | None = None,
                 loader: Callable[[str], Model] | None = None,
                 store: ReadingStore | None = None,
                 ray: RayCluster | None = None) -> DiagnosticReport:
    """Read the fit and eval samples under ``p0`` and diagnose each (task, model).

    An item the model cannot read (its prompt does not fit the context) is skipped with a
    note. With a ``store``, readings are committed as made and reused, including the ``p0``
    readings an ``eligibility`` run left in the same store. ``ray``: the models run there
    (``session.read_on``).
    """
    pools = {t.name: t.load_items(source) for t in tasks}
    blocks = [Block(t, FROZEN, part) for t in tasks
              for part in (fit_sample(pools[t.name], fit_limit, seed),
                           select_items(t, pools[t.name], limit, seed))]
    session = Session(store, loader, progress, ray=ray)
    cells: list[DiagnosticCell] = []
    readings: list[ItemReading] = []
    for spec in models:
        got = session.read(spec, blocks, skip_unreadable=True)
        for fit, ev in zip(got.blocks[::2], got.blocks[1::2], strict=True):
            readings += fit.readings + ev.readings
            task = ev.block.task
            cells.append(diagnose(
                task, spec,
                [scored_item(task, i, r) for i, r in zip(fit.items, fit.readings, strict=True)],
                [scored_item(task, i, r) for i, r in zip(ev.items, ev.readings, strict=True)],
                fit.items, ev.items, precision=precision_of(spec)))
    return DiagnosticReport(
        command=command, created=datetime.now(UTC).isoformat(timespec="seconds"),
        models=list(models), tasks=[t.name for t in tasks], limit=limit, fit_limit=fit_limit,
        seed=seed,
        cells=cells, regimes=[classify(c) for c in cells], readings=readings,
        notes=session.notes, read_counts=session.counts)
