"""``slmbench report RUN``: figures (PDF+PNG), LaTeX tables and one self-contained HTML page;
``slmbench readme``: the README's result entries, written again from the reports they name."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.console import Console

from slmbench.cli.options import parse_params


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


def readme(
    path: Path = typer.Argument(Path("README.md"), help="the README to write the entries of"),
) -> None:
    """Write every generated result entry of a README again from the report it names."""
    from slmbench.core.paths import shown_path
    from slmbench.report.readme import refresh_readme

    changed, sources = refresh_readme(
        path, command=f"slmbench readme {shown_path(path, published=True)}")
    Console().print(f"{len(sources)} result entries of {path}: "
                    + ("written again" if changed else "already up to date"),
                    highlight=False, soft_wrap=True)


def register(app: typer.Typer) -> None:
    app.command("report")(report)
    app.command("readme")(readme)
