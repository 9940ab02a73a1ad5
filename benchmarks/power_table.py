"""The power table of docs/tasks.md: the minimum detectable difference of a paired comparison of
two models against families, instances and trials, at the variance components measured so far.

The pair's components come from the committed exports in ``PAIRS`` (the most variable pair
of models, ``agents.power.most_variable_pair``); the share of the family term that lies
between instances, from the committed exports in ``INSTANCE_RUNS`` (one model over several
instances, ``agents.power.instance_share``), while none of the pair exports separates them.

Usage::

    python benchmarks/power_table.py          # rewrite the section of docs/tasks.md
    python benchmarks/power_table.py --check  # exit 1 if the committed section differs

tests/agents/test_power_planning.py checks the committed section is what this makes.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from slmbench.agents import power
from slmbench.agents.records import Trial
from slmbench.agents.store import read_trials

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "tasks.md"
START, END = "<!-- power-table: start (benchmarks/power_table.py) -->", "<!-- power-table: end -->"
PAIRS = {"reference study v2 (docs/results/reference-study)":
         "docs/results/reference-study/trials.jsonl.gz"}
INSTANCE_RUNS: dict[str, str] = {}  # label -> committed export of a run over instances
HINT = "regenerate the export with `slmbench study ... --export`"


def _trials(paths: dict[str, str]) -> list[Trial]:
    return [t for p in paths.values() for t in read_trials(ROOT / p, HINT)]


def section() -> str:
    """The section's Markdown, between its markers."""
    pair = power.most_variable_pair(_trials(PAIRS))
    if pair is None:
        raise SystemExit(f"no pair of models in {sorted(PAIRS.values())} has enough cells")
    share = power.instance_share(_trials(INSTANCE_RUNS)) if INSTANCE_RUNS else None
    return power.render_power_table(pair, share, " and ".join(PAIRS))


def replaced(doc: str, body: str) -> str:
    """``doc`` with the text between the markers replaced by ``body``."""
    if doc.count(START) != 1 or doc.count(END) != 1 or doc.index(START) > doc.index(END):
        raise SystemExit(f"{DOC}: expected one '{START}' before one '{END}'")
    head, rest = doc.split(START)
    return f"{head}{START}\n\n{body}\n{END}{rest.split(END, 1)[1]}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only compare, write nothing")
    args = parser.parse_args(argv)
    doc = DOC.read_text(encoding="utf-8")
    new = replaced(doc, section())
    if args.check:
        if new != doc:
            print(f"{DOC} is stale: run python benchmarks/power_table.py", file=sys.stderr)
            return 1
        return 0
    DOC.write_text(new, encoding="utf-8")
    print(f"wrote the power table of {DOC.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
