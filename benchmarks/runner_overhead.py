"""Runner overhead per trial, against calling the evaluator on the same trials by hand.

For each model the same planned trials (same tasks, variants, temperature and
seeds) run twice with one loaded model: *bare* (a loop calling
``slmbench.agents.evaluator.run_trial`` directly, nothing stored) and *runner*
(``slmbench.agents.runner.execute`` into a fresh run directory: planning, retry and
cache wrappers, one store write per trial, stats, progress and reports).

    overhead per trial = ((runner wall - runner model time) - (bare wall - bare model time)) / n

Subtracting the time spent inside the model removes most of the noise of
model decoding, which the runner does not change. A second ``execute`` on the
finished run (nothing left to run) measures the fixed cost of a session
(planning, opening the store, rebuilding reports); the rest is the marginal
cost of a trial (mostly one fsync'd SQLite insert). The figures, the machine's
load average and the settings go to ``benchmarks/results/runner_overhead.json``.

    .venv/bin/python benchmarks/runner_overhead.py            # scripted + llamacpp:smollm2-135m
    .venv/bin/python benchmarks/runner_overhead.py --no-embedded
"""

from __future__ import annotations

import argparse
import io
import os
import platform
import sys
import tempfile
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict
from rich.console import Console

from slmbench.agents.evaluator import run_trial
from slmbench.agents.runner.config import Experiment, build_experiment
from slmbench.agents.runner.executor import execute
from slmbench.agents.runner.plan import build_plan, default_suite_loader, default_variants
from slmbench.agents.runner.progress import PlainProgress
from slmbench.agents.store import RunStore
from slmbench.models.base import Model
from slmbench.models.factory import load_model
from slmbench.models.records import Completion, Message

RESULTS = Path(__file__).parent / "results" / "runner_overhead.json"


class Side(BaseModel):
    model_config = ConfigDict(frozen=True)

    wall_s: float
    model_s: float  # sum of Completion.latency_s over the trials
    per_trial_ms: float


class Measurement(BaseModel):
    model_config = ConfigDict(frozen=True)

    model: str
    trials: int
    model_calls: int
    bare: Side
    runner: Side
    overhead_per_trial_ms: float  # outside the model: runner minus bare, all costs included
    session_fixed_s: float  # one session with nothing to run: plan, store, reports of n trials
    marginal_overhead_per_trial_ms: float  # overhead_per_trial minus the fixed cost's share
    overhead_share_of_trial: float  # overhead / bare per-trial wall time
    bare_call_ms: float  # mean time of one bare model.generate call in these trials


class Results(BaseModel):
    model_config = ConfigDict(frozen=True)

    generated_at: str
    python: str
    machine: str
    cpus: int
    load_average_1min: tuple[float, float]  # before, after
    method: str
    measurements: list[Measurement]


class Shared:
    """Hands the executor an already loaded model and keeps it open afterwards."""

    def __init__(self, inner: Model) -> None:
        self.inner = inner
        self.spec = inner.spec
        self.supports_logprobs = inner.supports_logprobs
        self.supports_native_tools = inner.supports_native_tools

    def generate(self, messages: Sequence[Message | dict[str, Any]], **kw: Any) -> Completion:
        return self.inner.generate(messages, **kw)

    def score(self, messages: Sequence[Message | dict[str, Any]], candidates: Sequence[str]
              ) -> Any:
        return self.inner.score(messages, candidates)

    def close(self) -> None:
        return None


def measure(exp: Experiment, model: Model) -> Measurement:
    plan = build_plan(exp, load_suite=default_suite_loader(), variants=default_variants())
    trials = plan.trials
    start = time.perf_counter()
    bare_model_s, calls = 0.0, 0
    for p in trials:
        trial = run_trial(model, plan.tasks[p.key.task], temperature=p.key.temperature,
                          seed=p.key.seed, repeat=p.key.repeat, variant=p.key.variant,
                          fault_plan=p.fault_plan, scaffold=exp.scaffold,
                          max_steps=exp.max_steps)
        bare_model_s += trial.latency_s
        calls += len(trial.steps)
    bare_wall = time.perf_counter() - start
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        summary = execute(exp, run_dir=tmp, model_loader=lambda spec: Shared(model),
                          progress=PlainProgress(Console(file=io.StringIO())))
        runner_wall = time.perf_counter() - start
        with RunStore(tmp) as store:
            runner_model_s = sum(t.record["latency_s"] for t in store.trials())
        # the same command again on the finished run: planning, store and reports, no trial
        start = time.perf_counter()
        execute(exp, run_dir=tmp, model_loader=lambda spec: Shared(model),
                progress=PlainProgress(Console(file=io.StringIO())))
        fixed = time.perf_counter() - start
    assert summary.run_now == len(trials)
    n = len(trials)
    overhead = ((runner_wall - runner_model_s) - (bare_wall - bare_model_s)) / n
    per_trial = ((runner_wall - fixed - runner_model_s) - (bare_wall - bare_model_s)) / n
    return Measurement(
        model=model.spec, trials=n, model_calls=calls,
        bare=Side(wall_s=bare_wall, model_s=bare_model_s, per_trial_ms=1000 * bare_wall / n),
        runner=Side(wall_s=runner_wall, model_s=runner_model_s,
                    per_trial_ms=1000 * runner_wall / n),
        overhead_per_trial_ms=1000 * overhead,
        session_fixed_s=fixed,
        marginal_overhead_per_trial_ms=1000 * per_trial,
        overhead_share_of_trial=overhead / (bare_wall / n),
        bare_call_ms=1000 * bare_model_s / max(1, calls),
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-embedded", action="store_true", help="skip llamacpp:smollm2-135m")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    load_before = os.getloadavg()[0]
    runs: list[tuple[str, dict[str, Any]]] = [
        # 31 capability tasks x 2 temperatures x 2 repeats; sampling so the cache stays out
        ("scripted:echo", {"suites": ["capability"], "temperatures": [0.7, 1.0], "repeats": 2}),
    ]
    if not args.no_embedded:
        # 2 tasks x 2 repeats, at most 2 steps (each up to 384 tokens). One llama.cpp thread:
        # two threads spin on each other when other processes share the 2 cores.
        runs.append(("llamacpp:smollm2-135m?threads=1",
                     {"tasks": ["IR-1", "DA-1"], "temperatures": [0.7], "repeats": 2,
                      "max_steps": 2}))
    measurements = []
    for spec, grid in runs:
        model = load_model(spec)
        try:
            exp = build_experiment({"models": [spec], **grid})
            m = measure(exp, model)
        finally:
            model.close()
        print(f"{m.model}: {m.trials} trials, bare {m.bare.per_trial_ms:.1f} ms/trial, "
              f"runner {m.runner.per_trial_ms:.1f} ms/trial, overhead "
              f"{m.overhead_per_trial_ms:.2f} ms/trial ({100 * m.overhead_share_of_trial:.1f}%), "
              f"of which fixed per session {m.session_fixed_s:.2f} s, marginal "
              f"{m.marginal_overhead_per_trial_ms:.2f} ms/trial")
        measurements.append(m)
    results = Results(
        generated_at=datetime.now(UTC).isoformat(timespec="seconds"),
        python=sys.version.split()[0], machine=platform.platform(), cpus=os.cpu_count() or 0,
        load_average_1min=(load_before, os.getloadavg()[0]),
        method=(__doc__ or "").split("\n\n")[1].replace("\n", " "),
        measurements=measurements,
    )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(results.model_dump_json(indent=2) + "\n", encoding="utf-8")
    print(f"written to {args.out}")


if __name__ == "__main__":
    main()
