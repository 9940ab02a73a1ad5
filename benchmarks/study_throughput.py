"""Study throughput: one small study end to end, in-process ``llamacpp:`` vs ``llamaserver:``.

The same study runs twice, once per backend on the same GGUF: Part A is the ``quick`` suite
(its base variants, one temperature, ``--repeats``, at most ``--max-steps`` steps a trial;
response cache off) and Part B reads ``--limit`` eval items of every micro-task under the
frozen prompt p0 (all of them: no sequential stopping). Each side goes through the study's
own code (``slmbench.study.run_part_a`` and ``run_part_b``) into a fresh folder, so its wall
time includes loading the model or starting the server. ``llamacpp:`` runs one trial and
one reading at a time; ``llamaserver:`` keeps its ``slots`` trials and readings in flight.
The ratio is the in-process wall time over the server's, both measured in this one run.
Part A is greedy by default, so both sides ask for nearly the same work (batching can still
change a greedy reply, so each side's decoded tokens are reported); at a sampling
temperature the two sides sample different trials, and their wall times compare different
work. Part B is not the same work on both sides: ``llamacpp:`` scores the candidates by
log-probability and generates, ``llamaserver:`` only generates (it gives no log-probs).

    .venv/bin/python benchmarks/study_throughput.py --lock /tmp/slmbench-model.lock
``--lock`` takes that file's lock for each side and releases it between them.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any

from concurrency_scaling import header, model_lock
from rich.console import Console

from slmbench.agents.store import RunStore
from slmbench.microtasks import tasks as registry
from slmbench.study import Study, run_part_a, run_part_b

RESULTS = Path(__file__).parent / "results" / "study_throughput.json"
FULL = {"max_steps": 12, "limit": 40, "repeats": 1}  # the grid: the runner's step cap


def reduced(args: argparse.Namespace) -> str | None:
    """How this grid is smaller than the issue's (quick suite, 40 readings a task), if it is."""
    cuts = [f"{k}={getattr(args, k)} (full: {v})" for k, v in FULL.items()
            if getattr(args, k) < v]
    return f"reduced grid: {', '.join(cuts)}" if cuts else None


def one_side(spec: str, args: argparse.Namespace) -> dict[str, Any]:
    """The study on ``spec`` in a fresh folder: wall times of Part A and Part B, and counts."""
    console = Console(file=io.StringIO())
    with tempfile.TemporaryDirectory() as out, model_lock(args.lock):
        study = Study.model_validate({
            "name": f"throughput {spec}", "out": out,
            "part_a": [{"models": [spec], "suites": ["quick"], "variants": ["base"],
                        "temperatures": [args.temperature], "repeats": args.repeats,
                        "max_steps": args.max_steps, "cache": "off"}],
            "part_b": [{"models": [spec], "tasks": list(registry.names()), "prompts": ["p0"],
                        "limit": args.limit}]})
        start = time.perf_counter()
        run_part_a(study, None, console)
        part_a_s = time.perf_counter() - start
        run_part_b(study, None, console)
        wall = time.perf_counter() - start
        with RunStore(study.part_a_dir(0)) as store:
            trials = list(store.trials())
        with study.readings() as readings:
            n_readings = readings.count()
    side = {"model": spec, "wall_s": wall, "part_a_s": part_a_s, "part_b_s": wall - part_a_s,
            "trials": len(trials), "model_calls": sum(len(t.record["steps"]) for t in trials),
            "completion_tokens": sum(t.record["completion_tokens"] for t in trials),
            "readings": n_readings, "load_average_1min": os.getloadavg()[0]}
    print(side, flush=True)
    return side


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="qwen2.5-coder-0.5b")
    parser.add_argument("--slots", type=int, default=8)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--temperature", type=float, default=0.0)
    parser.add_argument("--max-steps", type=int, default=FULL["max_steps"])
    parser.add_argument("--limit", type=int, default=40)
    parser.add_argument("--lock", default=None, help="flock this file for each side")
    args = parser.parse_args(argv)
    load_before, started = os.getloadavg()[0], time.perf_counter()
    in_process = one_side(f"llamacpp:{args.model}", args)
    server = one_side(f"llamaserver:{args.model}?slots={args.slots}&threads=2", args)
    grid = {"suite": "quick", "variants": ["base"], "temperature": args.temperature,
            "repeats": args.repeats, "max_steps": args.max_steps,
            "part_b": {"tasks": list(registry.names()), "prompts": ["p0"], "limit": args.limit}}
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps({
        **header(args.model, started, load_before),
        "method": (__doc__ or "").split("\n\n")[1].replace("\n", " "),
        "grid": grid, "reduced": reduced(args), "in_process": in_process, "server": server,
        "server_speedup": in_process["wall_s"] / server["wall_s"],
        "part_a_speedup": in_process["part_a_s"] / server["part_a_s"],
        "part_b_speedup": in_process["part_b_s"] / server["part_b_s"],
    }, indent=2) + "\n", encoding="utf-8")
    print(f"written to {RESULTS}")


if __name__ == "__main__":
    main()
