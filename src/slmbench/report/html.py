"""The self-contained HTML report: one file, figures as base64 PNG, no external asset.

The page holds the headline table (with intervals), the reliability and
pairwise tables, the figures, the item audit and a browser of every trial with
its transcript, filterable by model, task and outcome. Trials travel as JSON
inside a ``<script type="application/json">`` block and are rendered with
``textContent`` only, so nothing a model wrote can run as markup or script.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

from jinja2 import Environment, FunctionLoader, select_autoescape
from markupsafe import Markup, escape

from slmbench.agents.dimensions import DIMENSION_INTERVALS
from slmbench.agents.funnel import StageReach, reach_all
from slmbench.agents.loading import shipped_tasks
from slmbench.agents.records import Trial
from slmbench.agents.summary import AnalysisSummary
from slmbench.core.stats import Estimate
from slmbench.report.figures import empty_figures
from slmbench.report.latex import DIMENSIONS

MAX_CONTENT = 6000  # characters of one message kept in the report
CAPTIONS = {
    "accuracy_vs_params": "Capability accuracy against model size (task-level 95% CI).",
    "accuracy_vs_temperature": "Accuracy at each sampling temperature (task-level 95% CI).",
    "capability_vs_reliability": "Capability accuracy against composite reliability.",
    "composite_bars": "Composite reliability (mean of four measured dimensions; none when one "
                      "is not measurable), 95% CI simulated from each dimension's confidence "
                      "distribution at its effective n.",
    "composite_vs_params": "Composite reliability against model size.",
    "cost_vs_reliability": "Mean model time per trial against composite reliability.",
    "failure_causes": "Why trials failed, per model: each failing trial's cause (forensics); "
                      "backend and environment errors are not counted.",
    "fault_heatmap": "Success after an injected tool fault, per fault kind.",
    "latency_vs_accuracy": "Mean model time per trial against accuracy.",
    "level_ladder": "The difficulty ladder: success at each level per configuration that ran "
                    "a generated level (task-level 95% CI); a level is held where its lower "
                    "bound reaches the dashed line.",
    "per_group_accuracy": "Accuracy per task group (task-level 95% CI).",
    "perturbation_heatmap": "Success of robustness tasks per instruction variant.",
    "reliability_bars": "The four reliability dimensions per model (task-level 95% CI; n/m: "
                        "not measurable).",
    "reliability_dimensions": "Each reliability dimension across models.",
    "radar": "Reliability profile of each model measured on every plotted dimension.",
    "safety_breakdown": "How safety trials ended; success with its task-level CI.",
    "stage_funnel": "The stage funnel: the share of capability trials that passed each stage "
                    "(acts, right tool, valid call, evidence, answers, correct), and of those "
                    "that passed every stage before it (task-level 95% CI).",
    "temperature_sensitivity": "Highest − lowest temperature, paired by task, with its 95% CI "
                               "and the sign test's p (Holm).",
}


def _template_source(name: str) -> str:
    return (resources.files("slmbench.report") / "templates" / name).read_text(encoding="utf-8")


def fmt(est: Estimate | None, percent: bool = True) -> str:
    """``62.0% [48.1, 74.2]``; ``–`` when undefined."""
    return "–" if est is None else est.formatted(percent=percent, unit="%" if percent else "")


def ci_cell(est: Estimate | None, percent: bool = True) -> Markup:
    """A table cell's estimate over its interval on a second line (``62.0%`` / ``[48.1, 74.2]``),
    so a table of several models fits the page width."""
    text = fmt(est, percent)
    value, sep, interval = text.partition(" [")
    if not sep:
        return Markup(escape(text))
    return Markup(f'{escape(value)}<br><span class="ci">[{escape(interval)}</span>')


def _clip(text: str | None) -> str:
    text = text or ""
    if len(text) <= MAX_CONTENT:
        return text
    return text[:MAX_CONTENT] + f"\n… [{len(text) - MAX_CONTENT} more characters not shown]"


def stage_text(found: StageReach | None) -> str:
    """The stage a trial reached and each stage's verdict, for its transcript view
    (``–``: not applicable, with why)."""
    if found is None:
        return "stage: not judged (its task is not in the shipped suites)"
    marks = [f"{s.replace('_', ' ')} " + ("✓" if ok else "✗" if ok is False
                                          else f"– ({found.not_applicable[s]})")
             for s, ok in found.stages.items()]
    reached = (found.reached or "none (the first reply was no action)").replace("_", " ")
    return f"stage reached: {reached} · " + " · ".join(marks) + \
        f" · strict parse of the first reply {'✓' if found.strict_acts else '✗'}"


def trial_row(t: Trial, found: StageReach | None = None) -> dict[str, Any]:
    """What the trial browser shows of one trial (``found``: its stages, agents.funnel)."""
    return {
        "model": t.model, "task": t.task_id, "variant": t.variant,
        **({"level": t.level} if t.level != "base" else {}),  # a generated level of the ladder
        "temperature": t.temperature, "repeat": t.repeat, "seed": t.seed,
        "outcome": t.outcome.value, "answer": _clip(t.final_answer),
        "stage": stage_text(found),
        "reason": (t.score.reason if t.score else "") or t.error or "",
        "error": t.error or "",
        "fault": t.fault_plan.fault if t.fault_plan else "",
        "faults_injected": t.faults_injected, "latency_s": round(t.latency_s, 3),
        "steps": [{"i": s.index, "kind": s.action.kind, "name": s.action.name or "",
                   "format": s.action.format or "", "error": s.action.error or "",
                   "fault": s.injected_fault or ""} for s in t.steps],
        "messages": [{"role": m.role, "content": _clip(m.content)} for m in t.messages],
    }


def _script_json(data: Any) -> str:
    """JSON safe inside a <script> element: no '<', '>' or '&' survives literally."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def render_html(summary: AnalysisSummary, trials: Sequence[Trial],
                figures: Mapping[str, Path]) -> str:
    """The report page as one HTML string; ``figures`` maps a figure name to its PNG. A
    figure with no data to show for this run (:func:`~slmbench.report.figures.empty_figures`)
    is left out and named with why; the stage funnel comes first, the ladder (where drawn)
    next."""
    env = Environment(loader=FunctionLoader(_template_source),
                      autoescape=select_autoescape(default=True, default_for_string=True))
    env.filters["ci"] = fmt
    env.filters["ci_cell"] = ci_cell
    left_out = {name: why for name, why in empty_figures(summary).items() if name in figures}
    shown = sorted((n for n in figures if n not in left_out),
                   key=lambda n: (n != "stage_funnel", n != "level_ladder"))
    images = [{"name": name, "caption": CAPTIONS.get(name, name),
               "data": base64.b64encode(Path(figures[name]).read_bytes()).decode("ascii")}
              for name in shown]
    rows = [trial_row(t, r) for t, r in zip(trials, reach_all(trials, shipped_tasks()),
                                            strict=True)]
    return env.get_template("report.html.j2").render(
        s=summary, figures=images, left_out=left_out, dimensions=DIMENSIONS,
        dimension_intervals=DIMENSION_INTERVALS,
        outcomes={o.model: o for o in summary.outcomes},
        composite={d.model: d.composite for d in summary.dimensions},
        best=summary.best(),
        ranked=sorted(summary.accuracy, key=lambda a: -(a.accuracy.estimate or 0.0)),
        trials_json=_script_json(rows), n_trials=len(rows),
        filters={"model": sorted({r["model"] for r in rows}),
                 "task": sorted({r["task"] for r in rows}),
                 "outcome": sorted({r["outcome"] for r in rows})},
    )


def write_html(summary: AnalysisSummary, trials: Sequence[Trial], figures: Mapping[str, Path],
               path: str | Path) -> Path:
    """Write the report page atomically; returns its path."""
    path = Path(path)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(render_html(summary, trials, figures), encoding="utf-8")
    tmp.replace(path)
    return path
