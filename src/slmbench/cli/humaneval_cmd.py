"""``slmbench humaneval --model SPEC`` (direct pass@1, resumable) and ``humaneval-report``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape

from slmbench.agents import humaneval
from slmbench.agents.humaneval_run import run_humaneval as run_humaneval_workflow
from slmbench.report.humaneval_page import write_humaneval_page

console = Console()


def run_humaneval(
    model: Annotated[str, typer.Option("--model", "-m", help="model spec, e.g. "
                                       "llamacpp:qwen2.5-coder-0.5b")],
    limit: Annotated[int | None, typer.Option(
        "--limit", "-n", min=1, help="only the first N problems")] = None,
    out: Annotated[Path | None, typer.Option(
        "--out", "-o", help="run directory (default runs/humaneval-NAME); re-run to resume")
    ] = None,
    max_tokens: Annotated[int, typer.Option(
        "--max-tokens", min=16, help="token limit per reply")] = humaneval.MAX_TOKENS,
) -> None:
    """HumanEval pass@1 (greedy, sandboxed tests) with a Wilson interval; resumes a run."""

    def start(stored: int, total: int, run_dir: Path) -> None:
        console.print(f"{stored} of {total} problems already in {run_dir}")

    def show(r: humaneval.ProblemResult) -> None:
        mark = "[green]pass[/]" if r.passed else f"[red]{r.category}[/]"
        console.print(f"{r.task_id:>14} {mark} {r.completion_tokens:>4} tok "
                      f"{r.latency_s:5.1f} s {escape(r.detail[:70])}", highlight=False)

    summary = run_humaneval_workflow(model, limit=limit, run_dir=out, max_tokens=max_tokens,
                                     on_start=start, on_result=show)
    est = summary.pass_at_1
    console.print(f"pass@1 {summary.passed}/{summary.n} = {est.formatted(unit='%')} "
                  "(Wilson 95% interval)")
    if summary.comparison:
        c = summary.comparison
        verdict = "inside" if c.inside else "OUTSIDE"
        console.print(f"published {100 * c.published:.1f}%: {verdict} our interval")


def report(
    run_dirs: Annotated[list[Path], typer.Argument(help="run directories of `slmbench humaneval`")],
    out: Annotated[Path, typer.Option("--out", "-o", help="Markdown file to write")] = Path(
        "docs/results/humaneval.md"),
) -> None:
    """Write the HumanEval results page from stored runs."""
    text = write_humaneval_page(run_dirs, out)
    console.print(f"wrote {out} ({len(text.splitlines())} lines)")


def register(app: typer.Typer) -> None:
    app.command("humaneval")(run_humaneval)
    app.command("humaneval-report")(report)
