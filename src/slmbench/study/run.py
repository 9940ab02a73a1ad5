"""Running a study's blocks: Part A's trials, Part B's readings and the cascades' shortlist
readings, each committed to the study's stores as it is made (so every run resumes)."""

from __future__ import annotations

from collections.abc import Callable
from typing import NoReturn

from rich.console import Console

from slmbench.agents.runner.executor import RunSummary, execute
from slmbench.agents.runner.preflight import preflight
from slmbench.agents.runner.progress import make_progress
from slmbench.microtasks import tasks as micro_tasks
from slmbench.microtasks.diagnostics.cascade import CascadeReport, cascade_items, run_cascade
from slmbench.microtasks.diagnostics.shortlists import shortlisted
from slmbench.microtasks.matrix import MatrixRun, check_can_read, family_size, run_matrix
from slmbench.microtasks.session import Session, read_on
from slmbench.microtasks.store import ReadingStore
from slmbench.models.base import Model
from slmbench.models.factory import load_model
from slmbench.models.ray import RayCluster
from slmbench.models.readiness import check_logprobs
from slmbench.study.spec import (
    READINGS_NAME,
    CascadeBlock,
    PartB,
    Study,
    part_a_experiment,
)


def check_can_run(study: Study, part: str, models: list[str] | None) -> None:
    """Raise the one-line error that would stop ``part`` (a, b or all) of the study, narrowed
    to ``models``, before its first trial or reading: every Part A block's
    :func:`~slmbench.agents.runner.preflight.preflight` and every Part B block's
    :func:`~slmbench.microtasks.matrix.check_can_read`. Run before any block starts, so a
    study that cannot run makes no folder (not even the blocks before the failing one)."""
    if part in ("a", "all"):
        for block in range(len(study.part_a)):
            exp = part_a_experiment(study, block, models)
            if exp.models:
                preflight(exp)
    if part in ("b", "all"):
        for b in study.part_b:
            check_can_read([m for m in b.models if not models or m in models],
                           micro_tasks.lookup(b.tasks), b.source)
        for c in study.cascade:
            if not models or c.model in models:
                check_logprobs(c.model)  # the re-rank reads them; no server asked
                check_can_read([c.model], micro_tasks.lookup([c.task]), None)


def run_part_a(study: Study, models: list[str] | None, console: Console
               ) -> list[RunSummary]:
    """Run (resume) every Part A block; one run summary per block that had a model to run."""
    summaries = []
    for block in range(len(study.part_a)):
        exp = part_a_experiment(study, block, models)
        if exp.models:
            summaries.append(execute(exp, run_dir=study.part_a_dir(block),
                                     progress=make_progress(console)))
    return summaries


def refuse(spec: str) -> NoReturn:
    """The loader of a matrix built from stored readings only: loading a model is a bug."""
    raise AssertionError(f"{spec}: a reading the store was checked to hold is missing")


def part_b_family(study: Study) -> int:
    """How many Part B configurations the study tests together (model, task, prompt and
    reading, over every block): the family its "eligible" stops and its Holm correction are
    over."""
    return sum(family_size(b.models, b.tasks, b.prompts) for b in study.part_b)


def block_matrix(study: Study, b: PartB, models: list[str], store: ReadingStore,
                 loader: Callable[[str], Model], progress: Callable[[str], None] | None = None,
                 ray: RayCluster | None = None, stored_only: bool = False) -> MatrixRun:
    """Block ``b``'s matrix over ``models``, read through ``store`` (``stored_only``: each
    block stops before a reading the store lacks), its stops at the study's family."""
    return run_matrix(models, micro_tasks.lookup(b.tasks), b.prompts, limit=b.limit,
                      seed=b.seed, source=b.source, command=f"slmbench study ({study.name})",
                      progress=progress, loader=loader, store=store, sequential=b.sequential,
                      ray=ray, family=part_b_family(study), stored_only=stored_only)


class Unread(Exception):
    """A sequential cell is undecided and its next reading is not stored."""


def unread(spec: str) -> NoReturn:
    """The loader of a matrix that stops at the first reading the store lacks."""
    raise Unread(spec)


def decided(study: Study, b: PartB, model: str, store: ReadingStore) -> bool:
    """Whether every cell of ``model`` in sequential block ``b`` is settled from the stored
    readings (decided, or every chosen item read), so the page can show it."""
    try:
        block_matrix(study, b, [model], store, unread)
    except Unread:
        return False
    return True


def run_part_b(study: Study, models: list[str] | None, console: Console,
               loader: Callable[[str], Model] | None = None) -> None:
    """Read every missing reading of every Part B block into the study's readings store
    (``loader`` loads a model spec; default :func:`~slmbench.models.factory.load_model`). A
    block with ``executor = "ray"`` reads on its Ray cluster (``ray_address``, ``ray_models``)
    and stores the same readings."""
    with ReadingStore(study.part_b_dir / READINGS_NAME) as store:
        for b in study.part_b:
            chosen = [m for m in b.models if not models or m in models]
            if not chosen:
                continue
            try:
                with read_on(b.executor, chosen, b.ray_address, b.ray_models,
                             attempts=b.retry.attempts) as ray:
                    run = block_matrix(study, b, chosen, store, loader or load_model,
                                  lambda msg: console.print(msg, highlight=False), ray)
            except KeyboardInterrupt:
                console.print(store.resume_hint(), highlight=False)
                raise
            console.print(run.read_counts.describe(store.path), highlight=False)


def cascade_report(study: Study, c: CascadeBlock, store: ReadingStore,
                   loader: Callable[[str], Model],
                   progress: Callable[[str], None] | None = None) -> CascadeReport:
    """Cascade block ``c``'s report, its shortlist readings through ``store``."""
    (task,) = micro_tasks.lookup([c.task])
    history = micro_tasks.history_of([task]) if c.turns else None
    return run_cascade(c.model, task, k=c.k, turns=c.turns, history=history, limit=c.limit,
                       fit_limit=c.fit_limit, seed=c.seed,
                       command=f"slmbench study ({study.name})",
                       session=Session(store=store, loader=loader, progress=progress))


def run_cascades(study: Study, models: list[str] | None, console: Console,
                 loader: Callable[[str], Model] | None = None) -> None:
    """Read every missing shortlist reading of every ``[[cascade]]`` block (narrowed to
    ``models``) into the study's readings store."""
    chosen = [c for c in study.cascade if not models or c.model in models]
    if not chosen:
        return
    with ReadingStore(study.part_b_dir / READINGS_NAME) as store:
        for c in chosen:
            try:
                report = cascade_report(study, c, store, loader or load_model,
                                  lambda msg: console.print(msg, highlight=False))
            except KeyboardInterrupt:
                console.print(store.resume_hint(), highlight=False)
                raise
            console.print(report.read_counts.describe(store.path), highlight=False)


def shortlist_keys(c: CascadeBlock) -> list[tuple[str, str, str]]:
    """The (task, prompt, item id) of every reading cascade block ``c`` makes, once each."""
    (task,) = micro_tasks.lookup([c.task])
    history = micro_tasks.history_of([task]) if c.turns else None
    _, items, lists = cascade_items(task, k=c.k, turns=c.turns, history=history,
                                    limit=c.limit, fit_limit=c.fit_limit, seed=c.seed)
    return list(dict.fromkeys((c.task, "p0", shortlisted(task, i, s)[0].id)
                              for i, s in zip(items, lists, strict=True)))
