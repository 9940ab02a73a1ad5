"""``slmbench demo``: the main job on one model, end to end, in one command.

It runs the demo's study file (``slmbench/study/demo.toml``): the ``quick`` suite
(the first task of every capability group and every reliability dimension, with
their variants) through the ReAct agent, analyses the run and writes the HTML
report; then the Part B slice (two micro-tasks under p0, read until decided up to
a small cap) into ``<run>/part-b``, prints the routing verdict, and ends by
printing the path of the one page holding both halves (``demo-report.md``).
Before each phase it prints the time elapsed and an estimate of the phase. The
run directory is a pure function of the model, so running the same command
again resumes where an interrupted demo stopped. ``make demo`` calls it on the
embedded default model, Qwen2.5-Coder-0.5B-Instruct.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from slmbench.agents.runner.config import DEMO_MODEL
from slmbench.agents.runner.executor import RunSummary
from slmbench.cli.console import command_line, wide_console
from slmbench.cli.progress import CellBar
from slmbench.cli.tables import print_summary
from slmbench.report import ReportFiles
from slmbench.study import run_demo


def _print_part_a(summary: RunSummary, files: ReportFiles, console: Console) -> None:
    print_summary(summary, console)
    console.print(f"analysis: {files.summary}", highlight=False, soft_wrap=True)
    console.print(f"figures and tables: {files.html.parent}", highlight=False, soft_wrap=True)
    console.print(f"HTML report: {files.html}", highlight=False, soft_wrap=True)


def register(app: typer.Typer) -> None:
    @app.command()
    def demo(
        model: Annotated[str, typer.Option(
            "--model", "-m", help="model spec (default: the embedded Qwen2.5-Coder-0.5B)")
        ] = DEMO_MODEL,
        out: Annotated[Path | None, typer.Option(
            help="run directory (default runs/demo-<model>)")] = None,
        suite: Annotated[str | None, typer.Option(
            help="suite to run (default: the demo study file's, quick)")] = None,
        task: Annotated[list[str] | None, typer.Option(
            "--task", "-t", help="only these task ids (repeatable)")] = None,
        temperature: Annotated[float | None, typer.Option(
            help="sampling temperature (default: the demo study file's, 0.7; consistency is "
                 "measured only at T > 0)")] = None,
        repeats: Annotated[int | None, typer.Option(
            help="runs of each trial cell (default: the demo study file's, 1)")] = None,
        skip_code_tasks: Annotated[bool, typer.Option(
            "--skip-code-tasks", help="leave out tasks needing code_interpreter (no bubblewrap)")
        ] = False,
    ) -> None:
        """Run the quick suite and the Part B slice on a model; write one report of both."""
        console = wide_console()
        done = run_demo(model, out=out, suite=suite, tasks=task, temperature=temperature,
                        repeats=repeats, skip_code_tasks=skip_code_tasks or None,
                        command=command_line("slmbench demo"), console=console,
                        cell_progress=CellBar(console),
                        on_part_a=lambda s, f: _print_part_a(s, f, console))
        for line in done.part_b:
            console.print(line, highlight=False, soft_wrap=True)
        console.print("[bold]Report (Part A and Part B):[/]", highlight=False)
        print(done.page)
