"""Cross-trial prefix reuse: how many prompt tokens a shared system prompt spares, per backend.

Under ``--toolset all`` every trial's system prompt is the same (all ten tools described), so
a backend that keeps the KV cache of an earlier prompt evaluates it once. The same greedy
grid (``--tasks``, one repeat, at most ``--max-steps`` steps, response cache off) runs at one
trial in flight on in-process ``llamacpp:`` (which keeps the KV cache of the previous call's
prompt chunks: ``last_reused_tokens`` after each call) and on ``llamaserver:`` with one slot
(whose prompt cache is read from the prompt tokens ``/metrics`` says it evaluated). Reported
per backend: prompt tokens sent, tokens taken from the cache, their share, the wall time,
and for the server the seconds it spent evaluating prompts (so the seconds the reused share
would have cost at the same rate).

    .venv/bin/python benchmarks/prefix_reuse.py --lock /tmp/slmbench-model.lock
"""

from __future__ import annotations

import argparse
import io
import json
import os
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from concurrency_scaling import header, model_lock
from rich.console import Console
from runner_overhead import Shared

from slmbench.agents.runner.config import build_experiment
from slmbench.agents.runner.executor import execute
from slmbench.agents.runner.progress import PlainProgress
from slmbench.agents.store import RunStore
from slmbench.models.factory import load_model
from slmbench.models.llamaserver import LlamaServerModel
from slmbench.models.records import Completion, Message

RESULTS = Path(__file__).parent / "results" / "prefix_reuse.json"
TASKS = ["IR-1", "SC-1", "DA-1", "MR-1", "CM-1", "DM-1"]


class CountingReuse(Shared):
    """The loaded model, summing the prompt tokens each call took from its KV cache."""

    def __init__(self, inner: Any) -> None:
        super().__init__(inner)
        self.reused = 0

    def generate(self, messages: Sequence[Message | dict[str, Any]], **kw: Any) -> Completion:
        out = self.inner.generate(messages, **kw)
        self.reused += int(getattr(self.inner, "last_reused_tokens", 0))
        return out


def one_backend(spec: str, grid: dict[str, Any], lock: str | None) -> dict[str, Any]:
    with model_lock(lock), tempfile.TemporaryDirectory() as run_dir:
        model = load_model(spec)
        counting = CountingReuse(model)
        server = model if isinstance(model, LlamaServerModel) else None
        try:
            before = server.counters() if server else {}
            exp = build_experiment({"models": [spec], **grid, "concurrency": {spec: 1}})
            start = time.perf_counter()
            execute(exp, run_dir=run_dir, model_loader=lambda s: counting,
                    progress=PlainProgress(Console(file=io.StringIO())))
            wall = time.perf_counter() - start
            after = server.counters() if server else {}
        finally:
            model.close()
        with RunStore(run_dir) as store:
            steps = [s for t in store.trials() for s in t.record["steps"]]
    sent = sum(s["prompt_tokens"] for s in steps)
    row: dict[str, Any] = {"model": spec, "model_calls": len(steps), "wall_s": wall,
                           "prompt_tokens_sent": sent}
    if server is not None:
        evaluated = after["prompt_tokens_total"] - before.get("prompt_tokens_total", 0.0)
        seconds = after["prompt_seconds_total"] - before.get("prompt_seconds_total", 0.0)
        row.update(prompt_tokens_evaluated=evaluated, prompt_seconds=seconds,
                   reused_tokens=sent - evaluated,
                   reused_would_have_cost_s=(sent - evaluated) * seconds / evaluated)
    else:
        row.update(reused_tokens=counting.reused,
                   prompt_tokens_evaluated=sent - counting.reused)
    row["reused_share"] = row["reused_tokens"] / sent if sent else 0.0
    print(row, flush=True)
    return row


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="qwen2.5-coder-0.5b")
    parser.add_argument("--tasks", default=",".join(TASKS))
    parser.add_argument("--max-steps", type=int, default=2)
    parser.add_argument("--lock", default=None, help="flock this file for each backend")
    args = parser.parse_args(argv)
    grid = {"tasks": args.tasks.split(","), "variants": ["base"], "temperatures": [0.0],
            "repeats": 1, "max_steps": args.max_steps, "cache": "off", "toolset": "all"}
    load_before, started = os.getloadavg()[0], time.perf_counter()
    rows = [one_backend(f"llamacpp:{args.model}?n_ctx=8192", grid, args.lock),
            one_backend(f"llamaserver:{args.model}?slots=1&threads=2&n_ctx=8192", grid,
                        args.lock)]
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps({
        **header(args.model, started, load_before),
        "method": (__doc__ or "").split("\n\n")[1].replace("\n", " "),
        "grid": grid, "backends": rows,
    }, indent=2) + "\n", encoding="utf-8")
    print(f"written to {RESULTS}")


if __name__ == "__main__":
    main()
