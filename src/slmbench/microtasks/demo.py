"""The Part B slice of ``slmbench demo``: a few micro-tasks under a few prompts (the demo's
study file: two under ``p0``), read until decided up to a small cap, then the routing verdict.

:func:`demo_slice` builds a missing dataset (:func:`ensure_datasets`), reads through a readings
store in ``out`` (so a rerun reads nothing new), writes ``eligibility.json``,
``recommendation.json`` (evidence and cost per task) and ``routes.json`` there, and returns
the lines to print.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from pydantic import BaseModel

from slmbench.microtasks.matrix import CellProgress, MatrixRun, run_matrix
from slmbench.microtasks.recommend import Recommendation, TaskRecommendation, recommend
from slmbench.microtasks.spec import DatasetMissingError, MicroTask, prepare
from slmbench.microtasks.store import DEFAULT_NAME, ReadingStore
from slmbench.models.base import Model

__all__ = ["MATRIX_FILE", "RECOMMENDATION_FILE", "ROUTES_FILE", "DemoSlice", "demo_slice",
           "ensure_datasets"]

MATRIX_FILE, RECOMMENDATION_FILE, ROUTES_FILE = ("eligibility.json", "recommendation.json",
                                                 "routes.json")


class DemoSlice(BaseModel):
    """What the demo's Part B measured, where it wrote it, and what to print."""

    run: MatrixRun
    recommendation: Recommendation
    matrix_path: Path
    recommendation_path: Path
    routes_path: Path
    lines: list[str]


def _line(t: TaskRecommendation) -> str:
    base = f"{t.baseline} {t.baseline_score:.3f} on {t.n_items} items"
    if t.deploy == "baseline":
        return f"{t.task}: deploy the baseline ({base}): {t.why}"
    assert t.score is not None
    return (f"{t.task}: deploy {t.deploy} {t.model} ({t.prompt_id}, {t.reading}) "
            f"{t.score.formatted(percent=False, digits=3)} (n {t.score.n}) vs {base}")


def ensure_datasets(tasks: Sequence[MicroTask], source: Path | None) -> None:
    """Build the datasets of ``tasks`` that ``source`` (default: the cache) lacks."""
    missing = []
    for task in tasks:
        try:
            task.load_items(source)
        except DatasetMissingError:
            missing.append(task)
    if missing:
        prepare(missing, dest=source)


def demo_slice(model: str, tasks: Sequence[MicroTask], *, out: Path, cap: int,
               prompts: Sequence[str] = ("p0",), seed: int = 0, source: Path | None = None,
               loader: Callable[[str], Model] | None = None,
               cell_progress: CellProgress | None = None) -> DemoSlice:
    """Read ``tasks`` × ``prompts`` with ``model`` until decided (at most ``cap`` items a
    cell); the demo's tasks, prompts and cap are its study file's ``[part_b]``."""
    ensure_datasets(tasks, source)
    names, under = ", ".join(t.name for t in tasks), ", ".join(prompts)
    out.mkdir(parents=True, exist_ok=True)
    with ReadingStore(out / DEFAULT_NAME) as store:
        run = run_matrix([model], list(tasks), list(prompts), limit=cap, seed=seed,
                         source=source, loader=loader, store=store, sequential=True,
                         cell_progress=cell_progress,
                         command=f"slmbench demo (Part B slice: {names} x {under}, "
                                 f"until decided, at most {cap} items a cell)")
        rec = recommend([run], store=store, command=run.command)
    matrix_path, routes_path = out / MATRIX_FILE, out / ROUTES_FILE
    matrix_path.write_text(run.model_dump_json(indent=1), encoding="utf-8")
    (out / RECOMMENDATION_FILE).write_text(rec.model_dump_json(indent=1), encoding="utf-8")
    routes_path.write_text(rec.routes().model_dump_json(indent=1), encoding="utf-8")
    lines = [f"Part B: {names} under {under}, read until decided (at most {cap} items):"]
    lines += [_line(t) for t in rec.tasks]
    lines.append(f"routing table: {routes_path}")
    return DemoSlice(run=run, recommendation=rec, matrix_path=matrix_path,
                     recommendation_path=out / RECOMMENDATION_FILE, routes_path=routes_path,
                     lines=lines)
