"""``slmbench cascade``: a graded baseline's shortlist re-ranked by the model, and the
Cascade router."""

from __future__ import annotations

from pathlib import Path

import typer

from slmbench.cli.console import command_line, run_job
from slmbench.cli.diagnose_cmd import console, say
from slmbench.cli.options import ItemSeed, OutFolder, ReadingsStore
from slmbench.cli.scaleout import ScaleOut, scale_out_options
from slmbench.microtasks import tasks as registry
from slmbench.microtasks.diagnostics.cascade import run_cascade
from slmbench.microtasks.job import Job
from slmbench.microtasks.session import Session
from slmbench.report.cascade_page import cascade_markdown


@scale_out_options
def cascade_cmd(
    model: str = typer.Option(..., "--model", "-m", help="model spec"),
    task: str = typer.Option("ranking", "--task", "-t", help="ranking or tools"),
    k: int = typer.Option(3, "--k", min=2, help="shortlist size"),
    turns: int | None = typer.Option(None, "--turns", min=2,
                                     help="ranking: widen each item to this many history turns"),
    limit: int | None = typer.Option(None, "--limit", min=1, help="eval items"),
    fit_limit: int | None = typer.Option(None, "--fit-limit", min=1, help="fit items"),
    seed: ItemSeed = 0,
    out: OutFolder = Path("cascade"),
    store_path: ReadingsStore = None,
    scale: ScaleOut = ScaleOut(),
) -> None:
    """BM25 shortlist + model re-rank (paired gain), and the Cascade router's accuracy/share."""
    chosen, history = registry.cascaded(task, turns)  # history: its conversations widen it
    done = run_job(Job("cascade", [model], [chosen, *([history] if history else [])],
                       lambda store, ray: run_cascade(
        model, chosen, k=k, turns=turns, history=history, limit=limit,
        fit_limit=fit_limit or limit, seed=seed, command=command_line("slmbench cascade"),
        session=Session(ray=ray, store=store, progress=say)),
        cascade_markdown, where=lambda: scale.read_on([model])), out, store_path)
    console.print(done.page, markup=False, highlight=False)
    console.print(f"wrote {done.json_path} and {done.page_path}")


def register(app: typer.Typer) -> None:
    app.command("cascade")(cascade_cmd)
