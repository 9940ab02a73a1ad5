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


def _ladder_table(tasks: list[Task]) -> Table | None:
    """Each capability family's levels: its base's, and what each generated level asks."""
    from slmbench.agents.tasks.families.levels import ladder_of

    table = Table(title="the difficulty ladder (docs/tasks.md, \"Levels\")", title_justify="left")
    table.add_column("id", no_wrap=True, min_width=5)
    table.add_column("levels", no_wrap=True)
    table.add_column("base (why)", ratio=1)
    table.add_column("generated levels", ratio=2)
    rows = 0
    for t in tasks:
        ladder = ladder_of(t) if t.suite == "capability" else None
        if ladder is None:
            continue
        levels = sorted({ladder.base, *ladder.forms})
        forms = "; ".join(f"{n}: {f.what}" for n, f in sorted(ladder.forms.items()))
        table.add_row(t.id, ", ".join(map(str, levels)),
                      f"{ladder.base}" + (f" ({ladder.why_base})" if ladder.why_base else ""),
                      forms or f"single-level: {ladder.single}")
        rows += 1
    return table if rows else None


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
        wide.print(_table(f"{source}: {len(tasks)} tasks", tasks))
        console.print(_counts("groups", Counter(t.group for t in tasks)))
        dims = Counter(t.dimension for t in tasks if t.dimension)
        if dims:
            console.print(_counts("dimensions", dims))
        capability.update(t.group for t in tasks if t.suite == "capability")
        if levels and (ladder := _ladder_table(tasks)) is not None:
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
    levels: str | None = typer.Option(
        None, "--levels", help="with --instances: certify these levels of each capability "
        "family's difficulty ladder (comma-separated: 1,2,3) instead of its base alone"),
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


def _levels_of(task: Task, asked: list[int] | None) -> list[tuple[str, str]]:
    """(level name, label) pairs to certify for ``task``: its base alone without --levels,
    else each asked level its ladder has ("1 (base)" where the base is that level)."""
    from slmbench.agents.tasks.families.levels import ladder_of, level_name

    if asked is None:
        return [("base", "")]
    if ladder_of(task) is None:
        return [("base", "base")] if task.suite == "capability" else []
    out = []
    for n in asked:
        name = level_name(task, n)
        if name is not None:
            out.append((name, f"{n} (base)" if name == "base" else str(n)))
    return out


def _certify(tasks: list[Task], n: int, asked: list[int] | None = None) -> None:
    from slmbench.agents.certify import AGENTS, certify, certify_groups
    cells = [(t, name, label) for t in tasks for name, label in _levels_of(t, asked)]
    checks = [(label, certify(t, range(1, n + 1), level=name)) for t, name, label in cells]
    table = Table(title=f"families over world seeds 1..{n}: right answers of each no-skill "
                  f"agent ({', '.join(AGENTS)})", title_justify="left")
    for col in ("family", *(("level",) if asked else ()), "reference", *AGENTS, "bound", ""):
        table.add_column(col.replace("_", " "))
    for label, c in checks:
        bound = f"{c.bound:.0%}" + ("" if c.chance is None else f" (chance {c.chance:.0%} + 10)")
        table.add_row(c.family, *((label,) if asked else ()), f"{c.reference_solved}/{c.instances}",
                      *(f"{a.right}" for a in c.agents), bound, "ok" if c.passed else "FAIL")
    wide_console(MIN_WIDTH).print(table)
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
