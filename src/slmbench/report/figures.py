"""The 16 figures of the study, drawn from an :class:`~slmbench.agents.summary.AnalysisSummary`.

Each figure function takes the summary and returns a matplotlib ``Figure``
(object API, no pyplot: nothing global changes, it is safe in any process).
Where a figure needs data the run lacks (one temperature, no reliability
suite, unknown model sizes), it returns a panel that says so instead of
failing. Error bars are the 95% intervals from the summary.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.text import Annotation

from slmbench.agents.configurations import spec_of, target_of
from slmbench.agents.forensics import CAUSES
from slmbench.agents.summary import AnalysisSummary, Cell
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


def _fig(title: str) -> tuple[Figure, object]:
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


def _err(ests: Sequence[Estimate | None], scale: float = 1.0) -> np.ndarray:
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


def _val(e: Estimate | None, scale: float = 1.0) -> float:
    return float("nan") if e is None or e.estimate is None else e.estimate * scale


def _color(models: list[str], model: str) -> str:
    return COLORS[models.index(model) % len(COLORS)] if model in models else "#333333"


def _composites(s: AnalysisSummary) -> dict[str, Estimate]:
    return {d.model: d.composite for d in s.dimensions if d.composite is not None}


# -- capability ---------------------------------------------------------------------


LABEL_PT = 8  # font size of a point's label
_LABEL_AT = (6.0, 4.0)  # a label's offset from its point, in points


def _labelled_point(ax: Axes, models: list[str], model: str, x: float, y: float,
                    **bars: Any) -> None:
    """One model as a point with its error bars (``xerr``/``yerr``), labelled with its name."""
    ax.errorbar([x], [y], fmt="o", capsize=4, color=_color(models, model), **bars)
    ax.annotate(short(model), (x, y), textcoords="offset points", xytext=_LABEL_AT,
                fontsize=LABEL_PT)


def _spread_labels(ax: Axes) -> None:
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
        left, right = x + _LABEL_AT[0], x + _LABEL_AT[0] + char * len(note.get_text())
        dy = _LABEL_AT[1]
        while any(left < r and lo < right and abs(y + dy - b) < line for lo, b, r in placed):
            dy -= line
        note.xyann = (_LABEL_AT[0], dy)
        placed.append((left, y + dy, right))


def _vs_params(s: AnalysisSummary, title: str, ys: dict[str, Estimate], ylabel: str,
               scale: float, metric: str) -> Figure:
    points = [(a.model, a.params_b) for a in s.accuracy if a.params_b and a.model in ys]
    if not points:
        return not_enough_data(title, "no model has a known size: pass --params MODEL=B")
    if len(points) < 2:
        return one_model(title, [m for m, _ in points])
    fig, ax = _fig(title)
    for m, p in points:
        e = ys[m]
        _labelled_point(ax, s.models, m, p, _val(e, scale), yerr=_err([e], scale),
                        label=short(m))
    ax.set_xscale("log")
    sizes = sorted({p for _, p in points})
    ax.set_xticks(sizes, [f"{p:g}B" for p in sizes])
    ax.minorticks_off()
    ax.set_xlim(min(sizes) / 1.6, max(sizes) * 1.6)
    ax.set_xlabel("parameters (log scale)")
    ax.set_ylabel(ylabel)
    corr = next((c for c in s.size if c.metric == metric), None)
    if corr is not None:
        if corr.spearman is not None and corr.spearman.estimate is not None:
            text = f"Spearman ρ = {corr.spearman.estimate:.2f} (p = {corr.spearman.p_value:.3g})"
        else:
            text = "correlation not reported: fewer than 4 models with a size"
        ax.text(0.02, 0.97, text, transform=ax.transAxes, va="top", fontsize=8)
    _spread_labels(ax)
    return fig


def accuracy_vs_params(s: AnalysisSummary) -> Figure:
    return _vs_params(s, "Accuracy vs model size", {a.model: a.accuracy for a in s.accuracy},
                      "accuracy (%) with task-level 95% CI", 100.0, "accuracy")


def composite_vs_params(s: AnalysisSummary) -> Figure:
    comp = _composites(s)
    if not comp:
        return not_enough_data("Composite reliability vs model size",
                               "no model has all four reliability dimensions")
    return _vs_params(s, "Composite reliability vs model size", comp,
                      "composite (0–1) with 95% CI", 1.0, "composite")


def accuracy_vs_temperature(s: AnalysisSummary) -> Figure:
    title = "Accuracy vs temperature"
    effects = [e for e in s.temperature if len(e.per_temperature) >= 2]
    if not effects:
        return not_enough_data(title, "the run used one temperature")
    fig, ax = _fig(title)
    for i, e in enumerate(effects):
        temps = sorted(e.per_temperature, key=float)
        xs = np.array([float(t) for t in temps]) + (i - len(effects) / 2) * 0.008
        ests = [e.per_temperature[t] for t in temps]
        ax.errorbar(xs, [_val(x, 100) for x in ests], yerr=_err(ests, 100), marker="o",
                    capsize=3, label=short(e.model), color=_color(s.models, e.model))
    ax.set_xlabel("temperature")
    ax.set_ylabel("accuracy (%) with task-level 95% CI")
    ax.legend(fontsize=8)
    return fig


def temperature_sensitivity(s: AnalysisSummary) -> Figure:
    title = "Temperature sensitivity (highest − lowest temperature, paired by task)"
    effects = [e for e in s.temperature if e.comparison is not None]
    if not effects:
        return not_enough_data(title, "the run used one temperature")
    fig, ax = _fig(title)
    xs = np.arange(len(effects))
    diffs = [e.comparison.difference for e in effects if e.comparison is not None]
    ax.errorbar(xs, [_val(d, 100) for d in diffs], yerr=_err(diffs, 100), fmt="none",
                ecolor="black", capsize=4)
    ax.scatter(xs, [_val(d, 100) for d in diffs],
               color=[_color(s.models, e.model) for e in effects], zorder=3)
    for x, e, d in zip(xs, effects, diffs, strict=True):
        p = e.p_holm if e.p_holm is not None else float("nan")
        ax.annotate(f"p={p:.2g}", (x, _val(d, 100)), ha="left", fontsize=8, xytext=(6, 0),
                    textcoords="offset points")
    ax.axhline(0, color="black", linewidth=0.8)
    ax.set_xticks(xs, [short(e.model) for e in effects], rotation=20, ha="right")
    ax.set_ylabel("accuracy difference (points), paired 95% CI\n(sign test p, Holm)")
    return fig


def per_group_accuracy(s: AnalysisSummary) -> Figure:
    title = "Accuracy per task group"
    groups = sorted({g.group for g in s.groups})
    models = sorted({g.model for g in s.groups})
    if not groups:
        return not_enough_data(title, "no capability trials")
    fig = Figure(figsize=(9.0, 4.6), layout="constrained")
    ax = fig.add_subplot()
    ax.set_title(title)
    width = 0.8 / max(1, len(models))
    cells = {(g.model, g.group): g.accuracy for g in s.groups}
    for i, m in enumerate(models):
        ests = [cells.get((m, g)) for g in groups]
        xs = np.arange(len(groups)) + (i - (len(models) - 1) / 2) * width
        ax.bar(xs, [0 if e is None else _val(e, 100) for e in ests], width, yerr=_err(ests, 100),
               capsize=2, label=short(m), color=_color(s.models, m))
    ax.set_xticks(np.arange(len(groups)), [g.replace("_", " ") for g in groups], rotation=25,
                  ha="right")
    ax.set_ylabel("accuracy (%) with task-level 95% CI")
    ax.set_ylim(0, 105)
    ax.legend(fontsize=8)
    return fig


def latency_vs_accuracy(s: AnalysisSummary) -> Figure:
    title = "Latency vs accuracy"
    if not s.accuracy:
        return not_enough_data(title, "no capability trials")
    if len(s.accuracy) < 2:
        return one_model(title, [a.model for a in s.accuracy])
    fig, ax = _fig(title)
    for a in s.accuracy:
        _labelled_point(ax, s.models, a.model, a.mean_latency_s, _val(a.accuracy, 100),
                        yerr=_err([a.accuracy], 100))
    ax.set_xlabel("mean model time per trial (s)")
    ax.set_ylabel("accuracy (%) with task-level 95% CI")
    _spread_labels(ax)
    return fig


# -- reliability ----------------------------------------------------------------------


def _no_dimensions(title: str) -> Figure:
    return not_enough_data(title, "no reliability-suite trials in this run")


def _against_composite(s: AnalysisSummary, title: str, xs: dict[str, Estimate | float], *,
                       missing: str, xlabel: str, ylabel: str) -> Figure:
    """Each model's composite (with its interval) against one other number of it: an
    ``Estimate`` (a percentage, with its interval) or a plain value."""
    comp = _composites(s)
    both = [m for m in s.models if m in comp and m in xs]
    if not both:
        return not_enough_data(title, missing)
    if len(both) < 2:
        return one_model(title, both)
    fig, ax = _fig(title)
    for m in both:
        x = xs[m]
        bars = {"yerr": _err([comp[m]])}
        if isinstance(x, Estimate):
            bars["xerr"] = _err([x], 100)
        _labelled_point(ax, s.models, m, _val(x, 100) if isinstance(x, Estimate) else x,
                        _val(comp[m]), **bars)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    _spread_labels(ax)
    return fig


def capability_vs_reliability(s: AnalysisSummary) -> Figure:
    return _against_composite(
        s, "Capability vs reliability", {a.model: a.accuracy for a in s.accuracy},
        missing="no model has both capability accuracy and a composite",
        xlabel="capability accuracy (%)", ylabel="composite reliability (0–1)")


def composite_bars(s: AnalysisSummary) -> Figure:
    title = "Composite reliability (mean of four dimensions)"
    comp = _composites(s)
    if not comp:
        return not_enough_data(title, "no model has all four reliability dimensions")
    fig, ax = _fig(title)
    models = sorted(comp, key=lambda m: -_val(comp[m]))
    ests = [comp[m] for m in models]
    ax.bar(range(len(models)), [_val(e) for e in ests], yerr=_err(ests), capsize=4,
           color=[_color(s.models, m) for m in models])
    ax.set_xticks(range(len(models)), [short(m) for m in models], rotation=20, ha="right")
    ax.set_ylabel("composite (0–1) with 95% CI")
    ax.set_ylim(0, 1.05)
    return fig


def cost_vs_reliability(s: AnalysisSummary) -> Figure:
    return _against_composite(
        s, "Cost vs reliability", {a.model: a.mean_latency_s for a in s.accuracy},
        missing="no model has both a composite and timed trials",
        xlabel="mean model time per capability trial (s)",
        ylabel="composite reliability (0–1) with 95% CI")


class _Dims(NamedTuple):
    """The models and measured reliability dimensions of a summary, in display order."""

    models: list[str]
    dims: list[str]
    by_model: dict[str, dict[str, Estimate]]

    def estimates(self, dim: str) -> list[Estimate | None]:
        """Each model's estimate of ``dim`` (None where it has none), in ``models`` order."""
        return [self.by_model[m].get(dim) for m in self.models]


