"""Running a study's blocks: Part A's trials, Part B's readings and the cascades' shortlist
readings, each committed to the study's stores as it is made (so every run resumes).

Each Part B block and each cascade block is one :class:`~slmbench.microtasks.job.Job`
(:func:`block_job`, :func:`cascade_job`), checked with every other before any starts
(:func:`check_can_run`) and run through :func:`~slmbench.microtasks.job.run_job` into the
study's readings store (:func:`run_jobs`: no report is written, the page is made from the
store)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import NoReturn, TypeVar

from rich.console import Console

from slmbench.agents.runner.executor import RunSummary, execute
from slmbench.agents.runner.preflight import preflight
from slmbench.agents.runner.progress import make_progress
from slmbench.microtasks.diagnostics.cascade import CascadeReport, cascade_items, run_cascade
from slmbench.microtasks.diagnostics.shortlists import shortlisted
from slmbench.microtasks.job import Interrupted, Job, Report, check_job, run_job
from slmbench.microtasks.matrix import MatrixRun, run_matrix
from slmbench.microtasks.session import Session, read_on
from slmbench.microtasks.store import ReadingStore
from slmbench.models.base import Model
from slmbench.models.factory import load_model
from slmbench.models.ray import RayCluster
from slmbench.models.readiness import check_logprobs
from slmbench.study.spec import (
    CascadeBlock,
    PartB,
    Study,
    part_a_experiment,
)

R = TypeVar("R", bound=Report)
Progress = Callable[[str], None]


def check_can_run(study: Study, part: str, models: list[str] | None) -> None:
    """Raise the one-line error that would stop ``part`` (a, b or all) of the study, narrowed
    to ``models``, before its first trial or reading: every Part A block's
    :func:`~slmbench.agents.runner.preflight.preflight`, every Part B and cascade block's
    job's :func:`~slmbench.microtasks.job.check_job` (and a cascade model's log-probs). Run
    before any block starts, so a study that cannot run makes no folder (not even the blocks
    before the failing one)."""
    if part in ("a", "all"):
        for block in range(len(study.part_a)):
            exp = part_a_experiment(study, block, models)
            if exp.models:
                preflight(exp)
    if part in ("b", "all"):
        for job in block_jobs(study, models, load_model):
            check_job(job)
        for c in cascades(study, models):
            check_logprobs(c.model)  # the re-rank reads them; no server asked
            check_job(cascade_job(study, c, load_model))


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


def block_matrix(study: Study, b: PartB, models: list[str], store: ReadingStore,
                 loader: Callable[[str], Model], progress: Callable[[str], None] | None = None,
                 ray: RayCluster | None = None, stored_only: bool = False) -> MatrixRun:
    """Block ``b``'s matrix over ``models``, read through ``store`` (``stored_only``: each
    block stops before a reading the store lacks), its stops at the study's family."""
    return run_matrix(models, b.micro_tasks, b.prompts, limit=b.limit,
                      seed=b.seed, source=b.source, command=f"slmbench study ({study.name})",
                      progress=progress, loader=loader, store=store, sequential=b.sequential,
                      ray=ray, family=study.part_b_family, stored_only=stored_only)


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


def block_job(study: Study, b: PartB, models: list[str], loader: Callable[[str], Model],
              progress: Progress | None = None) -> Job[MatrixRun]:
    """Part B block ``b`` over ``models`` as a job: its matrix, read where the block says
    (``executor = "ray"``: on its Ray cluster, ``ray_address``, ``ray_models``)."""
    return Job("eligibility", models, b.micro_tasks,
               lambda store, ray: block_matrix(study, b, models, store, loader, progress, ray),
               where=lambda: read_on(b.executor, models, b.ray_address, b.ray_models,
                                     attempts=b.retry.attempts), source=b.source)


def block_jobs(study: Study, models: list[str] | None, loader: Callable[[str], Model],
               progress: Progress | None = None) -> list[Job[MatrixRun]]:
    """A job per Part B block with a model of ``models`` (None: every model)."""
    return [block_job(study, b, chosen, loader, progress) for b in study.part_b
            if (chosen := [m for m in b.models if not models or m in models])]


def cascade_report(study: Study, c: CascadeBlock, store: ReadingStore,
                   loader: Callable[[str], Model],
                   progress: Progress | None = None) -> CascadeReport:
    """Cascade block ``c``'s report, its shortlist readings through ``store``."""
    return run_cascade(c.model, c.micro_task, k=c.k, turns=c.turns, history=c.history,
                       limit=c.limit, fit_limit=c.fit_limit, seed=c.seed,
                       command=f"slmbench study ({study.name})",
                       session=Session(store=store, loader=loader, progress=progress))


def cascades(study: Study, models: list[str] | None) -> list[CascadeBlock]:
    """The cascade blocks of a model of ``models`` (None: every block)."""
    return [c for c in study.cascade if not models or c.model in models]


def cascade_job(study: Study, c: CascadeBlock, loader: Callable[[str], Model],
                progress: Progress | None = None) -> Job[CascadeReport]:
    """Cascade block ``c`` as a job, read locally."""
    return Job("cascade", [c.model], c.reads,
               lambda store, _: cascade_report(study, c, store, loader, progress))


def run_jobs(study: Study, jobs: Sequence[Job[R]], console: Console) -> None:
    """Run each of ``jobs`` (checked by :func:`check_can_run`) into the study's readings
    store, saying where its readings came from; on Ctrl-C, where they are kept and how to
    resume."""
    for job in jobs:
        try:
            done = run_job(job, store_path=study.readings_path, checked=True)
        except Interrupted as stop:
            console.print(stop.hint, highlight=False)
            raise
        console.print(done.report.read_counts.describe(done.store_path), highlight=False)


def _say(console: Console) -> Progress:
    return lambda msg: console.print(msg, highlight=False)


def run_part_b(study: Study, models: list[str] | None, console: Console,
               loader: Callable[[str], Model] | None = None) -> None:
    """Read every missing reading of every Part B block into the study's readings store
    (``loader`` loads a model spec; default :func:`~slmbench.models.factory.load_model`). A
    block with ``executor = "ray"`` reads on its Ray cluster (``ray_address``, ``ray_models``)
    and stores the same readings."""
    run_jobs(study, block_jobs(study, models, loader or load_model, _say(console)), console)


def run_cascades(study: Study, models: list[str] | None, console: Console,
                 loader: Callable[[str], Model] | None = None) -> None:
    """Read every missing shortlist reading of every ``[[cascade]]`` block (narrowed to
    ``models``) into the study's readings store."""
    run_jobs(study, [cascade_job(study, c, loader or load_model, _say(console))
                     for c in cascades(study, models)], console)


def shortlist_keys(c: CascadeBlock) -> list[tuple[str, str, str]]:
    """The (task, prompt, item id) of every reading cascade block ``c`` makes, once each."""
    _, items, lists = cascade_items(c.micro_task, k=c.k, turns=c.turns, history=c.history,
                                    limit=c.limit, fit_limit=c.fit_limit, seed=c.seed)
    return list(dict.fromkeys((c.task, "p0", shortlisted(c.micro_task, i, s)[0].id)
                              for i, s in zip(items, lists, strict=True)))
