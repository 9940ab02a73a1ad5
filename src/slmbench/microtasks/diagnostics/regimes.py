"""Name why a (task, model) cell fails: four failure regimes with written, testable rules.

The rules (docs/diagnostics.md states them for readers) are applied in this order; the
first that holds names the cell, and every rule that holds is listed in ``flags``:

0. ``eligible`` - not a failure: the frozen setting (greedy generation, parsed; the log-prob
   reading when no generation was made) has its 95% lower bound above τ.
1. ``format_failure`` - more than ``FORMAT_FAILURE_BOUND`` of the generations name no
   option: the replies cannot be parsed, so the decision is not even wrong.
2. ``threshold_fixable`` - the log-prob scores separate the classes (AUC lower bound above
   ``CHANCE_AUC``) and the offsets fitted on the fit split make the eval cell eligible.
3. ``label_bias`` - near-constant answers: at least ``BIAS_BOUND`` of the default log-prob
   decisions are the same label (approval, memory), the same position (ranking, tools) or
   ``none`` (tools).
4. ``capability_deficit`` - everything else: even the best fit-split threshold does not
   beat τ. ``separation`` says whether its AUC interval includes chance (``chance``), its
   lower bound is within ``NEAR_CHANCE`` of it (``near chance``) or above that.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from slmbench.microtasks.cells import EligibilityCell
from slmbench.microtasks.datasets.records import TaskName
from slmbench.microtasks.diagnostics.thresholds import DiagnosticCell

RegimeName = Literal["eligible", "format_failure", "threshold_fixable", "label_bias",
                     "capability_deficit"]
REGIMES: tuple[RegimeName, ...] = ("eligible", "format_failure", "threshold_fixable",
                                   "label_bias", "capability_deficit")
FORMAT_FAILURE_BOUND = 0.20
BIAS_BOUND = 0.90
CHANCE_AUC = 0.5
NEAR_CHANCE = 0.05
Separation = Literal["chance", "near chance", "above chance", "undefined"]


class Regime(BaseModel):
    """The regime a cell falls in, why, and every other rule that also holds."""

    model_config = ConfigDict(frozen=True)

    task: TaskName
    model: str
    regime: RegimeName
    reason: str
    flags: list[RegimeName]  # later failure rules that also hold (empty when eligible)
    separation: Separation


def separation(cell: DiagnosticCell) -> Separation:
    low, high = cell.auc.low, cell.auc.high
    if low is None or high is None:
        return "undefined"
    if low <= CHANCE_AUC <= high:
        return "chance"
    if low <= CHANCE_AUC + NEAR_CHANCE:
        return "near chance"
    return "above chance"


def _frozen_eligible(cell: DiagnosticCell) -> bool:
    return (cell.generation or cell.default).eligible


def _format_rate(cell: DiagnosticCell) -> float | None:
    return None if cell.format_failure_rate is None else cell.format_failure_rate.estimate


def rules(cell: DiagnosticCell) -> dict[RegimeName, bool]:
    """Which rule holds for a cell, in precedence order."""
    rate = _format_rate(cell)
    auc_low = cell.auc.low
    return {
        "eligible": _frozen_eligible(cell),
        "format_failure": rate is not None and rate > FORMAT_FAILURE_BOUND,
        "threshold_fixable": (auc_low is not None and auc_low > CHANCE_AUC
                              and cell.tuned.eligible),
        "label_bias": cell.majority_share >= BIAS_BOUND,
        "capability_deficit": True,
    }


def _low(cell: EligibilityCell) -> str:
    return "undefined" if cell.score.low is None else f"{cell.score.low:.3f}"


def _reason(name: RegimeName, cell: DiagnosticCell, sep: Separation) -> str:
    frozen = cell.generation or cell.default
    tau = f"τ={frozen.tau_text}"
    auc = cell.auc
    auc_text = f"AUC {auc.formatted(percent=False, digits=3, missing='undefined')}"
    if name == "eligible":
        return (f"{frozen.reading} {frozen.metric} lower bound {_low(frozen)} > {tau}")
    if name == "format_failure":
        return (f"{_format_rate(cell):.0%} of replies name no option "
                f"(bound {FORMAT_FAILURE_BOUND:.0%})")
    if name == "threshold_fixable":
        return (f"{auc_text}; re-thresholded {cell.tuned.metric} lower bound "
                f"{_low(cell.tuned)} > {tau} (default {_low(cell.default)})")
    if name == "label_bias":
        return (f"{cell.majority_share:.0%} of decisions are {cell.majority_decision!r} "
                f"(bound {BIAS_BOUND:.0%}); {auc_text}")
    return (f"{auc_text} ({sep}); best fit-split threshold gives lower bound "
            f"{_low(cell.tuned)} <= {tau}")


def classify(cell: DiagnosticCell) -> Regime:
    """The first rule (in precedence order) that holds names the cell."""
    held = [name for name, ok in rules(cell).items() if ok]
    sep = separation(cell)
    name = held[0]
    flags = [] if name == "eligible" else [n for n in held[1:] if n != "capability_deficit"]
    return Regime(task=cell.task, model=cell.model, regime=name, reason=_reason(name, cell, sep),
                  flags=flags, separation=sep)
