"""``slmbench study FILE``: run (or resume) a study's two parts and write its results page;
``slmbench import EXPORTS_DIR``: rebuild a study's stores from the exports beside its page."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from slmbench.cli.console import wide_console
from slmbench.cli.run_cmd import print_summary
from slmbench.core.errors import ConfigError
from slmbench.core.paths import shown_command, shown_path
from slmbench.study import (
    PlanRow,
    Study,
    check_can_run,
    check_models,
    export_study,
    import_exports,
    load_study,
    merge_stores,
    page_blocker,
    run_cascades,
    run_part_a,
    run_part_b,
    size_plan,
    write_page,
)

_OUT_HELP = ("keep every store of the study under this folder instead of the file's `out` "
             "(HumanEval directories as OUT/humaneval/<name>)")


def _load(file: Path, out: Path | None) -> Study:
    study = load_study(file)
    return study if out is None else study.rooted(out)


def print_plan(rows: list[PlanRow], console: Console) -> None:
    """One line per block and model, then the model hours per block and in all."""
    table = Table("block", "model", "planned", "stored", "to run", "s each (n measured)",
                  "hours", box=None)
    for r in rows:
        rate = "–" if r.seconds_per is None else (
            f"{r.seconds_per:.1f} ({r.measured_n}" + (f", on {r.rate_from})" if r.rate_from
                                                      else ")"))
        table.add_row(r.block, r.model, f"{'≤ ' if r.at_most else ''}{r.planned} {r.unit}s",
                      str(r.stored), f"{'≤ ' if r.at_most else ''}{r.remaining}", rate,
                      "–" if r.hours is None else f"{r.hours:.2f}")
    console.print(table)
    blocks = dict.fromkeys(r.block for r in rows)
    for b in blocks:
        mine = [r for r in rows if r.block == b]
        known = sum(r.hours or 0.0 for r in mine)
        unknown = [r.model for r in mine if r.hours is None and r.remaining]
        console.print(f"{b}: {known:.1f} model hours to run"
                      + (f" (+ {', '.join(unknown)}: no rate measured)" if unknown else ""),
                      highlight=False)
    total = sum(r.hours or 0.0 for r in rows)
    missing = sum(r.hours is None and r.remaining > 0 for r in rows)
    console.print(f"in all: {total:.1f} model hours at the measured rates"
                  + (f"; {missing} block model(s) without a rate not counted" if missing else "")
                  + ("; sequential Part B blocks are upper bounds" if any(r.at_most for r in rows)
                     else ""), highlight=False)


def register(app: typer.Typer) -> None:
    @app.command()
    def study(
        file: Annotated[Path, typer.Argument(
            help="study TOML file, e.g. experiments/reference.toml")],
        part: Annotated[str, typer.Option(help="a | b | all: which part to run")] = "all",
        model: Annotated[list[str] | None, typer.Option(
            "--model", "-m", help="run only this model of the study (repeatable)")] = None,
        page_only: Annotated[bool, typer.Option(
            "--page-only", help="write the page from what is stored; load no model")] = False,
        out: Annotated[Path | None, typer.Option("--out", help=_OUT_HELP)] = None,
        merge: Annotated[list[Path] | None, typer.Option(
            "--merge", help="another machine's study `out` folder, or a folder of its exports "
                            "(--export; repeatable): copy its trials and readings into this "
                            "study's stores, then write the page; runs no model")] = None,
        export: Annotated[Path | None, typer.Option(
            "--export", help="write everything the study has stored into this folder as "
                             "*.jsonl.gz (to carry it to another machine or commit it; --merge "
                             "reads it back); runs no model, writes no page")] = None,
        plan_only: Annotated[bool, typer.Option(
            "--plan", help="print each block's planned, stored and remaining work and the model "
                           "hours it should take at the measured rates; run nothing")] = False,
        rates: Annotated[list[Path] | None, typer.Option(
            "--rates", help="with --plan: also measure rates in this folder's stores (a run "
                            "directory, an earlier study's `out`, or the exports folder "
                            "beside a page; repeatable)")] = None,
        readme: Annotated[Path | None, typer.Option(
            "--readme", help="also replace the study's entry in this file (e.g. README.md), "
                             "between the lines <!-- study:PAGE --> and <!-- /study:PAGE --> "
                             "(PAGE: the page's file name without .md)")] = None,
    ) -> None:
        """Run what is missing of a study (resumable) and write its results page."""
        if part not in ("a", "b", "all"):
            raise ConfigError(f"--part {part!r} is not a, b or all", "e.g. --part a")
        plan = _load(file, out)
        check_models(plan, model)
        console = wide_console()
        if plan_only:
            print_plan(size_plan(plan, rates or []), console)
            return
        if export is not None:
            for path, n in export_study(plan, export).stores.items():
                console.print(f"{path}: {n} records", highlight=False)
            return
        if merge:
            for path, n in merge_stores(plan, merge).stores.items():
                console.print(f"{path}: {n} records merged", highlight=False)
        elif not page_only:
            check_can_run(plan, part, model)  # before any block: nothing half-written
            if part in ("a", "all"):
                for summary in run_part_a(plan, model, console):
                    print_summary(summary, console)
            if part in ("b", "all"):
                run_part_b(plan, model, console)
                run_cascades(plan, model, console)
        if plan.page is None:
            console.print("no `page` in the study file: no results page written")
            return
        if (blocked := page_blocker(plan, file)) is not None:
            console.print(f"results page not written: {blocked}", highlight=False)
            return
        # a page is published: a study file outside the repository loses this machine's prefix
        command = shown_command(["slmbench", "study", shown_path(file, published=True)])
        page = write_page(plan, study_file=file, command=command, readme=readme)
        console.print(f"results page: {page}", highlight=False)
        if readme is not None:
            console.print(f"its entry in {readme} replaced", highlight=False)

    @app.command("import")
    def import_(
        exports: Annotated[Path, typer.Argument(
            help="the folder of *.jsonl.gz exports beside a study page, e.g. "
                 "docs/results/reference-study")],
        study_file: Annotated[Path, typer.Option(
            "--study", help="the study file the page was made from (it says where each "
                            "trial, reading and HumanEval result belongs)")],
        out: Annotated[Path | None, typer.Option("--out", help=_OUT_HELP)] = None,
    ) -> None:
        """Rebuild a study's run and readings stores from its page's exports (no model)."""
        summary = import_exports(exports, _load(study_file, out))
        for path, n in summary.stores.items():
            print(f"{path}: {n} records")