def _dims(s: AnalysisSummary) -> _Dims:
    models = [d.model for d in s.dimensions]
    dims = [d for d in DIMENSION_LABELS if any(d in x.dimensions for x in s.dimensions)]
    return _Dims(models, dims, {d.model: d.dimensions for d in s.dimensions})


def reliability_bars(s: AnalysisSummary) -> Figure:
    title = "Reliability dimensions per model"
    d = _dims(s)
    models, dims = d.models, d.dims
    if not dims:
        return _no_dimensions(title)
    fig = Figure(figsize=(8.0, 4.6), layout="constrained")
    ax = fig.add_subplot()
    ax.set_title(title)
    width = 0.8 / len(dims)
    for j, dim in enumerate(dims):
        ests = d.estimates(dim)
        xs = np.arange(len(models)) + (j - (len(dims) - 1) / 2) * width
        ax.bar(xs, [0 if e is None else _val(e) for e in ests], width, yerr=_err(ests),
               capsize=2, label=DIMENSION_LABELS[dim], color=COLORS[j])
        for x, e in zip(xs, ests, strict=True):
            if e is None:  # not measurable: no bar
                ax.text(x, 0.02, "n/m", ha="center", va="bottom", fontsize=6, rotation=90)
    ax.set_xticks(np.arange(len(models)), [short(m) for m in models], rotation=20, ha="right")
    ax.set_ylabel("score (0–1) with 95% CI; n/m: not measurable")
    ax.set_ylim(0, 1.1)
    ax.legend(fontsize=8, ncols=4, loc="upper left")
    return fig


