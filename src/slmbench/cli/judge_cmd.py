"""``slmbench refusal-judge``: validate the refusal judges on held-out human labels;
``slmbench rescore``: judge stored trials again by today's scorers (``agents/rescoring.py``)."""

from __future__ import annotations

from pathlib import Path

import typer

from slmbench.agents.rescoring import RESCORED_NAME, RULES, rescore_exports
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


def rescore(
    exports: list[Path] = typer.Argument(..., help="trials exports (*trials*.jsonl.gz), or "
                                         "folders holding them"),
) -> None:
    """Judge every stored trial again against the question it recorded; rewrite each export
    where a trial moved and list the moves in its folder's rescored.json."""
    for d in rescore_exports(exports):
        print(f"{d.path}: {d.tally.trials} trials, {len(d.moved)} moved, {d.tally.terminal} "
              f"without an answer, {d.tally.not_run} not run here (left as they are); "
              f"{d.wall_s:.1f} s" + ("; rewritten" if d.rewritten else ""))
        for m in d.moved:
            k = m.key
            print(f"  {k.model} {k.task} {k.variant} T {k.temperature:g} seed {k.seed} "
                  f"repeat {k.repeat} instance {k.instance}: {m.before} -> {m.after} "
                  f"(rule: {RULES[m.rule]}; {m.reason})")
    print(f"moves listed in each folder's {RESCORED_NAME}")


def register(app: typer.Typer) -> None:
    app.command("refusal-judge")(refusal_judge)
    app.command("rescore")(rescore)
