"""``slmbench analyze RUN``: write ``analysis_summary.json`` and print the headline table."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.console import Console
from rich.table import Table

from slmbench.agents.analysis import analyze_run
from slmbench.agents.summary import HOLDS_AT, AnalysisSummary
from slmbench.agents.summary_file import SUMMARY_NAME
from slmbench.cli.options import parse_params
from slmbench.report.html import fmt


def headline(summary: AnalysisSummary) -> Table:
    """Per model: size, accuracy (task-level) with its design, format failures, composite,
    and the sign test across tasks against the best model (Holm)."""
    table = Table(title=f"{summary.n_trials} trials · accuracy over {summary.capability_scope}")
    for col in ("model", "params", "accuracy (95% CI)", "design", "format failures",
                "composite", "p vs best (Holm)"):
        table.add_column(col, justify="left" if col == "model" else "right")
    outcomes = {o.model: o for o in summary.outcomes}
    dims = {d.model: d for d in summary.dimensions}
    best = summary.best()
    for acc in sorted(summary.accuracy, key=lambda a: -(a.accuracy.estimate or 0.0)):
        comp = dims[acc.model].composite if acc.model in dims else None
        pair = summary.pair(best.model, acc.model) if best else None
        table.add_row(
            acc.model, f"{acc.params_b:g}B" if acc.params_b else "?", fmt(acc.accuracy),
            acc.accuracy.design(), fmt(outcomes[acc.model].format_failure),
            fmt(comp, percent=False),
            "best" if best and acc.model == best.model else
            (f"{pair.p_holm:.3g}" if pair else "–"),
        )
    return table


def funnel_table(summary: AnalysisSummary) -> Table:
    """Per configuration and stage: trials that passed it of those where it applies, its
    marginal rate (task-level), its rate among trials that passed every stage before it, and
    why it does not apply to the rest."""
    table = Table(title="Stage funnel · capability trials (docs/reliability.md)")
    for col in ("model", "stage", "passed", "marginal (95% CI)", "given previous (95% CI)",
                "not applicable"):
        table.add_column(col, justify="left" if col in ("model", "stage", "not applicable")
                         else "right")
    for f in summary.funnel:
        for i, s in enumerate(f.stages):
            table.add_row(f.model if i == 0 else "", s.stage.replace("_", " "),
                          f"{s.passed}/{s.trials}", fmt(s.marginal), fmt(s.given_previous),
                          "; ".join(f"{k}: {why}" for why, k in s.not_applicable.items()))
            if s.stage == "acts":
                table.add_row("", "acts (strict)", "", fmt(f.strict_acts), "", "")
        table.add_section()
    return table


def ladder_table(summary: AnalysisSummary) -> Table:
    """Per configuration that ran a generated level and per level: successes of trials, the
    families behind it, its success rate (task-level), whether it is held; and the highest
    level held."""
    table = Table(title="Difficulty ladder · capability trials (base instances at their "
                        f"level; held: success lower bound ≥ {HOLDS_AT:.0%})")
    for col in ("model", "level", "passed", "tasks", "success (95% CI)", "design", "held"):
        table.add_column(col, justify="left" if col in ("model", "held") else "right")
    for lad in summary.ladder:
        for i, r in enumerate(lad.levels):
            table.add_row(lad.model if i == 0 else "", str(r.level),
                          f"{r.successes}/{r.trials}", str(r.tasks), fmt(r.rate),
                          r.rate.design(), "yes" if r.holds else "no")
        table.add_row("", "highest held", "", "", "", "",
                      "none" if lad.held is None else f"level {lad.held}")
        table.add_section()
    return table


def analyze(
    run: Path = typer.Argument(..., help="run directory (holds run.sqlite)"),
    params: list[str] = typer.Option(
        [], "--params", help="model size as MODEL=B (billions), repeatable; wins over the "
        "registry"),
) -> None:
    """Compute the run's statistics and write RUN/analysis_summary.json."""
    summary = analyze_run(run, params=parse_params(params))
    console = Console()
    console.print(headline(summary))
    if summary.funnel:
        console.print(funnel_table(summary))
    if summary.ladder:
        console.print(ladder_table(summary))
    for note in summary.notes + [s.note for s in summary.size if s.note]:
        console.print(f"[yellow]note:[/] {note}", highlight=False, soft_wrap=True)
    print(run / SUMMARY_NAME)


def register(app: typer.Typer) -> None:
    """Register ``analyze`` and, from the same family, ``report`` (cli/report_cmd.py)."""
    from slmbench.cli import report_cmd

    app.command("analyze")(analyze)
    report_cmd.register(app)
