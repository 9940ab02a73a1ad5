"""``slmbench study FILE``: run (or resume) a study's two parts and write its results page;
``slmbench import EXPORTS_DIR``: rebuild a study's stores from the exports beside its page."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from slmbench.cli.console import wide_console
from slmbench.cli.tables import print_plan, print_power, print_summary
from slmbench.study import (
    Study,
    check_models,
    export_study,
    import_exports,
    load_study,
    run_study,
    size_plan,
    size_power,
)

_OUT_HELP = ("keep every store of the study under this folder instead of the file's `out` "
             "(HumanEval directories as OUT/humaneval/<name>)")


def _load(file: Path, out: Path | None) -> Study:
    study = load_study(file)
    return study if out is None else study.rooted(out)


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
        plan = _load(file, out)
        check_models(plan, model)
        console = wide_console()
        if plan_only:
            print_plan(size_plan(plan, rates or []), console)
            print_power(size_power(plan), console)
            return
        if export is not None:
            for path, n in export_study(plan, export).stores.items():
                console.print(f"{path}: {n} records", highlight=False)
            return
        done = run_study(plan, file, part=part, models=model, page_only=page_only,
                         merge=merge or [], readme=readme, console=console,
                         on_summary=lambda s: print_summary(s, console))
        for path, n in done.merged.items():
            console.print(f"{path}: {n} records merged", highlight=False)
        if done.page is None:
            console.print(done.no_page, highlight=False)
            return
        console.print(f"results page: {done.page}", highlight=False)
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
