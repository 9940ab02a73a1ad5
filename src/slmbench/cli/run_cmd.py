"""``slmbench run [EXPERIMENT.toml] [--model SPEC ...]`` (flags override the file; the same
command again resumes) and ``slmbench resume RUN_DIR`` (from the experiment it saved)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from slmbench.agents.runner.config import (
    Experiment,
    build_experiment,
    experiment_of,
    overridden,
    parse_temperatures,
)
from slmbench.agents.runner.executor import execute
from slmbench.agents.runner.meta import saved_experiment
from slmbench.agents.runner.progress import make_progress
from slmbench.cli.console import wide_console
from slmbench.cli.options import Levels, RetryAttempts
from slmbench.cli.tables import print_summary


def register(app: typer.Typer) -> None:
    @app.command()
    def run(
        experiment: Annotated[Path | None, typer.Argument(
            help="experiment TOML file; flags given override its values")] = None,
        model: Annotated[list[str] | None, typer.Option(
            "--model", "-m", help="model spec, e.g. llamacpp:qwen2.5-coder-0.5b (repeatable)")
        ] = None,
        suite: Annotated[list[str] | None, typer.Option(
            "--suite", "-s", help="capability | reliability | quick | FILE.yaml (repeatable)")
        ] = None,
        task: Annotated[list[str] | None, typer.Option(
            "--task", "-t", help="task id, e.g. IR-1 (repeatable; filters the suites)")] = None,
        temperature: Annotated[list[str] | None, typer.Option(
            "--temperature", help="temperatures, comma-separated: 0.3,0.7,1.0")] = None,
        repeats: Annotated[int | None, typer.Option(help="runs of each trial cell")] = None,
        instances: Annotated[int | None, typer.Option(help="instances of each task: the worlds "
                             "0..N-1, seed 0 the curated task (default 1)")] = None,
        levels: Levels = None,
        drawn_only: Annotated[bool, typer.Option(
            "--drawn-only", help="the drawn worlds 1..N only: leave the curated 0 out")] = False,
        out: Annotated[Path | None, typer.Option(
            help="run directory (default runs/NAME or runs/run-<grid hash>)")] = None,
        name: Annotated[str | None, typer.Option(help="experiment name")] = None,
        scaffold: Annotated[str | None, typer.Option(help="react | native")] = None,
        max_steps: Annotated[int | None, typer.Option(help="agent step limit")] = None,
        concurrency: Annotated[int | None, typer.Option(
            help="parallel trials per server model (openai:, ollama:, llamaserver:)")] = None,
        deterministic: Annotated[bool, typer.Option(
            "--deterministic", help="one trial at a time per model (no cross-trial batching)")
        ] = False,
        wait_ready: Annotated[float | None, typer.Option(
            help="seconds to wait for a server that refuses connections (default: fail fast)")
        ] = None,
        cache: Annotated[str | None, typer.Option(
            help="response cache: auto (greedy only) | on | off")] = None,
        seed: Annotated[int | None, typer.Option(help="base seed of the grid")] = None,
        toolset: Annotated[str | None, typer.Option(
            help="task: the tools each task lists | all: the ten tools for every task")] = None,
        skip_code_tasks: Annotated[bool | None, typer.Option(
            "--skip-code-tasks", help="leave out tasks needing code_interpreter (no bubblewrap)")
        ] = None,
        refusal_judge: Annotated[str | None, typer.Option(
            "--refusal-judge", help="model spec that labels refusals instead of the rule "
            "classifier (validate it first: slmbench refusal-judge --model SPEC)")] = None,
        server_parallel_models: Annotated[int | None, typer.Option(
            help="server models run at once per server (default 1)")] = None,
        retry_errors: Annotated[bool, typer.Option(
            "--retry-errors", help="run the stored backend_error trials again")] = False,
        executor: Annotated[str | None, typer.Option(
            help="local (default) | ray: each model's replicas on Ray actors (docs/scale-out.md)")
        ] = None,
        ray_address: Annotated[str | None, typer.Option(
            "--ray-address", help="Ray cluster to use with --executor ray (default: RAY_ADDRESS, "
            "else a local Ray)")] = None,
        retry_attempts: RetryAttempts = None,
    ) -> None:
        """Run (or resume) an experiment: models x tasks x instances x variants x temperatures
        x repeats."""
        exp = experiment_of(experiment, {
            "models": model or None, "suites": suite or None, "tasks": task or None,
            "temperatures": parse_temperatures(temperature), "repeats": repeats, "out": out,
            "instances": instances, "include_curated": False if drawn_only else None,
            "levels": levels, "name": name, "scaffold": scaffold, "max_steps": max_steps,
            "default_concurrency": concurrency, "cache": cache, "seed": seed, "toolset": toolset,
            "skip_code_tasks": skip_code_tasks, "refusal_judge": refusal_judge,
            "deterministic": deterministic or None, "executor": executor,
            "server_parallel_models": server_parallel_models, "ray_address": ray_address,
            "retry": {"attempts": retry_attempts} if retry_attempts else None})
        _run(exp, exp.out_dir(), wait_ready_s=wait_ready, retry_errors=retry_errors)

    @app.command()
    def resume(
        run_dir: Annotated[Path, typer.Argument(help="a run directory")],
        executor: Annotated[str | None, typer.Option(
            help="local | ray (default: the one the run was started with)")] = None,
        ray_address: Annotated[str | None, typer.Option("--ray-address")] = None,
        retry_attempts: RetryAttempts = None,
    ) -> None:
        """Finish a run from the experiment saved in its store."""
        changes = {"executor": executor or None, "ray_address": ray_address or None,
                   "retry": {"attempts": retry_attempts} if retry_attempts else None}
        _run(build_experiment(overridden(saved_experiment(run_dir).model_dump(), changes)),
             run_dir)


def _run(exp: Experiment, run_dir: Path, wait_ready_s: float | None = None,
         retry_errors: bool = False) -> None:
    console = wide_console()
    summary = execute(exp, run_dir=run_dir, progress=make_progress(console),
                      wait_ready_s=wait_ready_s, retry_errors=retry_errors)
    print_summary(summary, console)
    if not summary.complete:
        raise typer.Exit(1)
