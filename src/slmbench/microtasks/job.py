"""The one entry of a Part B run: check it can read, read through a readings store (in this
process or on Ray), write its report as JSON and its page as Markdown.

Every reading command (``eligibility``, ``diagnose``, ``probe``, ``cascade``, ``quantize``)
is one :class:`Job` handed to :func:`run_job`: the micro-tasks it reads come in as
``MicroTask`` objects, looked up once by the caller (the CLI); its ``read`` is the run
itself (``run_matrix``, ``run_diagnose``, ...) given the open store and the Ray cluster; its
``render`` is the page of its report. Part B never imports :mod:`slmbench.report`, so the
caller hands the page renderer in (``slmbench.report.partb.matrix_markdown``, ...).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Generic, Protocol, TypeVar

from slmbench.microtasks.matrix import check_can_read
from slmbench.microtasks.spec import MicroTask
from slmbench.microtasks.store import DEFAULT_NAME, ReadCounts, ReadingStore
from slmbench.models.ray import RayCluster

__all__ = ["Done", "Interrupted", "Job", "Report", "run_job", "write_report"]


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

    ``stem``: its outputs are ``OUT/<stem>.json`` and ``OUT/<stem>.md``. ``models`` and
    ``tasks``: every model spec it loads and every task whose items it reads, checked before
    the store is made. ``read(store, ray)`` runs it. ``where()``: where the models read (the
    context of :func:`~slmbench.microtasks.session.read_on`; default: this process).
    """

    stem: str
    models: Sequence[str]
    tasks: Sequence[MicroTask]
    read: Callable[[ReadingStore, RayCluster | None], R]
    render: Callable[[R], str]
    where: Callable[[], AbstractContextManager[RayCluster | None]] = field(default=_here)
    source: Path | None = None  # the built datasets (default: the cache)


@dataclass(frozen=True)
class Done(Generic[R]):
    """A job's report, its page and where they and its readings were written."""

    report: R
    page: str
    json_path: Path
    page_path: Path
    store_path: Path


def write_report(stem: Path, report: Report, page: str) -> tuple[Path, Path]:
    """Write ``STEM.json`` (the report) and ``STEM.md`` (its page), making the folder."""
    stem.parent.mkdir(parents=True, exist_ok=True)
    json_path, page_path = stem.with_suffix(".json"), stem.with_suffix(".md")
    json_path.write_text(report.model_dump_json(indent=1), encoding="utf-8")
    page_path.write_text(page, encoding="utf-8")
    return json_path, page_path


def run_job(job: Job[R], out: Path, store_path: Path | None = None) -> Done[R]:
    """Run ``job`` through the readings store at ``store_path`` (default
    ``OUT/readings.sqlite``: reused and resumed), then write its report and page in ``out``.

    A job that cannot start (a model not ready, a dataset not built: :func:`~slmbench.
    microtasks.matrix.check_can_read`) raises before the store is made, so it writes nothing.
    Ctrl-C while reading raises :class:`Interrupted` (the readings made so far are kept).
    """
    check_can_read(job.models, list({t.name: t for t in job.tasks}.values()), job.source)
    with job.where() as ray, ReadingStore(store_path or out / DEFAULT_NAME) as store:
        try:
            report = job.read(store, ray)
        except KeyboardInterrupt:
            raise Interrupted(store.resume_hint()) from None
    page = job.render(report)
    json_path, page_path = write_report(out / job.stem, report, page)
    return Done(report=report, page=page, json_path=json_path, page_path=page_path,
                store_path=store.path)
