"""``slmbench tasks list`` (the shipped suites or a file) and ``slmbench tasks validate``."""

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
                                     help=f"one of {', '.join(SHIPPED_SUITES)} (default: all)"),
    file: Path | None = typer.Option(None, "--file", "-f", help="a YAML suite file instead"),
    pack: str | None = typer.Option(None, "--pack", "-p",
                                    help="a task pack instead (built on first use)"),
) -> None:
    """Show tasks with their group, dimension, tools and scorer, then the counts."""
    sources: list[str | Path] = ([file] if file else [f"pack:{pack}"] if pack
                                 else [suite] if suite else list(SHIPPED_SUITES))
    from slmbench.agents.evaluator import load_task_file

    wide = wide_console(MIN_WIDTH)
    capability: Counter[str] = Counter()
    for source in sources:
        tasks = load_task_file(source)
        wide.print(_table(f"{source}: {len(tasks)} tasks", tasks))
        console.print(_counts("groups", Counter(t.group for t in tasks)))
        dims = Counter(t.dimension for t in tasks if t.dimension)
        if dims:
            console.print(_counts("dimensions", dims))
        capability.update(t.group for t in tasks if t.suite == "capability")
    if len(sources) > 1:  # the shipped suites: the capability families rates count over
        console.print(_counts(f"capability families in all ({capability.total()}), groups",
                              capability))


@tasks_app.command("validate")
def validate(
    path: str = typer.Argument(..., help=f"a YAML suite file or {' / '.join(SHIPPED_SUITES)}"),
    run_reference: bool = typer.Option(
        True, "--reference/--no-reference",
        help="replay every task's reference solution (under every variant) and score it"),
    instances: int = typer.Option(0, "--instances", "-n", min=0,
                                  help="also certify each task family over world seeds 1..N"),
) -> None:
    """Check a suite (answers derivable from the world), by default that each reference solves
    its task; with --instances, certify each family (docs/tasks.md, "Certification")."""
    from slmbench.agents.evaluator import load_task_file, reference_failures

    tasks = load_task_file(path)
    console.print(f"{path}: {len(tasks)} tasks parse and validate")
    if instances:
        _certify(tasks, instances)
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


def _certify(tasks: list[Task], n: int) -> None:
    from slmbench.agents.certify import AGENTS, certify, certify_groups
    checks = [certify(t, range(1, n + 1)) for t in tasks]
    table = Table(title=f"families over world seeds 1..{n}: right answers of each no-skill "
                  "agent", title_justify="left")
    for col in ("family", "reference", *AGENTS, "bound", ""):
        table.add_column(col.replace("_", " "))
    for c in checks:
        bound = f"{c.bound:.0%}" + ("" if c.chance is None else f" (chance {c.chance:.0%} + 10)")
        table.add_row(c.family, f"{c.reference_solved}/{c.instances}",
                      *(f"{a.right}" for a in c.agents), bound, "ok" if c.passed else "FAIL")
    console.print(table)
    groups = [g for g in certify_groups(tasks) if not g.passed]
    for line in [r for c in checks for r in c.reasons] + [g.reason for g in groups]:
        console.print(f"[red]FAIL[/] {escape(line)}", highlight=False)
    if failed := [c.family for c in checks if not c.passed] + [f"group {g.group}" for g in groups]:
        console.print(f"[red]{len(failed)} famil(ies) not certified[/]: {', '.join(failed)}")
        raise typer.Exit(1)
    console.print(f"every family certified over {n} instances")


def register(app: typer.Typer) -> None:
    app.add_typer(tasks_app, name="tasks")
