"""Harness validity (issue #15): the quick suite under the old and the new ReAct wording.

``run`` reruns what ``slmbench demo`` runs (the quick suite, greedy, one repeat)
with one prompt set into ``runs/harness-validity/<prompts>``, then exports its
stored trials and its store's record into ``docs/results/harness-validity/``:
``legacy`` is the wording before #15 (it told the model to start with 'Final Answer:'
after every result, errors included), ``neutral`` today's. The two runs plan the
same trials (same tasks, variants and seeds), so they pair trial by trial.
``page`` writes ``docs/results/harness-validity.md`` from those committed exports
alone: it needs no model and no ``runs/`` folder.
Each run loads a model: run it under the shared lock, one at a time.

    flock /tmp/slmbench-model.lock .venv/bin/python benchmarks/harness_validity.py run legacy
    flock /tmp/slmbench-model.lock .venv/bin/python benchmarks/harness_validity.py run neutral
    .venv/bin/python benchmarks/harness_validity.py page
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from slmbench.agents.harness_validity import export_arm
from slmbench.agents.runner.config import build_experiment
from slmbench.agents.runner.executor import execute
from slmbench.core.errors import SlmbenchError

MODEL = "llamacpp:qwen2.5-coder-0.5b"
RUNS = Path("runs/harness-validity")
EXPORTS = Path("docs/results/harness-validity")


def run(prompts: str, model: str) -> None:
    """The demo's grid (quick suite, T=0, one repeat) with prompt set ``prompts``; the run
    is exported beside the page when it finishes (a resumed run exports what it holds)."""
    exp = build_experiment({"name": f"harness-{prompts}", "models": [model], "suites": ["quick"],
                            "temperatures": [0.0], "repeats": 1, "prompts": prompts,
                            "out": RUNS / prompts})
    summary = execute(exp, run_dir=RUNS / prompts)
    export_arm(RUNS / prompts, prompts, EXPORTS)
    print(f"{summary.stored}/{summary.planned} trials stored in {summary.run_dir}, "
          f"exported into {EXPORTS}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", help="run the quick suite with one prompt set (loads the model)")
    r.add_argument("prompts", choices=["legacy", "neutral"])
    r.add_argument("--model", default=MODEL)
    p = sub.add_parser("page", help="write docs/results/harness-validity.md from the exports")
    p.add_argument("--exports", type=Path, default=EXPORTS)
    p.add_argument("--out", type=Path, default=Path("docs/results/harness-validity.md"))
    args = parser.parse_args()
    if args.command == "run":
        run(args.prompts, args.model)
    else:
        from slmbench.report.harness_validity_page import write_harness_page

        try:
            print(write_harness_page(args.exports, args.out))
        except SlmbenchError as err:  # one line and its hint, exit 2, as the CLI does
            print(f"error: {err}" + (f"\nhint: {err.hint}" if err.hint else ""),
                  file=sys.stderr)
            sys.exit(2)


if __name__ == "__main__":
    main()