def reliability_dimensions(s: AnalysisSummary) -> Figure:
    title = "Each reliability dimension across models"
    d = _dims(s)
    models = d.models
    if not d.dims:
        return _no_dimensions(title)
    fig = Figure(figsize=(9.0, 6.0), layout="constrained")
    fig.suptitle(title)
    axes = fig.subplots(2, 2, sharey=True).ravel()
    for ax, dim in zip(axes, DIMENSION_LABELS, strict=True):
        ax.set_title(DIMENSION_LABELS[dim], fontsize=10)
        ests = d.estimates(dim)
        if all(e is None for e in ests):
            ax.text(0.5, 0.5, "not measurable for any model", ha="center",
                    transform=ax.transAxes)
            ax.set_xticks([])
            continue
        ax.bar(range(len(models)), [0 if e is None else _val(e) for e in ests],
               yerr=_err(ests), capsize=3, color=[_color(s.models, m) for m in models])
        for x, e in enumerate(ests):
            if e is None:  # not measurable: no bar, and the panel says so
                ax.text(x, 0.02, "not\nmeasurable", ha="center", va="bottom", fontsize=7)
        ax.set_xticks(range(len(models)), [short(m) for m in models], rotation=20, ha="right",
                      fontsize=8)
        ax.set_ylim(0, 1.05)
    return fig


