"""The options several Part B commands share, declared once (typer ``Annotated`` aliases).

A command names one as its parameter's type and gives its own default:
``seed: ItemSeed = 0``, ``out: OutFolder = Path("probe")``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from slmbench.microtasks.store import DEFAULT_NAME

Models = Annotated[list[str], typer.Option("--model", "-m", help="model spec (repeatable)")]
Tasks = Annotated[list[str] | None, typer.Option("--task", "-t", help="task (repeatable)")]
EvalLimit = Annotated[int | None, typer.Option("--limit", min=1, help="eval items per task")]
ItemSeed = Annotated[int, typer.Option("--seed", help="seed of the item sample")]
OutFolder = Annotated[Path, typer.Option("--out", help="output folder")]
ReadingsStore = Annotated[Path | None, typer.Option(
    "--store", help=f"readings store, reused and resumed (default: OUT/{DEFAULT_NAME})")]
