"""``slmbench tasks list`` (the shipped suites or a file) and ``slmbench tasks validate``."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import typer
from rich.console import Console
from rich.markup import escape

from slmbench.agents.tasks import SHIPPED_SUITES, Task
from slmbench.cli.console import wide_console
from slmbench.cli.options import Levels
from slmbench.cli.task_tables import MIN_WIDTH, certification_table, ladder_table, task_table

tasks_app = typer.Typer(help="List and check agent tasks.", no_args_is_help=True)
console = Console()


def _counts(label: str, counter: Counter[str]) -> str:
    return f"{label}: " + ", ".join(f"{k} {v}" for k, v in sorted(counter.items()))


@tasks_app.command("list")
def list_tasks(
    suite: str | None = typer.Option(None, "--suite", "-s",
                                     help=f"one of {', '.join(SHIPPED_SUITES)} (default: all)"),
    file: Path | None = typer.Option(None, "--file", "-f", help="a YAML suite file instead"),
    pack: str | None = typer.Option(None, "--pack", "-p",
                                    help="a task pack instead (built on first use)"),
    levels: bool = typer.Option(False, "--levels",
                                help="also each capability family's difficulty ladder"),
) -> None:
    """Show tasks with their group, dimension, tools and scorer, then the counts (and, with
    --levels, each capability family's levels)."""
    sources: list[str | Path] = ([file] if file else [f"pack:{pack}"] if pack
                                 else [suite] if suite else list(SHIPPED_SUITES))
    from slmbench.agents.evaluator import load_task_file

    wide = wide_console(MIN_WIDTH)
    capability: Counter[str] = Counter()
    for source in sources:
        tasks = load_task_file(source)
        wide.print(task_table(f"{source}: {len(tasks)} tasks", tasks))
        console.print(_counts("groups", Counter(t.group for t in tasks)))
        dims = Counter(t.dimension for t in tasks if t.dimension)
        if dims:
            console.print(_counts("dimensions", dims))
        capability.update(t.group for t in tasks if t.suite == "capability")
        if levels and (ladder := ladder_table(tasks)) is not None:
            wide.print(ladder)
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
    levels: Levels = None,
) -> None:
    """Check a suite (answers derivable from the world), by default that each reference solves
    its task; with --instances, certify each family (docs/tasks.md, "Certification"), at
    each of --levels."""
    from slmbench.agents.evaluator import load_task_file, reference_failures
    from slmbench.agents.tasks.families.levels import parse_levels

    asked = parse_levels(levels) if levels else None
    if asked and not instances:
        raise typer.BadParameter("--levels certifies levels over drawn worlds: give "
                                 "--instances N too (20 or more)", param_hint="--levels")
    tasks = load_task_file(path)
    console.print(f"{path}: {len(tasks)} tasks parse and validate")
    if instances:
        _certify(tasks, instances, asked)
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


def _certify(tasks: list[Task], n: int, asked: list[int] | None = None) -> None:
    from slmbench.agents.certify import certify, certify_groups
    from slmbench.agents.tasks.families.levels import to_certify

    checks = [(label, certify(t, range(1, n + 1), level=name))
              for t in tasks for name, label in to_certify(t, asked)]
    wide_console(MIN_WIDTH).print(certification_table(checks, n, levels=asked is not None))
    groups = [g for g in certify_groups(tasks) if not g.passed]
    for line in [r for _, c in checks for r in c.reasons] + [g.reason for g in groups]:
        console.print(f"[red]FAIL[/] {escape(line)}", highlight=False)
    if failed := ([c.name for _, c in checks if not c.passed]
                  + [f"group {g.group}" for g in groups]):
        console.print(f"[red]{len(failed)} famil(ies) not certified[/]: {', '.join(failed)}")
        raise typer.Exit(1)
    what = f"{len(checks)} family levels" if asked else "every family"
    console.print(f"{what} certified over {n} instances")


def register(app: typer.Typer) -> None:
    app.add_typer(tasks_app, name="tasks")
