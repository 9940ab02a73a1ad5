"""``slmbench recommend`` (what to deploy per micro-task, and its routing table) and
``slmbench eligibility-page`` (a page from a readings store alone)."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.console import Console

from slmbench.cli.console import command_line, rows_table, wide_console
from slmbench.microtasks import tasks as registry
from slmbench.microtasks.diagnostics.cascade import CascadeReport
from slmbench.microtasks.matrix import MatrixRun
from slmbench.microtasks.prompts import resolve_prompt_ids
from slmbench.microtasks.recommend import load_cascades, load_matrices, recommend, write_routes
from slmbench.microtasks.store import ReadingStore
from slmbench.report.partb import RECOMMEND_HEADER, recommend_rows

console = Console()


def _matrices(path: Path) -> tuple[list[MatrixRun], Path | None, list[CascadeReport]]:
    """The matrices and readings store of an eligibility folder/JSON or a study file, and
    the study's cascade reports."""
    if path.suffix != ".toml":
        return (*load_matrices(path), [])
    from slmbench.study import load_study, stored_part_b

    got = stored_part_b(load_study(path))
    for line in got.notes:
        console.print(f"note: {line}", highlight=False)
    return got.matrices, got.store, got.cascades


def recommend_cmd(
    path: Path = typer.Argument(..., help="an eligibility --out folder, its eligibility.json, "
                                          "or a study file (.toml)"),
    cascade: list[Path] | None = typer.Option(None, "--cascade",
                                              help="a `slmbench cascade` cascade.json"),
    routes: Path | None = typer.Option(None, "--routes",
                                       help="routing table JSON (default: beside PATH)"),
) -> None:
    """Per micro-task: deploy the baseline, the small model, or a cascade; with evidence."""
    runs, store_path, reports = _matrices(path)
    reports += load_cascades(cascade or [])
    command = command_line("slmbench recommend")
    if store_path is None:
        rec = recommend(runs, cascades=reports, command=command)
    else:
        with ReadingStore(store_path) as store:
            rec = recommend(runs, store=store, cascades=reports, command=command)
    wide_console(170).print(rows_table("What to deploy per micro-task", RECOMMEND_HEADER,
                                       recommend_rows(rec)))
    where = write_routes(rec, routes or (path if path.is_dir() else path.parent) / "routes.json")
    console.print(f"wrote {where}", highlight=False)


def eligibility_page_cmd(
    store_path: Path = typer.Argument(..., help="readings store of `slmbench eligibility`"),
    page: Path = typer.Option(..., "--page", help="the Markdown page to write"),
    model: list[str] | None = typer.Option(None, "--model", "-m",
                                           help="model spec (default: every one stored)"),
    task: list[str] | None = typer.Option(None, "--task", "-t",
                                          help="task (default: every one stored)"),
    prompt: str | None = typer.Option(None, "--prompt", help="'all' or ids (default: stored)"),
    limit: int | None = typer.Option(None, "--limit", min=1, help="items per task, as read"),
    seed: int = typer.Option(0, "--seed", help="seed of the item sample, as read"),
    sequential: bool = typer.Option(True, "--until-decided/--fixed-n",
                                    help="how the readings were taken"),
    read_with: list[str] | None = typer.Option(
        None, "--read-with", help="the command that took the readings (printed on the page)"),
    title: str = typer.Option("Eligibility read until decided", "--title"),
) -> None:
    """Write an eligibility page from a readings store alone (loads no model)."""
    from slmbench.study import write_eligibility_page

    written = write_eligibility_page(
        store_path, page, command=command_line("slmbench eligibility-page"), models=model,
        tasks=registry.lookup(task) if task else None,
        prompts=resolve_prompt_ids(prompt) if prompt else None, limit=limit, seed=seed,
        sequential=sequential, read_with=read_with, title=title)
    console.print(f"wrote {written}", highlight=False)


def register(app: typer.Typer) -> None:
    app.command("recommend")(recommend_cmd)
    app.command("eligibility-page")(eligibility_page_cmd)
