"""What every figure shares: the figure size, colours and labels, a model's short label, the
panel drawn where a run lacks a figure's data, error bars from estimates, and labelled points
whose labels do not overlap (matplotlib's object API, no pyplot)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.text import Annotation

from slmbench.agents.configurations import spec_of, target_of
from slmbench.agents.summary import AnalysisSummary
from slmbench.core.stats import Estimate

FigureFn = Callable[[AnalysisSummary], Figure]
SIZE = (7.0, 4.4)
DIMENSION_LABELS = {"consistency": "Consistency", "robustness": "Robustness",
                    "fault_tolerance": "Fault tolerance", "safety": "Safety"}
OUTCOME_COLORS = {"success": "#2ca02c", "refused": "#1f77b4", "wrong_answer": "#d62728",
                  "format_failure": "#ff7f0e", "step_limit": "#9467bd", "loop": "#8c564b",
                  "tool_error": "#e377c2", "backend_error": "#7f7f7f",
                  "environment_error": "#bcbd22"}
COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2",
          "#7f7f7f", "#bcbd22", "#17becf"]


def short(model: str) -> str:
    """A readable label for a model spec or configuration, unique as the tables' rows are:
    ``ollama:qwen3:4b`` → ``qwen3:4b``, ``llamacpp:/m/x.gguf?n_ctx=8192`` → ``x?n_ctx=8192``;
    a configuration keeps its mark (``qwen2.5-coder-0.5b (all tools)``)."""
    spec = spec_of(model)
    options = spec.partition("?")[2].split("@", 1)[0]
    name = Path(target_of(spec)).name.removesuffix(".gguf") or spec
    return name + (f"?{options}" if options else "") + model[len(spec):]


def new_figure(title: str) -> tuple[Figure, object]:
    fig = Figure(figsize=SIZE, layout="constrained")
    ax = fig.add_subplot()
    ax.set_title(title)
    return fig, ax


def not_enough_data(title: str, reason: str) -> Figure:
    """A readable panel for a figure whose data the run does not hold."""
    fig = Figure(figsize=SIZE, layout="constrained")
    ax = fig.add_subplot()
    ax.set_axis_off()
    ax.set_title(title)
    ax.text(0.5, 0.55, "Not enough data", ha="center", va="center", fontsize=16,
            color="#555555", transform=ax.transAxes)
    ax.text(0.5, 0.4, reason, ha="center", va="center", fontsize=10, color="#555555",
            wrap=True, transform=ax.transAxes)
    return fig


def one_model(title: str, models: Sequence[str]) -> Figure:
    """In place of a comparison across models drawn with fewer than two: say so."""
    have = f"{short(models[0])} only" if models else "none"
    return not_enough_data(title, f"this figure compares models: it needs two or more; "
                                  f"this run has {have}")


def error_bars(ests: Sequence[Estimate | None], scale: float = 1.0) -> np.ndarray:
    """Asymmetric error bars (2 × n) from estimates; zero where an interval is missing."""
    lows, highs = [], []
    for e in ests:
        if e is None or e.estimate is None or e.low is None or e.high is None:
            lows.append(0.0)
            highs.append(0.0)
        else:
            lows.append(max(0.0, e.estimate - e.low) * scale)
            highs.append(max(0.0, e.high - e.estimate) * scale)
    return np.array([lows, highs])


def scaled(e: Estimate | None, scale: float = 1.0) -> float:
    return float("nan") if e is None or e.estimate is None else e.estimate * scale


def model_color(models: list[str], model: str) -> str:
    return COLORS[models.index(model) % len(COLORS)] if model in models else "#333333"


def composites(s: AnalysisSummary) -> dict[str, Estimate]:
    return {d.model: d.composite for d in s.dimensions if d.composite is not None}


LABEL_PT = 8  # font size of a point's label
LABEL_AT = (6.0, 4.0)  # a label's offset from its point, in points


def labelled_point(ax: Axes, models: list[str], model: str, x: float, y: float,
                    **bars: Any) -> None:
    """One model as a point with its error bars (``xerr``/``yerr``), labelled with its name."""
    ax.errorbar([x], [y], fmt="o", capsize=4, color=model_color(models, model), **bars)
    ax.annotate(short(model), (x, y), textcoords="offset points", xytext=LABEL_AT,
                fontsize=LABEL_PT)


def spread_labels(ax: Axes) -> None:
    """Give each point's label a line of its own where labels would overlap (points of models
    that score alike sit on top of each other): a label that would cover one already placed
    moves a line down. Call it once every point is drawn and the limits are set."""
    ax.get_xlim(), ax.get_ylim()  # settle the autoscaled limits before reading positions
    to_pt = 72 / ax.figure.dpi
    line, char = 1.3 * LABEL_PT, 0.6 * LABEL_PT  # a line's height and a character's width
    placed: list[tuple[float, float, float]] = []  # left, bottom, right of placed labels
    notes = [t for t in ax.texts if isinstance(t, Annotation)]
    anchors = [ax.transData.transform(t.xy) * to_pt for t in notes]
    for i in sorted(range(len(notes)), key=lambda i: (-anchors[i][1], anchors[i][0])):
        note, (x, y) = notes[i], anchors[i]
        left, right = x + LABEL_AT[0], x + LABEL_AT[0] + char * len(note.get_text())
        dy = LABEL_AT[1]
        while any(left < r and lo < right and abs(y + dy - b) < line for lo, b, r in placed):
            dy -= line
        note.xyann = (LABEL_AT[0], dy)
        placed.append((left, y + dy, right))
