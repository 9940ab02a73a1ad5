"""Part A trials per minute on the Ray executor at 1 and 2 replicas of one model (issue #20).

The model is ``scripted:echo?delay=D`` (every call sleeps D seconds, default 0.5 s: a stand-in
for a model whose calls take a fixed time, with no model to load), run by the real evaluator
over the ``quick`` suite without its code tasks, at ``--repeats`` repeats, into a fresh run
directory per arm, on a local Ray instance of 2 CPUs started once (each replica reserves one).
An arm is the same grid through ``slmbench.agents.runner.execute`` with ``executor = "ray"``
and ``replicas`` = 1 or 2. Two rates per arm: ``trials_per_min`` over the arm's whole wall
time (the replicas' start and the run store's opening included), and
``steady_trials_per_min`` over the span of the stored trials (first to last ``created_at``:
the replicas are up). Goal: 2 replicas >= 1.8x the trials/min of 1.

    .venv/bin/python benchmarks/ray_scaling.py       # writes benchmarks/results/ray_scaling.json

No real model is loaded, so it needs no model lock; on a shared machine the load average is
recorded beside the figures.
"""

from __future__ import annotations

import argparse
import io
import os
import platform
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from pydantic import BaseModel
from rich.console import Console

from slmbench.agents.runner.config import build_experiment
from slmbench.agents.runner.executor import execute
from slmbench.agents.runner.progress import PlainProgress
from slmbench.agents.store import RunStore

RESULTS = Path(__file__).parent / "results"


class Arm(BaseModel):
    replicas: int
    trials: int
    model_calls: int
    wall_s: float
    trials_per_min: float
    ratio_to_1: float
    steady_trials_per_min: float
    steady_ratio_to_1: float


class Results(BaseModel):
    generated_at: str
    python: str
    machine: str
    cpus: int
    load_average_1min: float
    method: str
    delay_s: float
    arms: list[Arm]


def run_arm(replicas: int, delay: float, repeats: int) -> tuple[int, int, float, float]:
    """(trials, model calls, wall seconds, steady trials/min) at ``replicas`` replicas."""
    spec = f"scripted:echo?delay={delay}"
    exp = build_experiment({
        "models": [spec], "suites": ["quick"], "skip_code_tasks": True, "temperatures": [0.7],
        "repeats": repeats, "cache": "off", "executor": "ray",
        "ray_models": {spec: {"replicas": replicas}}})
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        summary = execute(exp, run_dir=Path(tmp) / "run",
                          progress=PlainProgress(Console(file=io.StringIO())))
        wall = time.perf_counter() - start
        with RunStore(Path(tmp) / "run") as store:
            calls = store.get_meta("runner_stats")[spec]["model_calls"]
            times = sorted(t.created_at for t in store.trials())
    assert summary.complete, summary
    steady = (len(times) - 1) * 60.0 / (times[-1] - times[0])
    return summary.run_now, calls, wall, steady


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--delay", type=float, default=0.5, help="seconds per model call")
    parser.add_argument("--repeats", type=int, default=4)
    parser.add_argument("--out", type=Path, default=RESULTS / "ray_scaling.json")
    args = parser.parse_args(argv)
    import ray

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        measured = {n: run_arm(n, args.delay, args.repeats) for n in (1, 2)}
    finally:
        ray.shutdown()
    base, steady_base = measured[1][0] * 60.0 / measured[1][2], measured[1][3]
    arms = []
    for n, (trials, calls, wall, steady) in measured.items():
        rate = trials * 60.0 / wall
        arms.append(Arm(replicas=n, trials=trials, model_calls=calls, wall_s=round(wall, 2),
                        trials_per_min=round(rate, 1), ratio_to_1=round(rate / base, 3),
                        steady_trials_per_min=round(steady, 1),
                        steady_ratio_to_1=round(steady / steady_base, 3)))
    results = Results(
        generated_at=datetime.now(UTC).isoformat(timespec="seconds"),
        python=sys.version.split()[0], machine=platform.platform(), cpus=os.cpu_count() or 0,
        load_average_1min=round(os.getloadavg()[0], 2),
        method=(f"scripted:echo?delay={args.delay} (each call sleeps), the quick suite without "
                f"code tasks, T=0.7, {args.repeats} repeats, cache off; executor ray on a local "
                "Ray of 2 CPUs; trials_per_min: from execute() start to end, replicas' start "
                "included; steady: first to last stored trial"),
        delay_s=args.delay, arms=arms)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(results.model_dump_json(indent=2) + "\n", encoding="utf-8")
    for arm in arms:
        print(f"{arm.replicas} replica(s): {arm.trials} trials in {arm.wall_s} s = "
              f"{arm.trials_per_min} trials/min ({arm.ratio_to_1}x); steady "
              f"{arm.steady_trials_per_min} ({arm.steady_ratio_to_1}x)")


if __name__ == "__main__":
    main()
