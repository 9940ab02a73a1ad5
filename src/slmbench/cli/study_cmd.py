"""``slmbench study FILE``: run (or resume) a study's two parts and write its results page;
``slmbench import EXPORTS_DIR``: rebuild a study's stores from the exports beside its page."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from slmbench.cli.console import wide_console
from slmbench.cli.run_cmd import print_summary
from slmbench.core.errors import ConfigError
from slmbench.core.paths import shown_command
from slmbench.study import (
    Study,
    check_models,
    import_exports,
    load_study,
    run_part_a,
    run_part_b,
    write_page,
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
    ) -> None:
        """Run what is missing of a study (resumable) and write its results page."""
        if part not in ("a", "b", "all"):
            raise ConfigError(f"--part {part!r} is not a, b or all", "e.g. --part a")
        plan = _load(file, out)
        check_models(plan, model)
        console = wide_console()
        if not page_only:
            if part in ("a", "all"):
                for summary in run_part_a(plan, model, console):
                    print_summary(summary, console)
            if part in ("b", "all"):
                run_part_b(plan, model, console)
        if plan.page is None:
            console.print("no `page` in the study file: no results page written")
            return
        command = shown_command(["slmbench", "study", str(file)])
        page = write_page(plan, study_file=file, command=command)
        console.print(f"results page: {page}", highlight=False)

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
