"""The stage funnel figure (issue #61): per configuration, the share of its capability trials
that passed each stage (left) and the share of those that reached a stage that passed it
(right), each with its task-level 95% interval, read from ``AnalysisSummary.funnel``."""

from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure

from slmbench.agents.funnel import STAGES
from slmbench.agents.summary import AnalysisSummary
from slmbench.core.stats import Estimate
from slmbench.report.plotting import error_bars, model_color, not_enough_data, scaled, short

TITLE = "Stage funnel: where the agent breaks"
LABELS = [s.replace("_", " ") for s in STAGES]


def stage_funnel(s: AnalysisSummary) -> Figure:
    """Two panels over the stages: marginal rates, and rates given the stage before."""
    if not s.funnel:
        return not_enough_data(TITLE, "no capability trials with a known task")
    fig = Figure(figsize=(10.0, 4.6), layout="constrained")
    fig.suptitle(TITLE)
    axes = fig.subplots(1, 2, sharey=True)
    width = 0.8 / len(s.funnel)
    panels = (("of all trials (marginal)", "marginal"),
              ("of the trials that passed every stage before", "given_previous"))
    for ax, (title, field) in zip(axes, panels, strict=True):
        for i, f in enumerate(s.funnel):
            rates = {r.stage: r for r in f.stages}
            ests: list[Estimate | None] = [getattr(rates[st], field) for st in STAGES]
            xs = np.arange(len(STAGES)) + (i - (len(s.funnel) - 1) / 2) * width
            ax.bar(xs, [scaled(e, 100) for e in ests], width,
                   yerr=error_bars(ests, 100), capsize=2, label=short(f.model),
                   color=model_color(s.models, f.model))
        ax.set_title(title, fontsize=10)
        ax.set_xticks(np.arange(len(STAGES)), LABELS, rotation=25, ha="right")
        ax.set_ylim(0, 105)
    axes[0].set_ylabel("trials passing the stage (%), task-level 95% CI")
    axes[0].legend(fontsize=8)
    return fig
