"""The options several commands share, declared once (typer ``Annotated`` aliases), and the
parsing of the values several commands take (``--params MODEL=B``).

A command names one as its parameter's type and gives its own default:
``seed: ItemSeed = 0``, ``out: OutFolder = Path("probe")``.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Annotated

import typer

from slmbench.agents.runner.retry import RetryPolicy
from slmbench.core.errors import ConfigError
from slmbench.microtasks.store import DEFAULT_NAME

Models = Annotated[list[str], typer.Option("--model", "-m", help="model spec (repeatable)")]
Tasks = Annotated[list[str] | None, typer.Option("--task", "-t", help="task (repeatable)")]
EvalLimit = Annotated[int | None, typer.Option("--limit", min=1, help="eval items per task")]
ItemSeed = Annotated[int, typer.Option("--seed", help="seed of the item sample")]
OutFolder = Annotated[Path, typer.Option("--out", help="output folder")]
ReadingsStore = Annotated[Path | None, typer.Option(
    "--store", help=f"readings store, reused and resumed (default: OUT/{DEFAULT_NAME})")]
Levels = Annotated[str | None, typer.Option(  # slmbench run and tasks validate
    "--levels", help="levels of the difficulty ladder, comma-separated: 1,2,3 (docs/tasks.md, "
    "\"Levels\"); run: each capability family also at these, beside its base instance")]
RetryAttempts = Annotated[int | None, typer.Option(  # slmbench run and resume
    "--retry-attempts", min=1, max=50, help="tries of a model call with a transient fault "
    "(first included; a dead or hung Ray replica's call too); then the trial is stored as "
    f"backend_error (default: the file's [retry] attempts, else {RetryPolicy().attempts})")]


def parse_params(items: Sequence[str]) -> dict[str, float]:
    """``["MODEL=B", ...]`` (billions of parameters) → ``{MODEL: B}``; ConfigError on bad input."""
    out: dict[str, float] = {}
    for item in items:
        model, sep, value = item.rpartition("=")
        try:
            size = float(value)
        except ValueError:
            size = -1.0
        if not sep or not model or not size > 0:
            raise ConfigError(f"--params {item!r} is not MODEL=B",
                              "give a model spec or name and its size in billions, "
                              "e.g. --params ollama:qwen3:4b=4")
        out[model] = size
    return out
