"""The ladder table of docs/tasks.md ("Levels"): each capability family's levels, the level of
its base instance and why, and what each generated level asks, from the ladders themselves
(``slmbench.agents.tasks.families.levels``).

Usage::

    python benchmarks/ladder_table.py          # rewrite the section of docs/tasks.md
    python benchmarks/ladder_table.py --check  # exit 1 if the committed section differs

tests/agents/tasks/test_levels.py checks the committed section is what this makes.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from slmbench.agents.tasks import load_tasks
from slmbench.agents.tasks.families.levels import ladder_of

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "tasks.md"
START = "<!-- ladder-table: start (benchmarks/ladder_table.py) -->"
END = "<!-- ladder-table: end -->"


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def section() -> str:
    """The table's Markdown, between its markers: one row per capability family."""
    rows = ["| family | group | levels | base (why) | the other levels |",
            "|---|---|---|---|---|"]
    for task in sorted((t for t in load_tasks().values() if t.suite == "capability"),
                       key=lambda t: (t.group, t.id.split("-")[0], int(t.id.split("-")[1]))):
        ladder = ladder_of(task)
        if ladder is None:
            rows.append(f"| {task.id} | {task.group} | – | – | no ladder |")
            continue
        levels = ", ".join(str(n) for n in sorted({ladder.base, *ladder.forms}))
        others = ("; ".join(f"{n}: {_cell(f.what)}" for n, f in sorted(ladder.forms.items()))
                  or f"single-level: {_cell(ladder.single or '')}")
        rows.append(f"| {task.id} | {task.group.replace('_', ' ')} | {levels} | "
                    f"{ladder.base} ({_cell(ladder.why_base)}) | {others} |")
    return "\n".join(rows)


def rewritten(doc: str) -> str:
    head, _, rest = doc.partition(START)
    _, _, tail = rest.partition(END)
    if not rest:
        raise SystemExit(f"{DOC}: no {START!r} marker")
    return f"{head}{START}\n{section()}\n{END}{tail}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the section differs")
    args = parser.parse_args()
    doc = DOC.read_text(encoding="utf-8")
    new = rewritten(doc)
    if args.check:
        if new != doc:
            print(f"{DOC}: the ladder table is stale; run python benchmarks/ladder_table.py",
                  file=sys.stderr)
            return 1
        return 0
    DOC.write_text(new, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
