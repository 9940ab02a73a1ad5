"""``slmbench study FILE`` as one call: merge, run what is missing, write the page."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from rich.console import Console

from slmbench.agents.runner.executor import RunSummary
from slmbench.core.errors import ConfigError
from slmbench.core.paths import shown_command, shown_path
from slmbench.study.agree import render_templates, write_agreement_page
from slmbench.study.carry import merge_stores
from slmbench.study.page import page_blocker, write_page
from slmbench.study.run import check_can_run, run_cascades, run_part_a, run_part_b
from slmbench.study.spec import Study, check_models


@dataclass(frozen=True)
class StudyRun:
    """What :func:`run_study` did: records merged per store, and the page written (or, in
    ``no_page``, why none was)."""

    merged: dict[str, int] = field(default_factory=dict)
    page: Path | None = None
    no_page: str = ""


def run_study(study: Study, study_file: Path, *, part: str = "all",
              models: list[str] | None = None, page_only: bool = False,
              merge: Sequence[Path] = (), readme: Path | None = None,
              console: Console | None = None,
              on_summary: Callable[[RunSummary], None] = lambda s: None) -> StudyRun:
    """Merge ``merge`` (another machine's stores or exports; then nothing runs), else run what is
    missing of ``part`` (a, b or all) for ``models`` (unless ``page_only``), then write the
    page (and ``readme``'s entry) when the study file names one and no other study's page is
    in its way (:func:`~slmbench.study.page.page_blocker`). Each Part A block's run summary
    goes to ``on_summary`` as it ends; progress to ``console``.

    ConfigError before anything is written: a bad ``part`` or ``models``, a study that cannot
    run (:func:`~slmbench.study.run.check_can_run`), or a refused merge."""
    if part not in ("a", "b", "all"):
        raise ConfigError(f"--part {part!r} is not a, b or all", "e.g. --part a")
    check_models(study, models)
    console = console or Console()
    merged = merge_stores(study, merge).stores if merge else {}
    if not merge and not page_only:
        check_can_run(study, part, models)  # before any block: nothing half-written
        if part in ("a", "all"):
            for summary in run_part_a(study, models, console):
                on_summary(summary)
        if part in ("b", "all"):
            run_part_b(study, models, console)
            run_cascades(study, models, console)
    if study.page is None:
        return StudyRun(merged, no_page="no `page` in the study file: no results page written")
    if (blocked := page_blocker(study, study_file)) is not None:
        return StudyRun(merged, no_page=f"results page not written: {blocked}")
    # a page is published: a study file outside the repository loses this machine's prefix
    command = shown_command(["slmbench", "study", shown_path(study_file, published=True)])
    if study.agreement is not None:
        if not merge and not page_only:
            render_templates(study)
        return StudyRun(merged, write_agreement_page(study, command=command, readme=readme))
    return StudyRun(merged, write_page(study, study_file=study_file, command=command,
                                       readme=readme))