def radar(s: AnalysisSummary) -> Figure:
    title = "Reliability profile"
    _, dims, by = _dims(s)
    # a dimension a model is not measurable on has no value: only models measured on every
    # plotted dimension are drawn (a 0 there would read as a measurement)
    models = [m for m, got in by.items() if all(k in got for k in dims)]
    if len(dims) < 3 or not models:
        return not_enough_data(title, "a radar needs a model measured on at least 3 "
                                      "dimensions")
    fig = Figure(figsize=(6.0, 6.0), layout="constrained")
    ax = fig.add_subplot(projection="polar")
    ax.set_title(title)
    angles = np.linspace(0, 2 * np.pi, len(dims), endpoint=False)
    for m in models:
        vals = [_val(by[m].get(d)) if by[m].get(d) else 0.0 for d in dims]
        ax.plot(np.append(angles, angles[0]), vals + vals[:1], label=short(m),
                color=_color(s.models, m))
        ax.fill(np.append(angles, angles[0]), vals + vals[:1], alpha=0.1,
                color=_color(s.models, m))
    ax.set_xticks(angles, [DIMENSION_LABELS[d] for d in dims])
    ax.set_ylim(0, 1)
    ax.legend(fontsize=8, loc="upper right", bbox_to_anchor=(1.25, 1.1))
    return fig


def _heatmap(s: AnalysisSummary, title: str, cells: Sequence[Cell], xlabel: str
             ) -> Figure | None:
    """Models × conditions success-rate grid; None when there are no cells."""
    if not cells:
        return None
    models = sorted({c.model for c in cells})
    keys = sorted({c.key for c in cells}, key=lambda k: (k != "base", k))
    grid = np.full((len(models), len(keys)), np.nan)
    ns = np.zeros_like(grid, dtype=int)
    for c in cells:
        i, j = models.index(c.model), keys.index(c.key)
        grid[i, j] = _val(c.rate)
        ns[i, j] = c.rate.n
    fig = Figure(figsize=(max(6.0, 1.0 + 0.9 * len(keys)), 1.6 + 0.6 * len(models)),
                 layout="constrained")
    ax = fig.add_subplot()
    ax.set_title(title)
    im = ax.imshow(grid, vmin=0, vmax=1, cmap="RdYlGn", aspect="auto")
    for i in range(len(models)):
        for j in range(len(keys)):
            if not np.isnan(grid[i, j]):
                ax.text(j, i, f"{grid[i, j]:.2f}\nn={ns[i, j]}", ha="center", va="center",
                        fontsize=7)
    ax.set_xticks(range(len(keys)), [k.replace("_", " ") for k in keys], rotation=25,
                  ha="right")
    ax.set_yticks(range(len(models)), [short(m) for m in models])
    ax.set_xlabel(xlabel)
    fig.colorbar(im, ax=ax, label="success rate")
    return fig


def fault_heatmap(s: AnalysisSummary) -> Figure:
    title = "Recovery from injected tool faults"
    return (_heatmap(s, title, s.faults, "injected fault (success only when it reached the "
                     "model)") or not_enough_data(title, "no fault-injection trials"))


def perturbation_heatmap(s: AnalysisSummary) -> Figure:
    title = "Success under reworded instructions"
    return (_heatmap(s, title, s.perturbations, "instruction variant") or
            not_enough_data(title, "no robustness trials"))


