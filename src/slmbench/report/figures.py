"""The 17 figures of the study, drawn from an :class:`~slmbench.agents.summary.AnalysisSummary`.

Each figure function takes the summary and returns a matplotlib ``Figure``
(object API, no pyplot: nothing global changes, it is safe in any process).
Where a figure needs data the run lacks (one temperature, no reliability
suite, unknown model sizes), it returns a panel that says so instead of
failing. Error bars are the 95% intervals from the summary.

:data:`WHEN_PRESENT` holds the figures drawn only where the run holds their data (the
difficulty ladder): their function returns None otherwise, and no file, panel or "left out"
line stands for them, so a run without that data gets the report it had before.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
from matplotlib.figure import Figure

from slmbench.agents.summary import AnalysisSummary
from slmbench.core.stats import Estimate
from slmbench.report.funnel_figure import stage_funnel
from slmbench.report.ladder_figure import level_ladder
from slmbench.report.plotting import (
    FigureFn,
    composites,
    error_bars,
    labelled_point,
    model_color,
    new_figure,
    not_enough_data,
    one_model,
    scaled,
    short,
    spread_labels,
)
from slmbench.report.reliability_figures import (
    capability_vs_reliability,
    composite_bars,
    cost_vs_reliability,
    failure_causes,
    fault_heatmap,
    perturbation_heatmap,
    radar,
    reliability_bars,
    reliability_dimensions,
    safety_breakdown,
)

NOT_ENOUGH = "Not enough data"  # the title of a panel that shows none (plotting.not_enough_data)

# -- capability ---------------------------------------------------------------------


def _vs_params(s: AnalysisSummary, title: str, ys: dict[str, Estimate], ylabel: str,
               scale: float, metric: str) -> Figure:
    points = [(a.model, a.params_b) for a in s.accuracy if a.params_b and a.model in ys]
    if not points:
        return not_enough_data(title, "no model has a known size: pass --params MODEL=B")
    if len(points) < 2:
        return one_model(title, [m for m, _ in points])
    fig, ax = new_figure(title)
    for m, p in points:
        e = ys[m]
        labelled_point(ax, s.models, m, p, scaled(e, scale), yerr=error_bars([e], scale),
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
    spread_labels(ax)
    return fig


def accuracy_vs_params(s: AnalysisSummary) -> Figure:
    return _vs_params(s, "Accuracy vs model size", {a.model: a.accuracy for a in s.accuracy},
                      "accuracy (%) with task-level 95% CI", 100.0, "accuracy")


def composite_vs_params(s: AnalysisSummary) -> Figure:
    comp = composites(s)
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
    fig, ax = new_figure(title)
    for i, e in enumerate(effects):
        temps = sorted(e.per_temperature, key=float)
        xs = np.array([float(t) for t in temps]) + (i - len(effects) / 2) * 0.008
        ests = [e.per_temperature[t] for t in temps]
        ax.errorbar(xs, [scaled(x, 100) for x in ests], yerr=error_bars(ests, 100),
                    marker="o", capsize=3, label=short(e.model),
                    color=model_color(s.models, e.model))
    ax.set_xlabel("temperature")
    ax.set_ylabel("accuracy (%) with task-level 95% CI")
    ax.legend(fontsize=8)
    return fig


def temperature_sensitivity(s: AnalysisSummary) -> Figure:
    title = "Temperature sensitivity (highest − lowest temperature, paired by task)"
    effects = [e for e in s.temperature if e.comparison is not None]
    if not effects:
        return not_enough_data(title, "the run used one temperature")
    fig, ax = new_figure(title)
    xs = np.arange(len(effects))
    diffs = [e.comparison.difference for e in effects if e.comparison is not None]
    ax.errorbar(xs, [scaled(d, 100) for d in diffs], yerr=error_bars(diffs, 100), fmt="none",
                ecolor="black", capsize=4)
    ax.scatter(xs, [scaled(d, 100) for d in diffs],
               color=[model_color(s.models, e.model) for e in effects], zorder=3)
    for x, e, d in zip(xs, effects, diffs, strict=True):
        p = e.p_holm if e.p_holm is not None else float("nan")
        ax.annotate(f"p={p:.2g}", (x, scaled(d, 100)), ha="left", fontsize=8, xytext=(6, 0),
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
        ax.bar(xs, [0 if e is None else scaled(e, 100) for e in ests], width,
               yerr=error_bars(ests, 100), capsize=2, label=short(m),
               color=model_color(s.models, m))
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
    fig, ax = new_figure(title)
    for a in s.accuracy:
        labelled_point(ax, s.models, a.model, a.mean_latency_s, scaled(a.accuracy, 100),
                       yerr=error_bars([a.accuracy], 100))
    ax.set_xlabel("mean model time per trial (s)")
    ax.set_ylabel("accuracy (%) with task-level 95% CI")
    spread_labels(ax)
    return fig


# -- reliability ----------------------------------------------------------------------


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
    "stage_funnel": stage_funnel,
    "temperature_sensitivity": temperature_sensitivity,
}


# drawn only where the run holds their data (None: not drawn, not named as left out)
WHEN_PRESENT: dict[str, Callable[[AnalysisSummary], Figure | None]] = {
    "level_ladder": level_ladder,
}


def nothing_to_show(fig: Figure) -> str | None:
    """Why a drawn figure shows no data: the reason on its "Not enough data" panel
    (:func:`~slmbench.report.plotting.not_enough_data`); None when it shows data."""
    texts = [t.get_text() for ax in fig.axes for t in ax.texts]
    if NOT_ENOUGH not in texts:
        return None
    return " ".join(t for t in texts if t != NOT_ENOUGH) or "the run does not hold its data"


def empty_figures(summary: AnalysisSummary) -> dict[str, str]:
    """The figures that would show no data for ``summary`` (name → why), in FIGURES' order:
    the HTML report leaves them out and says why."""
    out = {}
    for name, fn in FIGURES.items():
        if (why := nothing_to_show(fn(summary))) is not None:
            out[name] = why
    return out


def write_figures(summary: AnalysisSummary, out_dir: str | Path, *, dpi: int = 150
                  ) -> dict[str, tuple[Path, Path]]:
    """Draw every figure as PDF and PNG into ``out_dir``, and each of WHEN_PRESENT the run
    holds the data of; returns name → (pdf, png)."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written: dict[str, tuple[Path, Path]] = {}
    for name, fn in {**FIGURES, **WHEN_PRESENT}.items():
        fig = fn(summary)
        if fig is None:  # one of WHEN_PRESENT, whose data the run does not hold
            continue
        pdf, png = out / f"{name}.pdf", out / f"{name}.png"
        fig.savefig(pdf)
        fig.savefig(png, dpi=dpi)
        written[name] = (pdf, png)
    return written
