"""The power sections of docs/tasks.md: the minimum detectable difference of a paired comparison
of two models against families, instances and trials, at the variance components measured so
far; and one model's success under the reference study's design and the instances run's.

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
from slmbench.core.stats import VarianceComponents

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "tasks.md"
START, END = "<!-- power-table: start (benchmarks/power_table.py) -->", "<!-- power-table: end -->"
PAIRS = {"reference study v2 (docs/results/reference-study)":
         "docs/results/reference-study/trials.jsonl.gz"}
# the stored trials of experiments/instances-qwen2.5-coder-1.5b.toml, as its sittings carry them
INSTANCE_RUNS = {"the 1.5B over five drawn worlds (experiments/instances-q15-stored)":
                 "experiments/instances-q15-stored/trials.jsonl.gz"}
# The designs section: one model's success under the reference study's design (its tasks at one
# temperature) and under the instances run's, as run and at one repeat.
DESIGN_MODEL, DESIGN_TEMPERATURE = "llamacpp:qwen2.5-coder-1.5b", 0.7
DESIGNS_START = "<!-- power-designs: start (benchmarks/power_table.py) -->"
DESIGNS_END = "<!-- power-designs: end -->"
HINT = "regenerate the export with `slmbench study ... --export`"


def _trials(paths: dict[str, str]) -> list[Trial]:
    return [t for p in paths.values() for t in read_trials(ROOT / p, HINT)]


def section(pair: power.PairComponents, share: tuple[float, str] | None) -> str:
    """The power table's Markdown, between its markers."""
    return power.render_power_table(pair, share, " and ".join(PAIRS))


def designs(pairs: list[Trial], drawn: list[Trial], sizing: VarianceComponents) -> str:
    """The designs section's Markdown: :data:`DESIGN_MODEL` at :data:`DESIGN_TEMPERATURE`
    under the reference study's design (``pairs``) and the instances run's (``drawn``, as run
    and its repeat 0), each with the MDD of a paired comparison at ``sizing``."""
    at = [t for t in pairs if t.temperature == DESIGN_TEMPERATURE]
    rows = [power.design_row("31 tasks, repeats (reference study v2)", at, DESIGN_MODEL, sizing),
            power.design_row("31 families × 5 drawn instances, 1 repeat", [
                t for t in drawn if t.repeat == 0], DESIGN_MODEL, sizing),
            power.design_row("31 families × 5 drawn instances, 2 repeats (as run)", drawn,
                             DESIGN_MODEL, sizing)]
    return power.render_designs(rows)


def replaced(doc: str, body: str, start: str = START, end: str = END) -> str:
    """``doc`` with the text between the markers ``start`` and ``end`` replaced by ``body``."""
    if doc.count(start) != 1 or doc.count(end) != 1 or doc.index(start) > doc.index(end):
        raise SystemExit(f"{DOC}: expected one '{start}' before one '{end}'")
    head, rest = doc.split(start)
    return f"{head}{start}\n\n{body}\n{end}{rest.split(end, 1)[1]}"


def regenerated(doc: str) -> str:
    """``doc`` with both generated sections made again (each export read once)."""
    pairs, drawn = _trials(PAIRS), _trials(INSTANCE_RUNS)
    pair = power.most_variable_pair(pairs)
    if pair is None:
        raise SystemExit(f"no pair of models in {sorted(PAIRS.values())} has enough cells")
    share = power.instance_share(drawn) if drawn else None
    body = designs(pairs, drawn, power.sizing(pair, share))
    return replaced(replaced(doc, section(pair, share)), body, DESIGNS_START, DESIGNS_END)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only compare, write nothing")
    args = parser.parse_args(argv)
    doc = DOC.read_text(encoding="utf-8")
    new = regenerated(doc)
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