def safety_breakdown(s: AnalysisSummary) -> Figure:
    title = "How safety trials ended"
    if not s.safety:
        return not_enough_data(title, "no safety-dimension trials")
    fig = Figure(figsize=(8.0, 4.6), layout="constrained")
    ax = fig.add_subplot()
    ax.set_title(title)
    outcomes = sorted({o for sb in s.safety for o in sb.counts},
                      key=lambda o: (o != "success", o))
    bottom = np.zeros(len(s.safety))
    for j, o in enumerate(outcomes):
        share = np.array([sb.counts.get(o, 0) / sb.trials for sb in s.safety])
        ax.bar(range(len(s.safety)), share, bottom=bottom, label=o.replace("_", " "),
               color=OUTCOME_COLORS.get(o, COLORS[j % len(COLORS)]))
        bottom += share
    ests = [sb.passed for sb in s.safety]
    ax.errorbar(range(len(s.safety)), [_val(e) for e in ests], yerr=_err(ests), fmt="none",
                ecolor="black", capsize=4, label="success 95% CI")
    ax.set_xticks(range(len(s.safety)), [short(sb.model) for sb in s.safety], rotation=20,
                  ha="right")
    ax.set_ylabel("share of safety trials")
    ax.set_ylim(0, 1.05)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    return fig


def failure_causes(s: AnalysisSummary) -> Figure:
    """Per model, its failing trials stacked by cause (slmbench.agents.forensics)."""
    title = "Why trials failed (share of each model's trials, by cause)"
    rows = [f for f in s.failures if f.trials]
    if not rows or not any(f.causes for f in rows):
        return not_enough_data(title, "no failed trials the model is answerable for")
    causes = [c for c in CAUSES if any(c in f.causes for f in rows)]
    causes += sorted({c for f in rows for c in f.causes} - set(causes))
    fig = Figure(figsize=(9.0, 4.6), layout="constrained")
    ax = fig.add_subplot()
    ax.set_title(title)
    xs = np.arange(len(rows))
    bottom = np.zeros(len(rows))
    palette = [*COLORS, "#aec7e8", "#ffbb78", "#98df8a", "#ff9896", "#c5b0d5"]
    for j, cause in enumerate(causes):
        share = np.array([100 * f.causes.get(cause, 0) / f.trials for f in rows])
        ax.bar(xs, share, 0.6, bottom=bottom, label=cause.replace("_", " "),
               color=palette[j % len(palette)])
        bottom += share
    for x, f in zip(xs, rows, strict=True):
        ax.annotate(f"n={f.trials}", (x, bottom[x]), ha="center", textcoords="offset points",
                    xytext=(0, 3), fontsize=8)
    ax.set_xticks(xs, [short(f.model) for f in rows], rotation=20, ha="right")
    ax.set_ylabel("trials (%); the rest succeeded")
    ax.set_ylim(0, 110)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    return fig


FIGURES: dict[str, FigureFn] = {
    "accuracy_vs_params": accuracy_vs_params,
    "accuracy_vs_temperature": accuracy_vs_temperature,
    "capability_vs_reliability": capability_vs_reliability,
    "composite_bars": composite_bars,
    "composite_vs_params": composite_vs_params,
    "cost_vs_reliability": cost_vs_reliability,
    "failure_causes": failure_causes,
    "fault_heatmap": fault_heatmap,
    "latency_vs_accuracy": latency_vs_accuracy,
    "per_group_accuracy": per_group_accuracy,
    "perturbation_heatmap": perturbation_heatmap,
    "reliability_bars": reliability_bars,
    "reliability_dimensions": reliability_dimensions,
    "radar": radar,
    "safety_breakdown": safety_breakdown,
    "temperature_sensitivity": temperature_sensitivity,
}


def write_figures(summary: AnalysisSummary, out_dir: str | Path, *, dpi: int = 150
                  ) -> dict[str, tuple[Path, Path]]:
    """Draw every figure as PDF and PNG into ``out_dir``; returns name → (pdf, png)."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written: dict[str, tuple[Path, Path]] = {}
    for name, fn in FIGURES.items():
        fig = fn(summary)
        pdf, png = out / f"{name}.pdf", out / f"{name}.png"
        fig.savefig(pdf)
        fig.savefig(png, dpi=dpi)
        written[name] = (pdf, png)
    return written
