"""All 17 figures are written as PDF and PNG, with or without the data they need."""

from __future__ import annotations

import matplotlib.image as mpimg
import numpy as np
import pytest
from synthetic_run import MODELS

from slmbench.agents.summary_file import read_summary
from slmbench.report import FIGURES, ReportFiles
from slmbench.report import figures as figs
from slmbench.report.plotting import short
from slmbench.report.reliability_figures import (
    capability_vs_reliability,
    composite_bars,
    failure_causes,
    radar,
    reliability_dimensions,
)

STUDY = {"accuracy_vs_params", "accuracy_vs_temperature", "capability_vs_reliability",
         "composite_bars", "composite_vs_params", "cost_vs_reliability", "failure_causes",
         "fault_heatmap",
         "latency_vs_accuracy", "per_group_accuracy", "perturbation_heatmap",
         "reliability_bars", "reliability_dimensions", "radar", "safety_breakdown",
         "stage_funnel", "temperature_sensitivity"}


def _texts(fig) -> str:  # type: ignore[no-untyped-def]
    return " ".join(t.get_text() for ax in fig.axes for t in ax.texts)


@pytest.mark.parametrize("which", ["full_report", "sparse_report"])
def test_all_fifteen_figures_written_as_pdf_and_png(which: str, request) -> None:  # type: ignore[no-untyped-def]
    files: ReportFiles = request.getfixturevalue(which)
    assert set(files.figures) == set(FIGURES) == STUDY
    for pdf, png in files.figures.values():
        assert pdf.read_bytes()[:5] == b"%PDF-" and pdf.stat().st_size > 1000
        img = mpimg.imread(png)
        assert img.shape[0] > 300 and img.shape[1] > 500
        assert np.ptp(img[..., :3]) > 0.5  # something is drawn, not a blank canvas


def test_full_run_draws_data_with_intervals(full_report: ReportFiles) -> None:
    s = read_summary(full_report.summary)
    for name, fn in FIGURES.items():
        assert "Not enough data" not in _texts(fn(s)), name
    fig = figs.accuracy_vs_params(s)
    bars = [c for c in fig.axes[0].containers]
    assert len(bars) == len(MODELS)  # one errorbar container per model
    for container in bars:  # the error bar spans the Wilson interval of that model
        acc = next(a for a in s.accuracy if short(a.model) == container.get_label())
        segs = container.lines[2][0].get_segments()
        (_, y0), (_, y1) = segs[0]
        assert (y0, y1) == pytest.approx((acc.accuracy.low * 100, acc.accuracy.high * 100))


def test_sparse_run_gets_readable_not_enough_data_panels(sparse_report: ReportFiles) -> None:
    s = read_summary(sparse_report.summary)
    expected_empty = {"accuracy_vs_params": "known size", "accuracy_vs_temperature":
                      "one temperature", "temperature_sensitivity": "one temperature",
                      "composite_bars": "reliability", "radar": "dimensions",
                      "fault_heatmap": "fault", "perturbation_heatmap": "robustness",
                      "safety_breakdown": "safety", "reliability_bars": "reliability"}
    for name, reason in expected_empty.items():
        text = _texts(FIGURES[name](s))
        assert "Not enough data" in text and reason in text, name
    assert "Not enough data" not in _texts(figs.per_group_accuracy(s))
    assert "Not enough data" not in _texts(figs.latency_vs_accuracy(s))


def test_short_labels() -> None:
    assert short("ollama:qwen3:4b") == "qwen3:4b"
    assert short("llamacpp:/root/m/qwen2.5-coder-0.5b.gguf") == "qwen2.5-coder-0.5b"
    assert short("openai:qwen2.5-7b@http://127.0.0.1:8080/v1") == "qwen2.5-7b"
    # two configurations of one model are two labels, as they are two rows of the tables
    assert short("llamacpp:qwen2.5-coder-0.5b?n_ctx=8192") == "qwen2.5-coder-0.5b?n_ctx=8192"
    assert (short("llamacpp:/m/qwen2.5-coder-0.5b.gguf (all tools)")
            == "qwen2.5-coder-0.5b (all tools)")


def test_failure_causes_stack_each_models_failing_trials(full_report: ReportFiles) -> None:
    s = read_summary(full_report.summary)
    fig = failure_causes(s)
    heights: dict[int, float] = {}
    for container in fig.axes[0].containers:
        for i, bar in enumerate(container):
            heights[i] = heights.get(i, 0.0) + bar.get_height()
    rows = [f for f in s.failures if f.trials]
    for i, f in enumerate(rows):
        assert 0 < heights[i] == pytest.approx(100 * sum(f.causes.values()) / f.trials)


def test_figures_that_compare_models_say_so_for_one_model() -> None:
    from synthetic_run import make_trials

    from slmbench.agents.analysis import analyze

    s = analyze(make_trials({"ollama:solo-1b": (1.0, 0.9)}, temperatures=(0.7,)),
                params={"ollama:solo-1b": 1.0})
    assert s.dimensions  # it has a composite: the panels are empty for want of models only
    for name in ("accuracy_vs_params", "composite_vs_params", "latency_vs_accuracy",
                 "capability_vs_reliability", "cost_vs_reliability"):
        text = _texts(FIGURES[name](s))
        assert "it needs two or more; this run has solo-1b only" in text, name
        assert not any(ax.containers for ax in FIGURES[name](s).axes), name  # no lone point
    assert "Not enough data" not in _texts(composite_bars(s))  # bars of one still read


def test_labels_of_models_that_score_alike_do_not_cover_each_other() -> None:
    """Two models with the same trials sit on one point: each label gets its own line."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from synthetic_run import PARAMS, make_trials

    from slmbench.agents.analysis import analyze

    alpha = {"ollama:alpha-0.5b": MODELS["ollama:alpha-0.5b"]}
    trials = make_trials(alpha)
    twin = [t.model_copy(update={"model": "ollama:alpha-twin"}) for t in trials]
    s = analyze([*trials, *twin], params={**PARAMS, "ollama:alpha-twin": 0.5})
    for draw in (capability_vs_reliability, figs.latency_vs_accuracy,
                 figs.accuracy_vs_params):
        fig = draw(s)
        FigureCanvasAgg(fig).draw()
        renderer = fig.canvas.get_renderer()
        boxes = [t.get_window_extent(renderer) for ax in fig.axes for t in ax.texts
                 if t.get_text() in ("alpha-0.5b", "alpha-twin")]
        assert len(boxes) == 2, draw.__name__
        assert not boxes[0].overlaps(boxes[1]), draw.__name__


def test_a_dimension_a_model_is_not_measurable_on_is_drawn_as_such_never_as_zero() -> None:
    """The weak model solves too few base tasks: its robustness bar is absent and labelled
    not measurable, and the radar leaves it out rather than drawing a 0."""
    from synthetic_run import make_trials

    from slmbench.agents.analysis import analyze

    s = analyze(make_trials({"ollama:weak-1b": (1.0, 0.15), "ollama:good-7b": (7.0, 0.9)},
                            temperatures=(0.7,)),
                params={"ollama:weak-1b": 1.0, "ollama:good-7b": 7.0})
    weak = next(d for d in s.dimensions if d.model == "ollama:weak-1b")
    assert "robustness" in weak.not_measurable
    panels = reliability_dimensions(s).axes
    robustness = next(ax for ax in panels if ax.get_title() == "Robustness")
    assert "not\nmeasurable" in [t.get_text() for t in robustness.texts]
    polar = radar(s).axes[0]
    assert [t.get_text() for t in polar.get_legend().get_texts()] == ["good-7b"]
