"""The rich tables ``slmbench tasks`` prints: the tasks, each family's difficulty ladder, and a
certification's right answers per no-skill agent."""

from __future__ import annotations

from collections.abc import Sequence

from rich.table import Table

from slmbench.agents.certify import FamilyCheck
from slmbench.agents.tasks import Task

MIN_WIDTH = 130  # the task tables need this; narrower terminals wrap the lines


def task_table(title: str, tasks: Sequence[Task]) -> Table:
    """``tasks list``: each task's group, dimension, difficulty, scorer, tools and instruction."""
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


def ladder_table(tasks: Sequence[Task]) -> Table | None:
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


def certification_table(checks: Sequence[tuple[str, FamilyCheck]], n: int, *,
                        levels: bool) -> Table:
    """``tasks validate --instances N``: each family (at each level, with ``levels``) and how
    often each no-skill agent of the bench was right, against its bound."""
    from slmbench.agents.certify import AGENTS

    table = Table(title=f"families over world seeds 1..{n}: right answers of each no-skill "
                  f"agent ({', '.join(AGENTS)})", title_justify="left")
    for col in ("family", *(("level",) if levels else ()), "reference", *AGENTS, "bound", ""):
        table.add_column(col.replace("_", " "))
    for label, c in checks:
        bound = f"{c.bound:.0%}" + ("" if c.chance is None else f" (chance {c.chance:.0%} + 10)")
        table.add_row(c.family, *((label,) if levels else ()),
                      f"{c.reference_solved}/{c.instances}",
                      *(f"{a.right}" for a in c.agents), bound, "ok" if c.passed else "FAIL")
    return table
