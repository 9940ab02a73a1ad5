"""Precision comparisons of ``slmbench quantize``, without torch: the precisions there are,
the records a run writes (:class:`QuantizationReport`), and its statistics.

Every (task, precision) cell gets its eligibility (:func:`~slmbench.microtasks.eligibility.
make_cell`); each precision is compared with the first one on the same items, paired:
McNemar on per-item correctness, the paired accuracy difference with its Jeffreys posterior
interval (``stats.paired_difference``: open even when both answer every item alike) and
TOST equivalence within ``margin`` ("no material loss"). :func:`rescored` computes them
again from a report's stored readings (``slmbench quantize-page``). Loading and rounding the
weights is :mod:`.quantize`'s (torch).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from slmbench.core import stats
from slmbench.core.errors import ConfigError
from slmbench.microtasks.baselines import Baseline
from slmbench.microtasks.cells import EligibilityCell
from slmbench.microtasks.datasets.records import AnyItem, TaskName
from slmbench.microtasks.eligibility import make_cell
from slmbench.microtasks.readout import ItemReading, Reading
from slmbench.microtasks.spec import MicroTask
from slmbench.microtasks.store import ReadCounts
from slmbench.models.catalog import precision_of

__all__ = ["HF_PRECISIONS", "NOT_AVAILABLE", "RTN_PRECISIONS", "PrecisionComparison",
           "QuantizationReport", "RtnLayer", "RtnReport", "compare", "correct", "kind_of",
           "load_report", "parse_precisions", "rescored", "score_readings"]

HF_PRECISIONS = ("fp32", "fp16", "bf16")


RTN_PRECISIONS = ("rtn4", "rtn4-sym")


EXTERNAL = ("make quant-venvs, then scripts/quantize_external.py --method {m} (docs/diagnostics.md"
            "#quantization) and read its {m}-qdq folder with --gguf hf:OUT/{m}-qdq")


NOT_AVAILABLE: dict[str, str] = {  # not in this environment: each runs in its own venv
    "gptq": "the GPTQ implementations do not install beside the project's pins: "
            "llmcompressor 0.14.0.1 needs transformers>=5.15,<=5.17 (the project runs 5.24), "
            "gptqmodel 7.7.0 needs torch>=2.14.1 (the project pins 2.13.0); "
            + EXTERNAL.format(m="gptq"),
    "awq": "AWQ runs through auto-round 0.16.1 (AWQ scales, then RTN) in its own venv "
           "(autoawq 0.2.9 declares itself deprecated); " + EXTERNAL.format(m="awq"),
}


class RtnLayer(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    shape: tuple[int, int]
    max_abs_error: float
    mean_abs_error: float


class RtnReport(BaseModel):
    """What :func:`rtn_quantize_` changed."""

    model_config = ConfigDict(frozen=True)

    bits: int
    group_size: int
    symmetric: bool
    layers: list[RtnLayer]
    skipped: list[str]
    parameters_quantized: int

    @property
    def mean_abs_error(self) -> float:
        """The mean over its layers of each layer's mean |Δw| (0 with no layer)."""
        return sum(x.mean_abs_error for x in self.layers) / max(len(self.layers), 1)


def parse_precisions(spec: str) -> list[str]:
    """``fp32,rtn4`` -> known precision names; GPTQ/AWQ are refused with the reason."""
    names = [p.strip().lower() for p in spec.split(",") if p.strip()]
    for name in names:
        if name in NOT_AVAILABLE:
            raise ConfigError(f"{name} is not available here: {NOT_AVAILABLE[name]}",
                              "use rtn4 / rtn4-sym, or read a quantized model with --gguf SPEC")
        if name not in HF_PRECISIONS + RTN_PRECISIONS:
            raise ConfigError(f"unknown precision {name!r}",
                              f"use some of {', '.join(HF_PRECISIONS + RTN_PRECISIONS)}")
    if not names:
        raise ConfigError("no precision given", "e.g. --precision fp32,rtn4")
    return names


class PrecisionComparison(BaseModel):
    """One precision against the reference precision on the same items (per-item top-1)."""

    model_config = ConfigDict(frozen=True)

    task: TaskName
    reading: Reading
    reference: str
    precision: str
    n_items: int
    reference_accuracy: float
    accuracy: float
    difference: stats.Estimate  # precision - reference, stats.paired_difference
    mcnemar: stats.McNemarResult
    tost: stats.TostResult | None  # exact TOST on the per-item differences (None: no item)
    eligibility_changed: bool | None  # None: no eligibility cell for one of them
    # the TOST's p, Holm over every comparison of the report (None: no TOST, or a report
    # written before it): "no material loss" is a claim per comparison, so they keep α
    tost_p_holm: float | None = None

    @property
    def equivalent(self) -> bool:
        """Shown within the margin, Holm over the report's TOSTs (α 0.05)."""
        return self.tost_p_holm is not None and self.tost_p_holm < 1 - stats.CONFIDENCE


def correct(readings: Sequence[ItemReading], golds: dict[str, str], reading: Reading
            ) -> list[bool]:
    out = []
    for r in readings:
        ranking = r.ranking(reading) or []
        out.append(bool(ranking) and ranking[0] == golds[r.item_id])
    return out


