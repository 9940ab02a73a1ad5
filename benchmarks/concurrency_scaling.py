"""P5: Part A trials per minute at 1, 2, 4 and 8 trials in flight on one ``llamaserver:``.

A ``llama-server`` (``slots`` parallel sequences, default 8) serves a small grid of
Part A trials (``--tasks``, ``--repeats``, one sampling temperature so every arm decodes
the same kind of text; response cache off). The grid runs once per arm through
``slmbench.agents.runner.execute`` with ``concurrency`` = 1, 2, 4, 8 trials in flight, each
arm on a server started for it (so no arm finds prompts an earlier arm left cached) and
into a fresh run directory. Reported per arm: wall time, trials/min,
its ratio to 1 in flight, completion tokens/s and the prompt tokens the server evaluated
(its ``/metrics`` counter: prompt-cache hits are not evaluated).

The arm ``8, unpinned`` repeats 8 in flight with the backend's slot pinning off (each
request goes to whichever slot the server picks, as through a plain ``openai:`` spec): the
difference is what pinning a trial to one slot's KV cache buys.

``--determinism`` instead runs the grid greedily (temperature 0) at 1 and at 8 in flight,
each on a fresh server, and reports the share of trials whose transcripts (every model
reply) are identical, with a Wilson interval.

    .venv/bin/python benchmarks/concurrency_scaling.py                 # P5
    .venv/bin/python benchmarks/concurrency_scaling.py --determinism
Run it under the model lock (`flock /tmp/slmbench-model.lock ...`).
"""

from __future__ import annotations

import argparse
import io
import json
import os
import platform
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from rich.console import Console
from runner_overhead import Shared  # the executor gets the running server, and keeps it

from slmbench.agents.runner.config import build_experiment
from slmbench.agents.runner.executor import execute
from slmbench.agents.runner.progress import PlainProgress
from slmbench.agents.store import RunStore
from slmbench.core.stats import wilson
from slmbench.models.base import load_model, parse_spec
from slmbench.models.llamaserver import LlamaServerModel

RESULTS = Path(__file__).parent / "results"
TASKS = ["IR-1", "IR-2", "SC-1", "SC-4", "MR-1", "DA-1", "DA-2", "MR-2"]


class Unpinned(LlamaServerModel):
    """The same backend without slot pinning (requests go wherever the server puts them)."""

    def _request_extras(self) -> dict[str, Any]:
        return {}


def run_arm(server: LlamaServerModel, grid: dict[str, Any], n: int, run_dir: str
            ) -> dict[str, Any]:
    """Run the grid with ``n`` trials in flight on ``server``; measure it."""
    exp = build_experiment({"models": [server.spec], **grid, "concurrency": {server.spec: n}})
    before = server.counters()
    start = time.perf_counter()
    summary = execute(exp, run_dir=run_dir, model_loader=lambda spec: Shared(server),
                      progress=PlainProgress(Console(file=io.StringIO())))
    wall = time.perf_counter() - start
    after = server.counters()
    m = summary.models[0]
    with RunStore(run_dir) as store:
        trials = list(store.trials())
    completion = sum(t.record["completion_tokens"] for t in trials)
    return {
        "in_flight": n, "trials": m.stored, "wall_s": wall,
        "trials_per_min": 60.0 * m.stored / wall,
        "completion_tokens_per_s": completion / wall,
        "model_calls": sum(len(t.record["steps"]) for t in trials),
        "prompt_tokens_sent": sum(t.record["prompt_tokens"] for t in trials),
        "prompt_tokens_evaluated": after.get("prompt_tokens_total", 0.0)
        - before.get("prompt_tokens_total", 0.0),
        "successes": m.successes, "backend_errors": m.backend_errors,
    }


def fresh_arm(spec: str, grid: dict[str, Any], n: int, *, pinned: bool = True
              ) -> dict[str, Any]:
    """One arm on a server started for it alone (no prompt cached by an earlier arm)."""
    server = (LlamaServerModel if pinned else Unpinned).from_spec(parse_spec(spec))
    try:
        with tempfile.TemporaryDirectory() as tmp:
            arm = run_arm(server, grid, n, tmp)
    finally:
        server.close()
    print(arm, flush=True)
    return arm


def scaling(spec: str, grid: dict[str, Any], unpinned: bool) -> dict[str, Any]:
    arms = [fresh_arm(spec, grid, n) for n in (1, 2, 4, 8)]
    if unpinned:
        arms.append({**fresh_arm(spec, grid, 8, pinned=False), "in_flight": "8, unpinned"})
    base = arms[0]["trials_per_min"]
    for arm in arms:
        arm["ratio_to_1"] = arm["trials_per_min"] / base
    return {"arms": arms}


def transcripts(run_dir: str) -> dict[tuple[Any, ...], list[str]]:
    with RunStore(run_dir) as store:
        return {t.key.as_tuple(): [s["raw_response"] for s in t.record["steps"]]
                for t in store.trials()}


def determinism(spec: str, grid: dict[str, Any]) -> dict[str, Any]:
    greedy = {**grid, "temperatures": [0.0]}
    runs = {}
    for n in (1, 8):
        server = load_model(spec)  # a fresh server: no cache left by the other arm
        assert isinstance(server, LlamaServerModel)
        try:
            tmp = tempfile.mkdtemp()
            runs[n] = run_arm(server, greedy, n, tmp)
            runs[n]["transcripts"] = transcripts(tmp)
        finally:
            server.close()
    one, eight = runs[1].pop("transcripts"), runs[8].pop("transcripts")
    same = sum(one[k] == eight.get(k) for k in one)
    ci = wilson(same, len(one))
    return {"arms": [runs[1], runs[8]], "trials_compared": len(one), "identical": same,
            "identical_share": same / len(one), "identical_ci95": [ci.low, ci.high]}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="qwen2.5-coder-0.5b")
    parser.add_argument("--slots", type=int, default=8)
    parser.add_argument("--tasks", default=",".join(TASKS))
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--max-steps", type=int, default=6)
    parser.add_argument("--determinism", action="store_true")
    parser.add_argument("--no-unpinned", action="store_true")
    args = parser.parse_args(argv)
    spec = f"llamaserver:{args.model}?slots={args.slots}&threads=2"
    grid = {"tasks": args.tasks.split(","), "variants": ["base"], "temperatures": [0.7],
            "repeats": args.repeats, "max_steps": args.max_steps, "cache": "off"}
    load_before = os.getloadavg()[0]
    started = time.perf_counter()
    body = determinism(spec, grid) if args.determinism else scaling(spec, grid,
                                                                    not args.no_unpinned)
    name = "determinism.json" if args.determinism else "concurrency_scaling.json"
    results = {
        "generated_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "python": sys.version.split()[0], "machine": platform.platform(),
        "cpus": os.cpu_count(), "load_average_1min": [load_before, os.getloadavg()[0]],
        "model": spec, "grid": grid, "total_s": time.perf_counter() - started,
        "method": (__doc__ or "").split("\n\n")[1 if not args.determinism else 3]
        .replace("\n", " "),
        **body,
    }
    RESULTS.mkdir(parents=True, exist_ok=True)
    out = RESULTS / name
    out.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    print(f"written to {out}")


if __name__ == "__main__":
    main()
