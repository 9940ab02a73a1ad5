"""The one entry of a Part B run: check it can read, read through a readings store (in this
process or on Ray), and, where asked, write its report as JSON and its page as Markdown.

Every reading command (``eligibility``, ``diagnose``, ``probe``, ``cascade``, ``quantize``)
and every Part B and cascade block of a study is one :class:`Job` handed to :func:`run_job`:
the micro-tasks it reads come in as ``MicroTask`` objects, looked up once by the caller (the
CLI, the study file); its ``read`` is the run itself (``run_matrix``, ``run_diagnose``, ...)
given the open store and the Ray cluster; its ``render`` is the page of its report. Part B
never imports :mod:`slmbench.report`, so the caller hands the page renderer in
(``slmbench.report.partb.matrix_markdown``, ...). A study writes no report per block: it
runs its jobs without ``out`` (its page is made from the store).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Generic, Protocol, TypeVar

from slmbench.microtasks.spec import MicroTask
from slmbench.microtasks.store import DEFAULT_NAME, ReadCounts, ReadingStore
from slmbench.models.ray import RayCluster
from slmbench.models.readiness import check_ready

__all__ = ["Done", "Interrupted", "Job", "Report", "check_can_read", "check_job", "run_job",
           "write_report"]


class Report(Protocol):
    """What a Part B run returns: a pydantic report that counts where its readings came from."""

    @property
    def read_counts(self) -> ReadCounts: ...

    def model_dump_json(self, *, indent: int | None = None) -> str: ...


R = TypeVar("R", bound=Report)


class Interrupted(KeyboardInterrupt):
    """Ctrl-C during a job's readings: those made so far are in the store; ``hint`` says where
    and how to resume."""

    def __init__(self, hint: str) -> None:
        super().__init__(hint)
        self.hint = hint


def _here() -> AbstractContextManager[RayCluster | None]:
    return nullcontext(None)


@dataclass(frozen=True)
class Job(Generic[R]):
    """One Part B run, as a command gave it.

    ``stem``: its outputs are ``OUT/<stem>.json`` and ``OUT/<stem>.md`` (the page: only with
    a ``render``). ``models`` and ``tasks``: every model spec it loads and every task whose
    items it reads, checked before the store is made. ``read(store, ray)`` runs it.
    ``where()``: where the models read (the context of
    :func:`~slmbench.microtasks.session.read_on`; default: this process).
    """

    stem: str
    models: Sequence[str]
    tasks: Sequence[MicroTask]
    read: Callable[[ReadingStore, RayCluster | None], R]
    render: Callable[[R], str] | None = None
    where: Callable[[], AbstractContextManager[RayCluster | None]] = field(default=_here)
    source: Path | None = None  # the built datasets (default: the cache)


@dataclass(frozen=True)
class Done(Generic[R]):
    """A job's report, where its readings are, and its page and where they were written
    (None: not written, a job run without ``out`` or ``render``)."""

    report: R
    store_path: Path
    page: str | None = None
    json_path: Path | None = None
    page_path: Path | None = None


def write_report(stem: Path, report: Report, page: str | None) -> tuple[Path, Path | None]:
    """Write ``STEM.json`` (the report) and ``STEM.md`` (its page, if any), making the
    folder."""
    stem.parent.mkdir(parents=True, exist_ok=True)
    json_path, page_path = stem.with_suffix(".json"), stem.with_suffix(".md")
    json_path.write_text(report.model_dump_json(indent=1), encoding="utf-8")
    if page is None:
        return json_path, None
    page_path.write_text(page, encoding="utf-8")
    return json_path, page_path


def check_can_read(models: Sequence[str], tasks: Sequence[MicroTask],
                   source: Path | None = None) -> None:
    """Raise the one-line error a reading of ``models`` x ``tasks`` would stop at before its
    first reading: a model that cannot run now (:func:`~slmbench.models.readiness.check_ready`),
    a task whose dataset is not built or is malformed. Run it before a readings store is
    made, so a run that cannot start leaves no folder behind. No model is loaded."""
    for spec in models:
        check_ready(spec)
    for task in tasks:
        task.load_items(source)


def check_job(job: Job[R]) -> None:
    """Raise what would stop ``job`` before its first reading (a model not ready, a dataset
    not built: :func:`check_can_read`), making nothing."""
    check_can_read(job.models, list({t.name: t for t in job.tasks}.values()), job.source)


def run_job(job: Job[R], out: Path | None = None, store_path: Path | None = None, *,
            checked: bool = False) -> Done[R]:
    """Run ``job`` through the readings store at ``store_path`` (default
    ``OUT/readings.sqlite``: reused and resumed), then, given ``out``, write its report and
    page there.

    A job that cannot start (:func:`check_job`; ``checked``: the caller checked it, with
    every other job of its run, before any began) raises before the store is made, so it
    writes nothing. Ctrl-C while reading raises :class:`Interrupted` (the readings made so
    far are kept).
    """
    if store_path is None:
        if out is None:
            raise ValueError("run_job needs an `out` folder or a `store_path`")
        store_path = out / DEFAULT_NAME
    if not checked:
        check_job(job)
    with job.where() as ray, ReadingStore(store_path) as store:
        try:
            report = job.read(store, ray)
        except KeyboardInterrupt:
            raise Interrupted(store.resume_hint()) from None
    if out is None:
        return Done(report=report, store_path=store.path)
    page = job.render(report) if job.render is not None else None
    json_path, page_path = write_report(out / job.stem, report, page)
    return Done(report=report, store_path=store.path, page=page, json_path=json_path,
                page_path=page_path)
