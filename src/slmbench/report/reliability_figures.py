"""The reliability figures of the study: the four dimensions and the composite, against
capability and cost, per fault kind and perturbation, safety outcomes and failure causes, each
drawn from an :class:`~slmbench.agents.summary.AnalysisSummary` (see
:mod:`slmbench.report.figures`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
from matplotlib.figure import Figure

from slmbench.agents.forensics import CAUSES
from slmbench.agents.summary import AnalysisSummary, Cell
from slmbench.core.stats import Estimate
from slmbench.report.plotting import (
    COLORS,
    DIMENSION_LABELS,
    OUTCOME_COLORS,
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


def _no_dimensions(title: str) -> Figure:
    return not_enough_data(title, "no reliability-suite trials in this run")


def _against_composite(s: AnalysisSummary, title: str, xs: dict[str, Estimate | float], *,
                       missing: str, xlabel: str, ylabel: str) -> Figure:
    """Each model's composite (with its interval) against one other number of it: an
    ``Estimate`` (a percentage, with its interval) or a plain value."""
    comp = composites(s)
    both = [m for m in s.models if m in comp and m in xs]
    if not both:
        return not_enough_data(title, missing)
    if len(both) < 2:
        return one_model(title, both)
    fig, ax = new_figure(title)
    for m in both:
        x = xs[m]
        bars = {"yerr": error_bars([comp[m]])}
        if isinstance(x, Estimate):
            bars["xerr"] = error_bars([x], 100)
        labelled_point(ax, s.models, m, scaled(x, 100) if isinstance(x, Estimate) else x,
                       scaled(comp[m]), **bars)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    spread_labels(ax)
    return fig


def capability_vs_reliability(s: AnalysisSummary) -> Figure:
    return _against_composite(
        s, "Capability vs reliability", {a.model: a.accuracy for a in s.accuracy},
        missing="no model has both capability accuracy and a composite",
        xlabel="capability accuracy (%)", ylabel="composite reliability (0–1)")


def composite_bars(s: AnalysisSummary) -> Figure:
    title = "Composite reliability (mean of four dimensions)"
    comp = composites(s)
    if not comp:
        return not_enough_data(title, "no model has all four reliability dimensions")
    fig, ax = new_figure(title)
    models = sorted(comp, key=lambda m: -scaled(comp[m]))
    ests = [comp[m] for m in models]
    ax.bar(range(len(models)), [scaled(e) for e in ests], yerr=error_bars(ests), capsize=4,
           color=[model_color(s.models, m) for m in models])
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
        ax.bar(xs, [0 if e is None else scaled(e) for e in ests], width, yerr=error_bars(ests),
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
        ax.bar(range(len(models)), [0 if e is None else scaled(e) for e in ests],
               yerr=error_bars(ests), capsize=3, color=[model_color(s.models, m) for m in models])
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
        vals = [scaled(by[m].get(d)) if by[m].get(d) else 0.0 for d in dims]
        ax.plot(np.append(angles, angles[0]), vals + vals[:1], label=short(m),
                color=model_color(s.models, m))
        ax.fill(np.append(angles, angles[0]), vals + vals[:1], alpha=0.1,
                color=model_color(s.models, m))
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
        grid[i, j] = scaled(c.rate)
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
    ax.errorbar(range(len(s.safety)), [scaled(e) for e in ests], yerr=error_bars(ests), fmt="none",
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