def compare(task: TaskName, reading: Reading, reference: str, precision: str,
            ref_hits: Sequence[bool], hits: Sequence[bool], *, margin: float,
            ref_eligible: bool | None = None, eligible: bool | None = None
            ) -> PrecisionComparison:
    """Paired tests of ``hits`` (this precision) against ``ref_hits`` on the same items."""
    a = [float(h) for h in hits]
    b = [float(h) for h in ref_hits]
    # each item is a unit that differs by at most 1 either way: the exact TOST of per-unit
    # differences bounds the shares of items only this precision and only the reference got
    tost = stats.tost([x - y for x, y in zip(a, b, strict=True)], margin) if a else None
    e_ref, e_new = ref_eligible, eligible
    return PrecisionComparison(
        task=task, reading=reading, reference=reference, precision=precision, n_items=len(a),
        reference_accuracy=sum(b) / len(b), accuracy=sum(a) / len(a),
        difference=stats.paired_difference(hits, ref_hits), mcnemar=stats.mcnemar(hits, ref_hits),
        tost=tost,
        eligibility_changed=None if e_ref is None or e_new is None else e_ref != e_new)


class QuantizationReport(BaseModel):
    """Everything one ``slmbench quantize`` run measured."""

    command: str
    created: str
    source: str
    precisions: list[str]
    tasks: list[TaskName]
    limit: int | None
    margin: float
    cells: list[EligibilityCell]
    comparisons: list[PrecisionComparison]
    rtn: dict[str, RtnReport]
    load_seconds: dict[str, float]
    readings: dict[str, list[ItemReading]]
    notes: list[str]
    read_counts: ReadCounts = Field(default_factory=ReadCounts)


PrecisionKind = Literal["hf", "rtn", "gguf"]


def kind_of(precision: str) -> PrecisionKind:
    if precision in HF_PRECISIONS:
        return "hf"
    if precision in RTN_PRECISIONS:
        return "rtn"
    return "gguf"


def score_readings(readings: dict[str, list[ItemReading]], levels: Sequence[str],
                   tasks: Sequence[MicroTask], chosen: dict[TaskName, list[AnyItem]],
                   baselines: dict[TaskName, list[Baseline]], *, model: str,
                   margin: float) -> tuple[list[EligibilityCell], list[PrecisionComparison]]:
    """Each (task, level, reading) cell's eligibility, and each level paired against the first
    on the same items; ``readings`` keyed ``LEVEL|TASK``, ``chosen`` and ``baselines`` by
    task name, in the order of ``tasks``."""
    cells: list[EligibilityCell] = []
    comparisons: list[PrecisionComparison] = []
    for task in tasks:
        items, name = chosen[task.name], task.name
        golds = {i.id: task.gold(i) for i in items}
        gold_list = [golds[i.id] for i in items]
        base = {b.name: [b.rankings[i.id] for i in items] for b in baselines[name]}
        by_level: dict[tuple[str, Reading], EligibilityCell] = {}
        for level in levels:
            got = readings[f"{level}|{name}"]
            for reading in ("logprob", "generation"):
                ranks = [r.ranking(reading) for r in got]
                if any(r is None for r in ranks):
                    continue
                cell = make_cell(task=task, metric=task.metrics[0], model=model,
                                 precision=level if kind_of(level) != "gguf" else
                                 f"{precision_of(level)} ({level})", prompt_id="p0",
                                 reading=reading, golds=gold_list,
                                 rankings=[r or [] for r in ranks], baselines=base,
                                 format_failures=sum(r.format_failure for r in got)
                                 if reading == "generation" else 0)
                by_level[(level, reading)] = cell
                cells.append(cell)
        ref = levels[0]
        for reading in ("logprob", "generation"):
            if (ref, reading) not in by_level:
                continue
            ref_hits = correct(readings[f"{ref}|{name}"], golds, reading)
            for level in levels[1:]:
                if (level, reading) not in by_level:
                    continue
                hits = correct(readings[f"{level}|{name}"], golds, reading)
                comparisons.append(compare(
                    name, reading, ref, level, ref_hits, hits, margin=margin,
                    ref_eligible=by_level[(ref, reading)].eligible,
                    eligible=by_level[(level, reading)].eligible))
    return cells, _holm_tost(comparisons)


def _holm_tost(comparisons: list[PrecisionComparison]) -> list[PrecisionComparison]:
    """Each comparison with its TOST's p Holm-adjusted over every TOST of ``comparisons``."""
    adjusted = iter(stats.adjust_pvalues([c.tost.p_value for c in comparisons if c.tost],
                                         "holm"))
    return [c.model_copy(update={"tost_p_holm": next(adjusted)}) if c.tost else c
            for c in comparisons]


def rescored(report: QuantizationReport, tasks: Sequence[MicroTask]) -> QuantizationReport:
    """``report`` with its cells and paired comparisons computed again, by this checkout's
    statistics, from the readings it stores (the items and baselines come from the datasets
    of ``tasks``, the report's tasks in its order; no model is loaded)."""
    if [t.name for t in tasks] != report.tasks:
        raise ConfigError(f"the report is of {', '.join(report.tasks)}, not of "
                          f"{', '.join(t.name for t in tasks)}", "pass the report's tasks")
    pools = {t.name: {i.id: i for i in t.load_items()} for t in tasks}
    first = report.precisions[0]
    chosen = {t: [pools[t][r.item_id] for r in report.readings[f"{first}|{t}"]]
              for t in report.tasks}
    baselines = {t.name: t.baselines([i for i in pools[t.name].values() if i.split == "fit"],
                                     chosen[t.name]) for t in tasks}
    cells, comparisons = score_readings(report.readings, report.precisions, tasks, chosen,
                                        baselines, model=report.source, margin=report.margin)
    return report.model_copy(update={"cells": cells, "comparisons": comparisons})



def load_report(path: Path) -> QuantizationReport:
    """The report a ``slmbench quantize`` run wrote (its ``quantization.json``)."""
    if not path.is_file():
        raise ConfigError(f"{path} is not a file", "pass a quantize run's quantization.json "
                          "(slmbench quantize --out DIR writes DIR/quantization.json)")
    return QuantizationReport.model_validate_json(path.read_text(encoding="utf-8"))
