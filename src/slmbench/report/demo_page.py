"""The one page of ``slmbench demo`` holding both halves, generated from what it stored.

:func:`write_demo_page` reads the demo run's Part A analysis summary and trials
(``analysis_summary.json``, the run store) and its Part B slice (``eligibility.json`` and
``recommendation.json`` of :func:`slmbench.microtasks.demo.demo_slice`) and writes
``demo-report.md`` in the run directory: Part A's tables, the Part B matrix, what to deploy
per micro-task, and links to the HTML report (every trial) and the routing table.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

from slmbench.agents.ladder_rates import split
from slmbench.agents.loading import load_trials
from slmbench.agents.records import Trial
from slmbench.agents.summary import AnalysisSummary
from slmbench.agents.summary_file import SUMMARY_NAME, read_summary
from slmbench.microtasks.demo import MATRIX_FILE, RECOMMENDATION_FILE, ROUTES_FILE
from slmbench.microtasks.matrix import MatrixRun
from slmbench.microtasks.recommend import Recommendation
from slmbench.report.funnel_section import ANCHOR, breaks_line, funnel_section, stage_name
from slmbench.report.ladder_section import ANCHOR as LADDER_ANCHOR
from slmbench.report.ladder_section import held_line, ladder_section
from slmbench.report.parta import failures, part_a_section
from slmbench.report.partb import part_b_section, recommend_section
from slmbench.report.study_facts import pct, short
from slmbench.report.study_page import relative

__all__ = ["DEMO_PAGE", "NEXT_COMMAND", "in_short", "render_demo_page", "write_demo_page"]

DEMO_PAGE = "demo-report.md"
# A real comparison: the newest reference study's page (v3), rebuilt from its committed
# exports (no model time), with the packaged models side by side; `slmbench study ... --plan`
# sizes a rerun.
NEXT_COMMAND = ("slmbench import docs/results/reference-study-v3 --study "
                "experiments/reference-v3.toml && slmbench study experiments/reference-v3.toml "
                "--page-only")


def _could_do(trials: Sequence[Trial]) -> str:
    """What the model could do: capability tasks it solved at least once, of those run, and the
    commonest reason its trials failed (forensics), counted over every trial."""
    capability = [t for t in trials if t.suite == "capability"]
    tasks = {t.task_id for t in capability}
    solved = {t.task_id for t in capability if t.outcome == "success"}
    causes = Counter(t.forensics.cause for t in trials
                     if t.forensics is not None and t.forensics.cause)
    text = (f"**What the model could do:** {len(solved)} of {len(tasks)} capability tasks "
            f"solved in {len(trials)} trials")
    if causes:
        cause, k = causes.most_common(1)[0]
        text += f"; the commonest failure: {k} of {len(trials)} trials {cause.replace('_', ' ')}"
    return text + "."


def _breaks(summary: AnalysisSummary | None) -> list[str]:
    """The funnel first (issue #61): per configuration, the stage where it breaks and the
    share of its capability trials passing each stage (task-level 95% CI)."""
    if summary is None or not summary.funnel:
        return []
    out = []
    for f in summary.funnel:
        shares = ", ".join(f"{stage_name(r.stage)} {pct(r.marginal)}" for r in f.stages)
        who = f" ({short(f.model)})" if len(summary.funnel) > 1 else ""
        out.append(f"- **Where the model breaks{who}:** {breaks_line(f)}. Share of its "
                   f"capability trials passing each stage, % [95% CI]: {shares} "
                   f"([stage funnel](#{ANCHOR})).")
    for lad in summary.ladder:
        who = f" ({short(lad.model)})" if len(summary.ladder) > 1 else ""
        out.append(f"- **The hardest level it can do{who}:** {held_line(lad)} "
                   f"([difficulty ladder](#{LADDER_ANCHOR})).")
    return out


def in_short(*, trials: Sequence[Trial], rec: Recommendation,
             summary: AnalysisSummary | None = None) -> list[str]:
    """The lines a newcomer acts on: where the model breaks (the stage funnel of
    ``summary``), what it could do, what Part B routes where (under the rules the slice
    applied), and the one command to run next."""
    routes = "; ".join(f"{t.task} → {t.model if t.deploy == 'model' and t.model else t.deploy}"
                       + (f" ({t.baseline})" if t.deploy == "baseline" else "")
                       for t in rec.tasks)
    return [*_breaks(summary), f"- {_could_do(trials)}",
            f"- **What Part B routes where:** {routes or 'no micro-task was read'}.",
            f"- **Next, for a real comparison:** `{NEXT_COMMAND}` (the packaged models side by "
            "side, from the reference study's committed exports).", ""]


def render_demo_page(*, model: str, command: str, summary: AnalysisSummary,
                     trials: list[Trial], matrix: MatrixRun, rec: Recommendation,
                     html: str, routes: str) -> str:
    """The page as Markdown (paths relative to the page)."""
    lines = [f"# Demo: {model}", "",
             f"Generated by `{command}` from the stored trials and readings "
             f"({datetime.now(UTC).isoformat(timespec='seconds')}); do not edit by hand. "
             "Running the same command again resumes: it runs only missing trials and reads "
             "only missing items.", "",
             f"Interactive report with every Part A trial and its transcript: [{html}]({html}). "
             f"Routing table (loads into `Cascade`): [{routes}]({routes}).", "",
             "## In short", ""]
    base, _ = split(trials)  # a generated level's trials feed the ladder only
    lines += in_short(trials=base, rec=rec, summary=summary)
    lines += part_a_section(summary, base) + failures(summary, base)
    lines += funnel_section(summary)
    lines += ladder_section(summary)
    lines += part_b_section(matrix)
    lines += recommend_section(rec)
    return "\n".join(lines).rstrip() + "\n"


def write_demo_page(run_dir: Path, part_b: Path, *, model: str, command: str,
                    html: Path) -> Path:
    """Write ``run_dir/demo-report.md`` from the stores; returns its path."""
    page = run_dir / DEMO_PAGE
    text = render_demo_page(
        model=model, command=command, summary=read_summary(run_dir / SUMMARY_NAME),
        trials=load_trials(run_dir),
        matrix=MatrixRun.model_validate_json((part_b / MATRIX_FILE).read_text("utf-8")),
        rec=Recommendation.model_validate_json(
            (part_b / RECOMMENDATION_FILE).read_text("utf-8")),
        html=relative(html, run_dir), routes=relative(part_b / ROUTES_FILE, run_dir))
    tmp = page.with_suffix(".md.tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(page)
    return page
