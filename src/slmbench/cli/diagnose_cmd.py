"""``slmbench diagnose`` (threshold table + failure regime per cell) and ``slmbench probe``
(context length)."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.console import Console

from slmbench.cli.console import command_line, rows_table, run_job, wide_console
from slmbench.cli.options import EvalLimit, ItemSeed, Models, OutFolder, ReadingsStore, Tasks
from slmbench.cli.scaleout import ScaleOut, scale_out_options
from slmbench.core.errors import ConfigError
from slmbench.microtasks import tasks as registry
from slmbench.microtasks.diagnostics.diagnose import run_diagnose
from slmbench.microtasks.diagnostics.probes import run_probe
from slmbench.microtasks.job import Job
from slmbench.microtasks.session import Session
from slmbench.microtasks.store import DEFAULT_NAME
from slmbench.report.diagnostics_page import (
    CALIB_COLUMNS,
    DIAG_COLUMNS,
    calibration_rows,
    diagnostic_rows,
    diagnostics_markdown,
)
from slmbench.report.probe_page import probe_markdown

console = Console()


def say(message: str) -> None:
    """A read loop's progress line, dimmed."""
    console.print(f"[dim]{message}[/]")


@scale_out_options
def diagnose_cmd(
    model: Models,
    task: Tasks = None,
    limit: EvalLimit = None,
    fit_limit: int | None = typer.Option(None, "--fit-limit", min=1,
                                         help="fit items per task (default: same as --limit)"),
    seed: ItemSeed = 0,
    out: OutFolder = Path("diagnostics"),
    store_path: Path | None = typer.Option(
        None, "--store", help="readings store, reused and resumed; point it at an eligibility "
        f"run's store to reuse its p0 readings (default: OUT/{DEFAULT_NAME})"),
    scale: ScaleOut = ScaleOut(),
) -> None:
    """Threshold diagnostic per (task, model): AUC, default vs fit-split threshold, regime."""
    tasks = registry.lookup(task)
    done = run_job(Job("diagnostics", model, tasks, lambda store, ray: run_diagnose(
        model, tasks, limit=limit, fit_limit=fit_limit or limit, seed=seed,
        command=command_line("slmbench diagnose"), progress=say, store=store, ray=ray),
        diagnostics_markdown, where=lambda: scale.read_on(model)), out, store_path)
    wide_console(200).print(rows_table(
        "Threshold diagnostics (eval split; thresholds fitted on the fit split)",
        DIAG_COLUMNS, diagnostic_rows(done.report)))
    wide_console(200).print(rows_table(
        "Calibration and selective prediction (log-prob reading; coverage = the most "
        "confident share of items)", CALIB_COLUMNS, calibration_rows(done.report)))
    for r in done.report.regimes:
        console.print(f"{r.task} · {r.model}: [bold]{r.regime}[/] — {r.reason}", highlight=False)
    console.print(f"wrote {done.json_path} and {done.page_path}")


@scale_out_options
def probe_cmd(
    model: Models,
    task: list[str] | None = typer.Option(None, "--task", "-t", help="memory and/or ranking"),
    lengths: str = typer.Option("4,8,16,32", "--turns", help="history lengths in turns"),
    limit: EvalLimit = None,
    seed: ItemSeed = 0,
    out: OutFolder = Path("probe"),
    store_path: ReadingsStore = None,
    scale: ScaleOut = ScaleOut(),
) -> None:
    """Context-length probe: memory and ranking scores as the history in the prompt grows."""
    try:
        turns = [int(x) for x in lengths.split(",") if x.strip()]
    except ValueError as exc:
        raise ConfigError(f"--turns {lengths!r} is not a list of integers",
                          "write e.g. --turns 4,8,16,32") from exc
    tasks = registry.lookup(task or ["memory", "ranking"])
    history = registry.history_of(tasks)  # the task whose conversations widen them
    done = run_job(Job("probe", model, [*tasks, *([history] if history else [])],
                       lambda store, ray: run_probe(
        model, tasks, turns, history=history, limit=limit, seed=seed,
        command=command_line("slmbench probe"),
        session=Session(ray=ray, store=store, progress=say)),
        probe_markdown, where=lambda: scale.read_on(model)), out, store_path)
    console.print(done.page, markup=False, highlight=False)
    console.print(f"wrote {done.json_path} and {done.page_path}")


def register(app: typer.Typer) -> None:
    app.command("diagnose")(diagnose_cmd)
    app.command("probe")(probe_cmd)
