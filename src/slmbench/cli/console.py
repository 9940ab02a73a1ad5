"""The console every command prints tables through, the command line a report records, and
running a Part B job (how Ctrl-C and the reuse counts are shown)."""

from __future__ import annotations

import sys
from collections.abc import Collection, Sequence
from pathlib import Path
from typing import TypeVar

import typer
from rich.console import Console
from rich.table import Table

from slmbench.core.paths import shown_command
from slmbench.microtasks import job as job_entry
from slmbench.microtasks.job import Done, Interrupted, Job, Report

MIN_WIDTH = 160
R = TypeVar("R", bound=Report)


def wide_console(min_width: int = MIN_WIDTH) -> Console:
    """A console at least ``min_width`` columns wide.

    Piped or logged output (no terminal) would otherwise be 80 columns, and rich squeezes
    table columns to nothing to fit: the spec strings of ``slmbench models`` vanished.
    """
    console = Console()
    return console if console.width >= min_width else Console(width=min_width)


def rows_table(title: str, columns: Sequence[str], rows: Sequence[Sequence[str]], *,
               no_wrap: Collection[str] = ()) -> Table:
    """A table of ``rows`` under ``columns`` (a page's rows, shown in the terminal); the columns
    named in ``no_wrap`` are never wrapped."""
    table = Table(title=title, title_justify="left")
    for col in columns:
        table.add_column(col, no_wrap=col in no_wrap)
    for row in rows:
        table.add_row(*row)
    return table


def command_line(default: str) -> str:
    """The command as the user typed it, for a report's ``command`` (paths through
    :func:`slmbench.core.paths.shown_command`); ``default`` when there is no argv."""
    return shown_command(["slmbench", *sys.argv[1:]]) if sys.argv[1:] else default


def run_job(job: Job[R], out: Path, store_path: Path | None = None) -> Done[R]:
    """:func:`slmbench.microtasks.job.run_job` (check, read through the store, write the
    report and page); then how many readings were reused and made. On Ctrl-C: where the
    readings are kept and how to resume, exit 130."""
    try:
        done = job_entry.run_job(job, out, store_path)
    except Interrupted as stop:
        Console().print(stop.hint, highlight=False)
        raise typer.Exit(130) from None
    Console().print(done.report.read_counts.describe(done.store_path), highlight=False)
    return done
