"""What the report figures draw equals the summary's numbers, read back from the artists
(bar heights, error-bar extents, tick labels, heatmap cells), not only that a file exists."""

from __future__ import annotations

import numpy as np
import pytest
from matplotlib.collections import LineCollection
from matplotlib.container import BarContainer

from slmbench.agents.summary import AnalysisSummary
from slmbench.agents.summary_file import read_summary
from slmbench.report import ReportFiles
from slmbench.report import figures as figs
from slmbench.report.plotting import short
from slmbench.report.reliability_figures import composite_bars, fault_heatmap, perturbation_heatmap


@pytest.fixture(scope="module")
def summary(full_report: ReportFiles) -> AnalysisSummary:
    return read_summary(full_report.summary)


def _bars(ax) -> list[BarContainer]:  # type: ignore[no-untyped-def]
    return [c for c in ax.containers if isinstance(c, BarContainer)]


def _error_extents(ax) -> list[float]:  # type: ignore[no-untyped-def]
    """low, high, low, high... of every vertical error bar on the axes, in drawing order."""
    out: list[float] = []
    for coll in ax.collections:
        if isinstance(coll, LineCollection):
            for seg in coll.get_segments():
                out += [float(min(seg[:, 1])), float(max(seg[:, 1]))]
    return out


def _flat(pairs: list[tuple[float, float]]) -> list[float]:
    return [v for pair in pairs for v in pair]


def test_composite_bars_draw_each_composite_and_its_interval(summary: AnalysisSummary) -> None:
    comp = {d.model: d.composite for d in summary.dimensions if d.composite is not None}
    assert comp, "the synthetic run must have composites"
    ax = composite_bars(summary).axes[0]
    models = sorted(comp, key=lambda m: -(comp[m].estimate or 0))
    (bars,) = _bars(ax)
    assert [b.get_height() for b in bars] == pytest.approx([comp[m].estimate for m in models])
    assert [t.get_text() for t in ax.get_xticklabels()] == [short(m) for m in models]
    assert _error_extents(ax) == pytest.approx(_flat([(comp[m].low, comp[m].high)
                                                       for m in models]))


def test_per_group_bars_draw_each_models_accuracy_per_group(summary: AnalysisSummary) -> None:
    ax = figs.per_group_accuracy(summary).axes[0]
    groups = sorted({g.group for g in summary.groups})
    models = sorted({g.model for g in summary.groups})
    cells = {(g.model, g.group): g.accuracy for g in summary.groups}
    containers = _bars(ax)
    assert [c.get_label() for c in containers] == [short(m) for m in models]
    for model, container in zip(models, containers, strict=True):
        want = [0.0 if cells.get((model, g)) is None else cells[(model, g)].estimate * 100
                for g in groups]
        assert [b.get_height() for b in container] == pytest.approx(want)
    want_ci = [(cells[(m, g)].low * 100, cells[(m, g)].high * 100) for m in models
               for g in groups if (m, g) in cells]
    assert _error_extents(ax) == pytest.approx(_flat(want_ci))


@pytest.mark.parametrize(("draw", "cells_of"), [
    (fault_heatmap, lambda s: s.faults),
    (perturbation_heatmap, lambda s: s.perturbations),
])
def test_heatmap_cells_are_the_success_rates(summary: AnalysisSummary, draw, cells_of) -> None:  # type: ignore[no-untyped-def]
    cells = cells_of(summary)
    assert cells, "the synthetic run must have these cells"
    ax = draw(summary).axes[0]
    (image,) = ax.get_images()
    grid = np.asarray(image.get_array())
    rows = [t.get_text() for t in ax.get_yticklabels()]
    cols = [t.get_text() for t in ax.get_xticklabels()]
    assert grid.shape == (len(rows), len(cols))
    for c in cells:
        i, j = rows.index(short(c.model)), cols.index(c.key.replace("_", " "))
        assert grid[i, j] == pytest.approx(c.rate.estimate)
        assert f"n={c.rate.n}" in " ".join(t.get_text() for t in ax.texts)
    assert np.count_nonzero(~np.isnan(grid)) == len(cells)  # no cell drawn without data
