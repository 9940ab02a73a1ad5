"""The figures test_figures_drawn.py does not cover, read back from their artists: every point,
line, bar and error bar drawn equals the summary's number for it, under the right label.

Together with test_figures_drawn.py (composite bars, per-group bars, both heatmaps) this covers
all 17 figures of ``slmbench.report.figures.FIGURES``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from matplotlib.container import BarContainer, ErrorbarContainer
from matplotlib.text import Annotation

from slmbench.agents.summary import AnalysisSummary
from slmbench.agents.summary_file import read_summary
from slmbench.core.stats import Estimate
from slmbench.report import ReportFiles
from slmbench.report import figures as figs
from slmbench.report.plotting import DIMENSION_LABELS, short
from slmbench.report.reliability_figures import (
    capability_vs_reliability,
    cost_vs_reliability,
    failure_causes,
    radar,
    reliability_bars,
    reliability_dimensions,
    safety_breakdown,
)

COVERED_ELSEWHERE = {"composite_bars", "per_group_accuracy", "fault_heatmap",
                     "perturbation_heatmap"}  # test_figures_drawn.py


@pytest.fixture(scope="module")
def summary(full_report: ReportFiles) -> AnalysisSummary:
    return read_summary(full_report.summary)


def _ci(e: Estimate, scale: float = 1.0) -> tuple[float, float]:
    assert e.low is not None and e.high is not None
    return (e.low * scale, e.high * scale)


def _flat(pairs: list[tuple[float, float]]) -> list[float]:
    """(low, high) pairs as one flat list, the shape ``pytest.approx`` compares."""
    return [v for pair in pairs for v in pair]


def _bar_extents(container: ErrorbarContainer) -> dict[str, list[float]]:
    """The x and y error-bar extents of one errorbar container: low, high of each point in
    turn, as one flat list."""
    out: dict[str, list[float]] = {"x": [], "y": []}
    for coll in container.lines[2]:
        for (x0, y0), (x1, y1) in coll.get_segments():
            if x0 == x1:
                out["y"] += [min(y0, y1), max(y0, y1)]
            else:
                out["x"] += [min(x0, x1), max(x0, x1)]
    return out


def _labelled_points(ax: Any) -> dict[str, dict[str, Any]]:
    """Each labelled point (``figures._labelled_point``): its label, where it is drawn, where
    its label points, and its error bars."""
    containers = [c for c in ax.containers if isinstance(c, ErrorbarContainer)]
    labels = [t for t in ax.texts if isinstance(t, Annotation)]
    assert len(containers) == len(labels)
    out = {}
    for container, label in zip(containers, labels, strict=True):
        ((x, y),) = container.lines[0].get_xydata()
        out[label.get_text()] = {"xy": (float(x), float(y)), "label_at": label.xy,
                                 **_bar_extents(container)}
    return out


def _bars(ax: Any) -> list[BarContainer]:
    return [c for c in ax.containers if isinstance(c, BarContainer)]


def _ticks(ax: Any) -> list[str]:
    return [t.get_text() for t in ax.get_xticklabels()]


def test_every_figure_is_read_back_by_a_test() -> None:
    names = {n.removeprefix("test_") for n in globals() if n.startswith("test_")}
    assert set(figs.FIGURES) - COVERED_ELSEWHERE <= names


def _check_vs_params(summary: AnalysisSummary, draw: Any, ys: dict[str, Estimate],
                     scale: float) -> None:
    sizes = {a.model: a.params_b for a in summary.accuracy if a.params_b and a.model in ys}
    assert len(sizes) >= 2, "the synthetic run gives its models a size"
    ax = draw(summary).axes[0]
    points = _labelled_points(ax)
    assert set(points) == {short(m) for m in sizes}
    for m, size in sizes.items():
        p = points[short(m)]
        assert p["xy"] == pytest.approx((size, ys[m].estimate * scale))
        assert p["label_at"] == pytest.approx(p["xy"])
        assert p["y"] == pytest.approx(_ci(ys[m], scale)) and p["x"] == []
    assert _ticks(ax) == [f"{p:g}B" for p in sorted(set(sizes.values()))]
    assert ax.get_xscale() == "log"


def test_accuracy_vs_params(summary: AnalysisSummary) -> None:
    _check_vs_params(summary, figs.accuracy_vs_params,
                     {a.model: a.accuracy for a in summary.accuracy}, 100.0)


def test_composite_vs_params(summary: AnalysisSummary) -> None:
    comp = {d.model: d.composite for d in summary.dimensions if d.composite is not None}
    _check_vs_params(summary, figs.composite_vs_params, comp, 1.0)


def test_accuracy_vs_temperature(summary: AnalysisSummary) -> None:
    effects = [e for e in summary.temperature if len(e.per_temperature) >= 2]
    assert effects, "the synthetic run has three temperatures"
    ax = figs.accuracy_vs_temperature(summary).axes[0]
    containers = [c for c in ax.containers if isinstance(c, ErrorbarContainer)]
    assert [c.get_label() for c in containers] == [short(e.model) for e in effects]
    for e, container in zip(effects, containers, strict=True):
        temps = sorted(e.per_temperature, key=float)
        xs, ys = container.lines[0].get_data()
        # the models' points are nudged apart by less than a hundredth of a temperature step
        assert np.abs(np.asarray(xs) - [float(t) for t in temps]).max() < 0.05
        assert list(ys) == pytest.approx([e.per_temperature[t].estimate * 100 for t in temps])
        assert _bar_extents(container)["y"] == pytest.approx(
            _flat([_ci(e.per_temperature[t], 100) for t in temps]))
    assert [t.get_text() for t in ax.get_legend().get_texts()] == [
        short(e.model) for e in effects]


def test_temperature_sensitivity(summary: AnalysisSummary) -> None:
    """Points: highest − lowest temperature paired by task, with the paired interval and the
    Holm-adjusted sign-test p beside each."""
    effects = [e for e in summary.temperature if e.comparison is not None]
    assert effects
    diffs = [e.comparison.difference for e in effects if e.comparison is not None]
    ax = figs.temperature_sensitivity(summary).axes[0]
    (container,) = ax.containers
    assert _bar_extents(container)["y"] == pytest.approx(_flat([_ci(d, 100) for d in diffs]))
    assert _ticks(ax) == [short(e.model) for e in effects]
    notes = [t for t in ax.texts if isinstance(t, Annotation)]
    assert [t.get_text() for t in notes] == [f"p={e.p_holm:.2g}" for e in effects]
    assert [t.xy[1] for t in notes] == pytest.approx([d.estimate * 100 for d in diffs])


def test_latency_vs_accuracy(summary: AnalysisSummary) -> None:
    points = _labelled_points(figs.latency_vs_accuracy(summary).axes[0])
    assert set(points) == {short(a.model) for a in summary.accuracy}
    for a in summary.accuracy:
        p = points[short(a.model)]
        assert p["xy"] == pytest.approx((a.mean_latency_s, a.accuracy.estimate * 100))
        assert p["y"] == pytest.approx(_ci(a.accuracy, 100)) and p["x"] == []


def _check_against_composite(summary: AnalysisSummary, draw: Any,
                             xs: dict[str, Estimate | float]) -> None:
    comp = {d.model: d.composite for d in summary.dimensions if d.composite is not None}
    both = [m for m in summary.models if m in comp and m in xs]
    assert len(both) >= 2
    points = _labelled_points(draw(summary).axes[0])
    assert set(points) == {short(m) for m in both}
    for m in both:
        p, x = points[short(m)], xs[m]
        want_x = x.estimate * 100 if isinstance(x, Estimate) else x
        assert p["xy"] == pytest.approx((want_x, comp[m].estimate))
        assert p["y"] == pytest.approx(_ci(comp[m]))
        assert p["x"] == (pytest.approx(_ci(x, 100)) if isinstance(x, Estimate) else [])


def test_capability_vs_reliability(summary: AnalysisSummary) -> None:
    _check_against_composite(summary, capability_vs_reliability,
                             {a.model: a.accuracy for a in summary.accuracy})


def test_cost_vs_reliability(summary: AnalysisSummary) -> None:
    _check_against_composite(summary, cost_vs_reliability,
                             {a.model: a.mean_latency_s for a in summary.accuracy})


def _dimension_table(summary: AnalysisSummary) -> tuple[list[str], list[str]]:
    models = [d.model for d in summary.dimensions]
    dims = [d for d in DIMENSION_LABELS if any(d in x.dimensions for x in summary.dimensions)]
    assert models and len(dims) == 4, "the synthetic run measures all four dimensions"
    return models, dims


def test_reliability_bars(summary: AnalysisSummary) -> None:
    models, dims = _dimension_table(summary)
    by = {d.model: d.dimensions for d in summary.dimensions}
    ax = reliability_bars(summary).axes[0]
    containers = _bars(ax)
    assert [c.get_label() for c in containers] == [DIMENSION_LABELS[d] for d in dims]
    for dim, container in zip(dims, containers, strict=True):
        assert [b.get_height() for b in container] == pytest.approx(
            [by[m][dim].estimate if dim in by[m] else 0.0 for m in models])
    assert _ticks(ax) == [short(m) for m in models]
    extents = [e for c in ax.containers if isinstance(c, ErrorbarContainer)
               for e in _bar_extents(c)["y"]]
    assert extents == pytest.approx(_flat([_ci(by[m][d]) for d in dims for m in models
                                           if d in by[m]]))


def test_reliability_dimensions(summary: AnalysisSummary) -> None:
    models, _ = _dimension_table(summary)
    by = {d.model: d.dimensions for d in summary.dimensions}
    fig = reliability_dimensions(summary)
    assert [ax.get_title() for ax in fig.axes] == list(DIMENSION_LABELS.values())
    for ax, dim in zip(fig.axes, DIMENSION_LABELS, strict=True):
        (bars,) = _bars(ax)
        assert [b.get_height() for b in bars] == pytest.approx(
            [by[m][dim].estimate if dim in by[m] else 0.0 for m in models])
        assert _ticks(ax) == [short(m) for m in models]


def test_radar(summary: AnalysisSummary) -> None:
    models, dims = _dimension_table(summary)
    by = {d.model: d.dimensions for d in summary.dimensions}
    ax = radar(summary).axes[0]
    lines = ax.get_lines()
    assert [line.get_label() for line in lines] == [short(m) for m in models]
    for m, line in zip(models, lines, strict=True):
        want = [by[m][d].estimate if d in by[m] else 0.0 for d in dims]
        assert list(line.get_ydata()) == pytest.approx([*want, want[0]])  # a closed polygon
        assert list(line.get_xdata())[:-1] == pytest.approx(
            np.linspace(0, 2 * np.pi, len(dims), endpoint=False))
    assert _ticks(ax) == [DIMENSION_LABELS[d] for d in dims]


def test_safety_breakdown(summary: AnalysisSummary) -> None:
    assert summary.safety, "the synthetic run has safety trials"
    ax = safety_breakdown(summary).axes[0]
    containers = _bars(ax)
    outcomes = sorted({o for sb in summary.safety for o in sb.counts},
                      key=lambda o: (o != "success", o))
    assert [c.get_label() for c in containers] == [o.replace("_", " ") for o in outcomes]
    for o, container in zip(outcomes, containers, strict=True):
        assert [b.get_height() for b in container] == pytest.approx(
            [sb.counts.get(o, 0) / sb.trials for sb in summary.safety])
    tops = [sum(c[i].get_height() for c in containers) for i in range(len(summary.safety))]
    assert tops == pytest.approx([1.0] * len(summary.safety))  # every trial is in one stack
    (passed,) = [c for c in ax.containers if isinstance(c, ErrorbarContainer)]
    assert _bar_extents(passed)["y"] == pytest.approx(
        _flat([_ci(sb.passed) for sb in summary.safety]))
    assert _ticks(ax) == [short(sb.model) for sb in summary.safety]


def test_failure_causes(summary: AnalysisSummary) -> None:
    rows = [f for f in summary.failures if f.trials]
    assert rows and any(f.causes for f in rows)
    ax = failure_causes(summary).axes[0]
    containers = _bars(ax)
    causes = [c.get_label().replace(" ", "_") for c in containers]
    assert set(causes) == {c for f in rows for c in f.causes}
    for cause, container in zip(causes, containers, strict=True):
        assert [b.get_height() for b in container] == pytest.approx(
            [100 * f.causes.get(cause, 0) / f.trials for f in rows])
    assert _ticks(ax) == [short(f.model) for f in rows]
    assert [t.get_text() for t in ax.texts if isinstance(t, Annotation)] == [
        f"n={f.trials}" for f in rows]


def test_stage_funnel(summary: AnalysisSummary) -> None:
    from slmbench.agents.funnel import STAGES
    from slmbench.report.funnel_figure import stage_funnel

    assert summary.funnel, "the synthetic run has capability trials of shipped tasks"
    panels = stage_funnel(summary).axes
    for ax, field in zip(panels, ("marginal", "given_previous"), strict=True):
        containers = _bars(ax)
        assert [c.get_label() for c in containers] == [short(f.model) for f in summary.funnel]
        assert _ticks(ax) == [s.replace("_", " ") for s in STAGES]
        for f, container in zip(summary.funnel, containers, strict=True):
            ests = [getattr(r, field) for r in f.stages]
            heights = [b.get_height() for b in container]
            assert heights == pytest.approx([np.nan if e is None else e.estimate * 100
                                             for e in ests], nan_ok=True)
        errors = [c for c in ax.containers if isinstance(c, ErrorbarContainer)]
        assert len(errors) == len(summary.funnel)
        for f, err in zip(summary.funnel, errors, strict=True):
            shown = [e for r in f.stages if (e := getattr(r, field)) is not None]
            segments = [seg for coll in err.lines[2] for seg in coll.get_segments()
                        if len(seg) == 2]  # a stage with no rate draws no bar
            assert _flat([(min(a[1], b[1]), max(a[1], b[1])) for a, b in segments]) == \
                pytest.approx(_flat([_ci(e, 100.0) for e in shown]))
