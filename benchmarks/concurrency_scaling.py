"""P5: Part A trials/min and Part B readings/min at 1, 2, 4 and 8 in flight on one ``llamaserver:``.

Part A: a ``llama-server`` (``slots`` parallel sequences, default 8) serves a grid of Part A
trials (``--tasks`` x ``--repeats``, greedy so every arm asks for the same work; response
cache off). The grid runs once per arm through ``slmbench.agents.runner.execute`` with
``concurrency`` = 1, 2, 4, 8 trials in flight, each arm on a server started for it (no arm
finds prompts an earlier arm left cached) and into a fresh run directory. Part B: the first
``--readings`` eval items of ``--partb-task`` (prompt p0) are read through
``slmbench.microtasks.session.Session`` with 1, 2, 4, 8 readings in flight, each arm on a
fresh server. The ceiling: on a fresh server, 1, 2, 4 and 8 bare completions of
``--ceiling-tokens`` greedy tokens each at once (different prompts, prompt cache off, no
runner), as decoded tokens/s over the wall time: what the server itself gives at each
concurrency on this machine. Reported per arm: wall time, trials (readings) per minute and
the ratio to 1 in flight, and where the time went: the mean number of model requests under
way (the sum of the client's request latencies over the wall time: the runner keeps N in
flight if it is near N), and the server's own counters from ``/metrics`` (prompt tokens it
evaluated, prompt cache hits excluded, tokens it decoded, and the seconds it spent on each).

Determinism: the Part A arms at 1 and at 8 in flight run the same greedy grid, so the share of
trials whose transcripts (every model reply) are identical between them, with a Wilson
interval, is written to ``benchmarks/results/determinism.json`` from the same run.

    .venv/bin/python benchmarks/concurrency_scaling.py --lock /tmp/slmbench-model.lock
``--lock`` takes that file's lock (``flock``) for each arm and releases it between arms.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import io
import json
import os
import platform
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
from rich.console import Console
from runner_overhead import Shared  # the executor gets the running server, and keeps it

from slmbench.agents.runner.config import build_experiment
from slmbench.agents.runner.executor import execute
from slmbench.agents.runner.progress import PlainProgress
from slmbench.agents.store import RunStore
from slmbench.core.stats import wilson
from slmbench.microtasks import tasks as registry
from slmbench.microtasks.session import Block, Session, select_items
from slmbench.models.factory import load_model
from slmbench.models.llamaserver import LlamaServerModel

RESULTS = Path(__file__).parent / "results"
TASKS = ["IR-1", "IR-2", "IR-3", "SC-1", "SC-2", "SC-4", "DA-1", "DA-2", "DA-3", "MR-1", "MR-2",
         "MR-3", "CM-1", "CM-2", "DM-1", "DM-2"]
ARMS = (1, 2, 4, 8)
COUNTERS = ("prompt_tokens_total", "prompt_seconds_total", "tokens_predicted_total",
            "tokens_predicted_seconds_total")


@contextlib.contextmanager
def model_lock(path: str | None) -> Iterator[None]:
    """Hold ``path``'s flock (the shared model lock) for the block; nothing if None."""
    if path is None:
        yield
        return
    with open(path, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def on_fresh_server(spec: str, lock: str | None,
                    work: Callable[[LlamaServerModel], dict[str, Any]]) -> dict[str, Any]:
    """``work`` on a server started for it alone, with its ``/metrics`` counters' growth."""
    with model_lock(lock):
        server = load_model(spec)
        assert isinstance(server, LlamaServerModel)
        try:
            before = server.counters()
            arm = work(server)
            after = server.counters()
        finally:
            server.close()
    arm["server"] = {k: after.get(k, 0.0) - before.get(k, 0.0) for k in COUNTERS}
    arm["load_average_1min"] = os.getloadavg()[0]
    print({k: v for k, v in arm.items() if k != "transcripts"}, flush=True)
    return arm


def part_a_arm(server: LlamaServerModel, grid: dict[str, Any], n: int) -> dict[str, Any]:
    """The grid with ``n`` trials in flight on ``server``, measured."""
    exp = build_experiment({"models": [server.spec], **grid, "concurrency": {server.spec: n}})
    with tempfile.TemporaryDirectory() as run_dir:
        start = time.perf_counter()
        summary = execute(exp, run_dir=run_dir, model_loader=lambda spec: Shared(server),
                          progress=PlainProgress(Console(file=io.StringIO())))
        wall = time.perf_counter() - start
        with RunStore(run_dir) as store:
            trials = list(store.trials())
    steps = [s for t in trials for s in t.record["steps"]]
    m = summary.models[0]
    return {
        "in_flight": n, "trials": m.stored, "wall_s": wall,
        "trials_per_min": 60.0 * m.stored / wall,
        "requests_under_way_mean": sum(s["latency_s"] for s in steps) / wall,
        "model_calls": len(steps),
        "completion_tokens": sum(s["completion_tokens"] for s in steps),
        "prompt_tokens_sent": sum(s["prompt_tokens"] for s in steps),
        "successes": m.successes, "backend_errors": m.backend_errors,
        "transcripts": {"|".join(map(str, t.key.as_tuple())): [s["raw_response"]
                                                               for s in t.record["steps"]]
                        for t in trials},
    }


class Timed(Shared):
    """The running server, summing the latency of every ``generate`` (from any thread)."""

    def __init__(self, inner: Any) -> None:
        super().__init__(inner)
        self.latency_s = 0.0
        self._lock = threading.Lock()

    def generate(self, messages: Any, **kw: Any) -> Any:
        out = self.inner.generate(messages, **kw)
        with self._lock:
            self.latency_s += out.latency_s
        return out


def part_b_arm(server: LlamaServerModel, task: str, items: list[Any], n: int) -> dict[str, Any]:
    """``items`` of ``task`` (prompt p0) read with ``n`` readings in flight on ``server``."""
    timed = Timed(server)
    session = Session(None, lambda spec: timed, in_flight=lambda spec: n)
    start = time.perf_counter()
    got = session.read(server.spec, [Block(task, "p0", items)])
    wall = time.perf_counter() - start
    readings = got.blocks[0].readings
    return {"in_flight": n, "readings": len(readings), "wall_s": wall,
            "readings_per_min": 60.0 * len(readings) / wall,
            "requests_under_way_mean": timed.latency_s / wall}


def ceiling_arm(server: LlamaServerModel, n: int, tokens: int) -> dict[str, Any]:
    """``n`` bare greedy completions of ``tokens`` tokens at once on ``server`` (no runner)."""
    base = server.base_url.removesuffix("/v1")
    done: list[dict[str, Any]] = []

    def one(i: int) -> None:
        body = {"prompt": f"Write a long story about robot number {i}.", "n_predict": tokens,
                "temperature": 0.0, "cache_prompt": False, "id_slot": i % server.slots,
                "ignore_eos": True}
        done.append(httpx.post(f"{base}/completion", json=body, timeout=600.0).json())

    workers = [threading.Thread(target=one, args=(i,)) for i in range(n)]
    start = time.perf_counter()
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    wall = time.perf_counter() - start
    decoded = sum(d["timings"]["predicted_n"] for d in done)
    return {"in_flight": n, "wall_s": wall, "tokens_decoded": decoded,
            "decode_tokens_per_s": decoded / wall}


def with_ratios(arms: list[dict[str, Any]], rate: str) -> list[dict[str, Any]]:
    base = arms[0][rate]
    return [{**arm, "ratio_to_1": arm[rate] / base} for arm in arms]


def determinism(one: dict[str, list[str]], eight: dict[str, list[str]]) -> dict[str, Any]:
    same = sum(one[k] == eight.get(k) for k in one)
    ci = wilson(same, len(one))
    return {"trials_compared": len(one), "identical": same,
            "identical_share": same / len(one), "identical_ci95": [ci.low, ci.high]}


def header(spec: str, started: float, load_before: float) -> dict[str, Any]:
    return {"generated_at": datetime.now(UTC).isoformat(timespec="seconds"),
            "python": sys.version.split()[0], "machine": platform.platform(),
            "cpus": os.cpu_count(), "load_average_1min": [load_before, os.getloadavg()[0]],
            "model": spec, "total_s": time.perf_counter() - started}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="qwen2.5-coder-0.5b")
    parser.add_argument("--slots", type=int, default=8)
    parser.add_argument("--tasks", default=",".join(TASKS))
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--max-steps", type=int, default=3)
    parser.add_argument("--partb-task", default="approval")
    parser.add_argument("--readings", type=int, default=48)
    parser.add_argument("--ceiling-tokens", type=int, default=128)
    parser.add_argument("--lock", default=None, help="flock this file for each arm")
    args = parser.parse_args(argv)
    spec = f"llamaserver:{args.model}?slots={args.slots}&threads=2"
    grid = {"tasks": args.tasks.split(","), "variants": ["base"], "temperatures": [0.0],
            "repeats": args.repeats, "max_steps": args.max_steps, "cache": "off"}
    items = select_items(args.partb_task, registry.get(args.partb_task).load_items(None),
                         args.readings)
    load_before, started = os.getloadavg()[0], time.perf_counter()
    ceiling = on_fresh_server(spec, args.lock, lambda s: {"arms": [
        ceiling_arm(s, n, args.ceiling_tokens) for n in ARMS]})
    part_b = [on_fresh_server(spec, args.lock,
                              lambda s, n=n: part_b_arm(s, args.partb_task, items, n))
              for n in ARMS]
    part_a = [on_fresh_server(spec, args.lock, lambda s, n=n: part_a_arm(s, grid, n))
              for n in ARMS]
    same = determinism(part_a[0]["transcripts"], part_a[-1]["transcripts"])
    for arm in part_a:
        del arm["transcripts"]
    method = (__doc__ or "").split("\n\n")
    RESULTS.mkdir(parents=True, exist_ok=True)
    out = RESULTS / "concurrency_scaling.json"
    out.write_text(json.dumps({
        **header(spec, started, load_before), "method": method[1].replace("\n", " "),
        "grid": grid, "partb": {"task": args.partb_task, "prompt": "p0", "items": len(items)},
        "part_a": with_ratios(part_a, "trials_per_min"),
        "part_b": with_ratios(part_b, "readings_per_min"),
        "ceiling": {"tokens_per_completion": args.ceiling_tokens,
                    "arms": with_ratios(ceiling["arms"], "decode_tokens_per_s")},
    }, indent=2) + "\n", encoding="utf-8")
    (RESULTS / "determinism.json").write_text(json.dumps({
        **header(spec, started, load_before), "method": method[2].replace("\n", " "),
        "grid": grid, "in_flight": [ARMS[0], ARMS[-1]], **same}, indent=2) + "\n",
        encoding="utf-8")
    print(f"written to {out} and {RESULTS / 'determinism.json'}")


if __name__ == "__main__":
    main()
