"""``slmbench report RUN``: figures (PDF+PNG), LaTeX tables and one self-contained HTML page."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.console import Console

from slmbench.agents.analysis import parse_params


def report(
    run: Path = typer.Argument(..., help="run directory (holds run.sqlite)"),
    out: Path | None = typer.Option(None, "--out", help="output folder (default RUN/report)"),
    params: list[str] = typer.Option(
        [], "--params", help="model size as MODEL=B (billions), repeatable; wins over the "
        "registry"),
) -> None:
    """Analyse the run and write its figures, LaTeX tables and HTML report."""
    from slmbench.report import build_report  # matplotlib loads only for this command

    files = build_report(run, out, params=parse_params(params))
    err = Console(stderr=True)
    err.print(f"{len(files.figures)} figures (PDF and PNG) in {files.html.parent / 'figures'}",
              highlight=False, soft_wrap=True)
    err.print(f"{len(files.tables)} LaTeX tables in {files.html.parent / 'tables'}",
              highlight=False, soft_wrap=True)
    err.print(f"summary: {files.summary}", highlight=False, soft_wrap=True)
    print(files.html)


def register(app: typer.Typer) -> None:
    app.command("report")(report)
