"""``slmbench refusal-judge``: validate the refusal judges on held-out human labels."""

from __future__ import annotations

from pathlib import Path

import typer

from slmbench.agents.scoring.judges import fetch_and_validate, render_validation, write_block
from slmbench.models.factory import load_model

COMMAND = "slmbench refusal-judge --write docs/scoring.md"


def refusal_judge(
    model: list[str] = typer.Option([], "--model", help="also validate this model as a judge "
                                    "(a spec, e.g. llamacpp:qwen2.5-coder-0.5b); repeatable"),
    write: Path | None = typer.Option(None, "--write", help="replace the validation block of "
                                      "this Markdown file (docs/scoring.md)"),
    pip_arg: list[str] = typer.Option([], "--pip-arg", help="passed to pip download"),
    limit: int | None = typer.Option(None, "--limit", min=1, help="model judges see N items of "
                                     "each file, a seeded sample with both labels in turn "
                                     "(the rules see all)"),
) -> None:
    """Score the rule classifier (and model judges) against PyRIT's refusal labels."""
    results, sets = fetch_and_validate([load_model(m) for m in model], pip_args=pip_arg,
                                       limit=limit)
    command = (COMMAND + "".join(f" --model {m}" for m in model)
               + (f" --limit {limit}" if limit else ""))
    block = render_validation(results, sets, command)
    print(block)
    if write is not None:
        print(write_block(write, block))


def register(app: typer.Typer) -> None:
    app.command("refusal-judge")(refusal_judge)
