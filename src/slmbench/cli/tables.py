"""The rich tables the Part A and study commands print: a run's summary and a study's plan
and power."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console
from rich.table import Table

from slmbench.agents.runner.executor import RunSummary
from slmbench.core.stats import MDD_ALPHA, MDD_POWER
from slmbench.study.plan import BlockPower, PlanRow


def print_summary(summary: RunSummary, console: Console) -> None:
    """The end-of-run table: trials, success, backend errors, retries, throughput."""
    table = Table(title=f"run {summary.run_dir}", title_justify="left")
    for col in ("model", "trials", "run now", "success", "backend errors", "retries",
                "cache hits", "trials/min", "tokens/s"):
        table.add_column(col, justify="left" if col == "model" else "right")
    for m in summary.models:
        rate = f"{m.successes}/{m.stored} ({100 * m.successes / m.stored:.0f}%)" if m.stored \
            else "-"
        table.add_row(m.model, f"{m.stored}/{m.planned}", str(m.run_now), rate,
                      str(m.backend_errors), str(m.retries), str(m.cache_hits),
                      f"{m.trials_per_min:.1f}", f"{m.tokens_per_s:.1f}")
    console.print(table)
    for m in summary.models:
        if m.stopped:
            console.print(f"stopped {m.model} early: {m.stopped}", highlight=False)
    state = "complete" if summary.complete else "incomplete"
    console.print(f"{state}: {summary.stored}/{summary.planned} trials stored "
                  f"({summary.run_now} run now, {summary.wall_s:.1f} s); "
                  f"reports in {Path(summary.run_dir) / 'reports'}", highlight=False)


def print_plan(rows: list[PlanRow], console: Console) -> None:
    """One line per block and model, then the model hours per block and in all."""
    table = Table("block", "model", "planned", "stored", "to run", "s each (n measured)",
                  "hours", box=None)
    for r in rows:
        rate = "–" if r.seconds_per is None else (
            f"{r.seconds_per:.1f} ({r.measured_n}" + (f", on {r.rate_from})" if r.rate_from
                                                      else ")"))
        table.add_row(r.block, r.model, f"{'≤ ' if r.at_most else ''}{r.planned} {r.unit}s",
                      str(r.stored), f"{'≤ ' if r.at_most else ''}{r.remaining}", rate,
                      "–" if r.hours is None else f"{r.hours:.2f}")
    console.print(table)
    blocks = dict.fromkeys(r.block for r in rows)
    for b in blocks:
        mine = [r for r in rows if r.block == b]
        known = sum(r.hours or 0.0 for r in mine)
        unknown = [r.model for r in mine if r.hours is None and r.remaining]
        console.print(f"{b}: {known:.1f} model hours to run"
                      + (f" (+ {', '.join(unknown)}: no rate measured)" if unknown else ""),
                      highlight=False)
    total = sum(r.hours or 0.0 for r in rows)
    missing = sum(r.hours is None and r.remaining > 0 for r in rows)
    console.print(f"in all: {total:.1f} model hours at the measured rates"
                  + (f"; {missing} block model(s) without a rate not counted" if missing else "")
                  + ("; sequential Part B blocks are upper bounds" if any(r.at_most for r in rows)
                     else ""), highlight=False)


def _mdd(points: float | None) -> str:
    if points is None:
        return "–"
    return f"{points:.1f}" if points <= 100 else "over 100: no difference is detectable"


def print_power(rows: list[BlockPower], console: Console) -> None:
    """Each Part A block's design and the smallest difference between its models it detects."""
    if not rows:
        return
    table = Table("block", "models", "compares", "families", "instances",
                  "trials an instance", "MDD (points)", box=None)
    for r in rows:
        table.add_row(r.block, str(r.models), r.compares, str(r.families), str(r.instances),
                      str(r.trials), r.note or _mdd(r.mdd))
    console.print(table)
    sources = {r.compares: r.source for r in rows if r.mdd is not None}
    console.print("MDD: the smallest true difference in capability success (paired by family; "
                  f"two-sided, α {MDD_ALPHA:g}, power {MDD_POWER:g}) at the variance components "
                  "of " + "; and of ".join(f"{src} ({what})" for what, src in sources.items())
                  + " (docs/tasks.md, 'Power')", highlight=False)
