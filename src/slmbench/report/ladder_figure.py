"""The difficulty ladder figure (issue #61): per configuration that ran a generated level, its
success rate at each level with its task-level 95% interval, one line of markers per
configuration, and the bar a level is held at (its lower bound reaching ``summary.HOLDS_AT``);
read from ``AnalysisSummary.ladder``. A summary without a ladder has no figure (None), never a
"Not enough data" panel: the HTML report and the pages of a run without levels stay as they
were."""

from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure

from slmbench.agents.summary import HOLDS_AT, AnalysisSummary
from slmbench.core.stats import Estimate
from slmbench.report.plotting import SIZE, error_bars, model_color, scaled, short

TITLE = "Difficulty ladder: success per level"
SPREAD = 0.08  # how far apart two configurations' markers sit at one level


def level_ladder(s: AnalysisSummary) -> Figure | None:
    """Success per level, one series per configuration; None without a ladder."""
    if not s.ladder:
        return None
    fig = Figure(figsize=SIZE, layout="constrained")
    ax = fig.add_subplot()
    ax.set_title(TITLE)
    n = len(s.ladder)
    for i, lad in enumerate(s.ladder):
        ests: list[Estimate | None] = [r.rate for r in lad.levels]
        xs = np.array(lad.levels_run, dtype=float) + (i - (n - 1) / 2) * SPREAD
        held = "none" if lad.held is None else f"level {lad.held}"
        ax.errorbar(xs, [scaled(e, 100) for e in ests], yerr=error_bars(ests, 100),
                    marker="o", capsize=3, label=f"{short(lad.model)} (held: {held})",
                    color=model_color(s.models, lad.model))
    ax.axhline(100 * HOLDS_AT, color="#555555", linewidth=0.8, linestyle="--",
               label=f"held: lower bound ≥ {HOLDS_AT:.0%}")
    run = sorted({lv for lad in s.ladder for lv in lad.levels_run})
    ax.set_xticks(run, [str(lv) for lv in run])
    ax.set_xlim(run[0] - 0.5, run[-1] + 0.5)
    ax.set_ylim(0, 105)
    ax.set_xlabel("level")
    ax.set_ylabel("success (%) with task-level 95% CI")
    ax.legend(fontsize=8)
    return fig
