"""Does precision change eligibility? The same model, the same items, several precisions.

Precisions (``--precision``):

* ``fp32`` / ``fp16`` / ``bf16`` - the weights loaded by transformers (``hf:`` backend) in
  that dtype. A GGUF source is dequantized by transformers: its "fp32" is the GGUF's own
  quantization (e.g. Q4_K_M) expanded to fp32, not the original full-precision weights.
* ``rtn4`` / ``rtn4-sym`` - 4-bit round-to-nearest, implemented here (:func:`rtn_quantize_`)
  on the fp32 torch weights: every ``nn.Linear`` except ``lm_head``; per output row, groups
  of ``GROUP_SIZE`` consecutive input weights share a scale (and, asymmetric, a zero point);
  weights are rounded to the 16-level grid and stored back dequantized (simulated
  quantization: the arithmetic stays fp32, the information is 4-bit).
* GGUF quantizations the user already has: extra ``llamacpp:`` specs, run by llama.cpp.

GPTQ and AWQ are not run in this environment: see :data:`NOT_AVAILABLE`; they run in their
own venvs through ``scripts/quantize_external.py``, whose dequantized output is read here as
an extra spec (``--gguf hf:DIR``).

Every (task, precision) cell gets its eligibility (:func:`~slmbench.microtasks.eligibility.
make_cell`); each precision is compared with the first one on the same items, paired:
McNemar on per-item correctness, the paired accuracy difference with its Jeffreys posterior
interval (``stats.paired_difference``: open even when both answer every item alike) and
TOST equivalence within ``margin`` ("no material loss").
"""

from __future__ import annotations

import gc
import os
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Literal

import torch
from pydantic import BaseModel, ConfigDict, Field
from torch import nn

from slmbench.core import stats
from slmbench.core.errors import ConfigError
from slmbench.core.paths import shown_path
from slmbench.microtasks.baselines import Baseline
from slmbench.microtasks.datasets.records import AnyItem, TaskName
from slmbench.microtasks.eligibility import EligibilityCell, make_cell
from slmbench.microtasks.prompts import FROZEN
from slmbench.microtasks.readout import ItemReading, Reading
from slmbench.microtasks.session import (
    READ_ATTEMPTS,
    Block,
    Session,
    precision_of,
    read_on,
    select_items,
)
from slmbench.microtasks.spec import MicroTask
from slmbench.microtasks.store import ReadCounts, ReadingStore
from slmbench.models.base import Model, load_model
from slmbench.models.ray import TIMEOUT_S, RayCluster, RayModelOptions, default_cpus

GROUP_SIZE = 128
BITS = 4
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


def rtn_codes(weight: torch.Tensor, *, bits: int = BITS, group_size: int = GROUP_SIZE,
              symmetric: bool = False) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Integer codes, scales and zero points of a 2-D weight, per (row, group of columns).

    Asymmetric: codes in ``[0, 2^bits - 1]``, ``w ≈ (q - zero) * scale``. Symmetric: codes
    in ``[-2^(bits-1), 2^(bits-1) - 1]``, zero = 0, scale = max|w| / (2^(bits-1) - 1).
    A last group shorter than ``group_size`` is its own group. Shapes: codes like
    ``weight``; scales and zeros ``(rows, n_groups)``.
    """
    if weight.dim() != 2:
        raise ConfigError(f"RTN needs a 2-D weight (got shape {tuple(weight.shape)})",
                          "quantize nn.Linear weights")
    rows, cols = weight.shape
    w = weight.detach().float()
    pad = (-cols) % group_size
    groups = torch.nn.functional.pad(w, (0, pad)).view(rows, -1, group_size)
    mask = torch.nn.functional.pad(torch.ones(cols), (0, pad)).view(1, -1, group_size) > 0
    big = torch.finfo(torch.float32).max
    if symmetric:
        qmax = 2 ** (bits - 1) - 1
        amax = torch.where(mask, groups.abs(), 0.0).amax(dim=-1)
        scale = torch.clamp(amax / qmax, min=1e-12)
        zero = torch.zeros_like(scale)
        q = torch.clamp(torch.round(groups / scale[..., None]), -qmax - 1, qmax)
    else:
        qmax = 2 ** bits - 1
        lo = torch.clamp(torch.where(mask, groups, big).amin(dim=-1), max=0.0)
        hi = torch.clamp(torch.where(mask, groups, -big).amax(dim=-1), min=0.0)
        scale = torch.clamp((hi - lo) / qmax, min=1e-12)
        zero = torch.clamp(torch.round(-lo / scale), 0, qmax)
        q = torch.clamp(torch.round(groups / scale[..., None]) + zero[..., None], 0, qmax)
    codes = q.view(rows, -1)[:, :cols]
    return codes, scale, zero


def rtn_dequantize(codes: torch.Tensor, scale: torch.Tensor, zero: torch.Tensor,
                   group_size: int = GROUP_SIZE) -> torch.Tensor:
    rows, cols = codes.shape
    pad = (-cols) % group_size
    q = torch.nn.functional.pad(codes, (0, pad)).view(rows, -1, group_size)
    return ((q - zero[..., None]) * scale[..., None]).view(rows, -1)[:, :cols]


def rtn_quantize_(model: nn.Module, *, bits: int = BITS, group_size: int = GROUP_SIZE,
                  symmetric: bool = False, skip: Sequence[str] = ("lm_head",)) -> RtnReport:
    """Round every ``nn.Linear`` weight (except names ending in ``skip``) in place."""
    layers, skipped, total = [], [], 0
    with torch.no_grad():
        for name, module in model.named_modules():
            if not isinstance(module, nn.Linear):
                continue
            if any(name == s or name.endswith("." + s) for s in skip):
                skipped.append(name)
                continue
            w = module.weight
            codes, scale, zero = rtn_codes(w, bits=bits, group_size=group_size,
                                           symmetric=symmetric)
            new = rtn_dequantize(codes, scale, zero, group_size).to(w.dtype)
            err = (new.float() - w.float()).abs()
            layers.append(RtnLayer(name=name, shape=(w.shape[0], w.shape[1]),
                                   max_abs_error=float(err.max()),
                                   mean_abs_error=float(err.mean())))
            total += w.numel()
            w.copy_(new)
    return RtnReport(bits=bits, group_size=group_size, symmetric=symmetric, layers=layers,
                     skipped=skipped, parameters_quantized=total)


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


# --- paired comparison ----------------------------------------------------------------------

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
    tost: stats.TostResult | None  # None when the items are too few or all identical
    eligibility_changed: bool | None  # None: no eligibility cell for one of them


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
    tost = stats.tost_paired(a, b, margin) if len(a) >= 2 else None
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


# --- the run ----------------------------------------------------------------------------------

LoadPrecision = Callable[[str, str], tuple[Model, RtnReport | None]]


def load_precision(source: str, precision: str, *, threads: int = 2
                   ) -> tuple[Model, RtnReport | None]:
    """The model at one precision: an ``hf:`` load (RTN applied in place) or a GGUF spec."""
    if kind_of(precision) == "gguf":
        return load_model(precision), None
    from slmbench.models.hf import HFModel, resolve

    directory, gguf_file = resolve(source, None)
    dtype = precision if precision in HF_PRECISIONS else "fp32"
    model = HFModel(directory, gguf_file=gguf_file, dtype=dtype, threads=threads,
                    spec=f"hf:{source}?dtype={dtype}" + ("" if dtype == precision
                                                         else f"#{precision}"))
    report = None
    if precision in RTN_PRECISIONS:
        report = rtn_quantize_(model.model, symmetric=precision.endswith("-sym"))
    return model, report


def level_label(source: str, level: str) -> str:
    """The readings' key of one level in the store (the full path: ~/m.gguf and
    /home/me/m.gguf share readings), and its model's name on Ray."""
    return f"{os.path.expanduser(source)}#{level}"


def _timed(load: Callable[[], tuple[Model, RtnReport | None]]) -> Model:
    """``load()``'s model, carrying ``load_report``: (seconds the load took, its RTN report)."""
    start = time.perf_counter()
    model, report = load()
    model.load_report = (time.perf_counter() - start, report)  # type: ignore[attr-defined]
    return model


@dataclass(frozen=True)
class PrecisionLoader:
    """Loads a level's model by its :func:`level_label` in a Ray actor (``load``, default
    :func:`load_precision`), the model carrying its ``load_report`` back to the driver."""

    source: str
    levels: tuple[str, ...]
    threads: int = 2
    load: LoadPrecision | None = None

    def __call__(self, label: str) -> Model:
        level = {level_label(self.source, lv): lv for lv in self.levels}[label]
        load = self.load or (lambda src, p: load_precision(src, p, threads=self.threads))
        return _timed(lambda: load(self.source, level))


@contextmanager
def precisions_on(executor: Literal["local", "ray"], source: str, levels: Sequence[str],
                  address: str | None = None, *, replicas: int = 1,
                  timeout_s: float | None = TIMEOUT_S, attempts: int = READ_ATTEMPTS,
                  threads: int = 2, load: LoadPrecision | None = None
                  ) -> Iterator[RayCluster | None]:
    """Where :func:`run_quantize` reads ``levels`` of ``source``: None (this process), or
    the Ray cluster of :func:`~slmbench.microtasks.session.read_on` whose replicas each load
    one level (``replicas`` of each, one at a time: a level's replicas start when its
    readings start and end after them). A torch level's replica reserves ``threads`` CPUs,
    a GGUF spec's what its size asks. ``source`` must be at the same path on every node.
    """
    labels = {level_label(source, lv): lv for lv in levels}
    placed = {label: RayModelOptions(
        replicas=replicas, timeout_s=timeout_s,
        num_cpus=default_cpus(lv) if kind_of(lv) == "gguf" else threads)
        for label, lv in labels.items()}
    with read_on(executor, list(labels), address, placed, attempts=attempts, check=False,
                 loader=PrecisionLoader(source, tuple(levels), threads, load)) as cluster:
        yield cluster


def run_quantize(source: str, precisions: Sequence[str], tasks: Sequence[MicroTask], *,
                 limit: int | None, gguf: Sequence[str] = (), seed: int = 0,
                 margin: float = 0.05, threads: int = 2, command: str = "",
                 progress: Callable[[str], None] | None = None,
                 loader: LoadPrecision | None = None, store: ReadingStore | None = None,
                 ray: RayCluster | None = None) -> QuantizationReport:
    """Read the same items at every precision; cells, paired comparisons, RTN reports.

    With a ``store``, each reading is committed as it is made (keyed :func:`level_label`)
    and stored ones are reused, so an interrupted run resumes; a level whose readings are
    all stored is not loaded, and its RTN report comes from the store. Locally, ``loader``
    loads each level (default :func:`load_precision`), and an fp32 model is rounded in place
    by an RTN level right after it. With ``ray`` (from :func:`precisions_on`, whose loader
    it uses) each level is read on its replicas, through the same read loop as locally.
    """
    load = loader or (lambda src, p: load_precision(src, p, threads=threads))
    levels = [*precisions, *gguf]
    pools = {t.name: t.load_items() for t in tasks}
    chosen = {t.name: select_items(t, pools[t.name], limit, seed) for t in tasks}
    baselines = {t.name: t.baselines([i for i in pools[t.name] if i.split == "fit"],
                                     chosen[t.name]) for t in tasks}
    readings: dict[str, list[ItemReading]] = {}
    rtn: dict[str, RtnReport] = {}
    seconds: dict[str, float] = {}
    notes = [f"{k}: not run: {v}" for k, v in NOT_AVAILABLE.items()]
    shown = shown_path(os.path.expanduser(source))  # what the report shows
    if source.endswith(".gguf") and any(kind_of(p) != "gguf" for p in precisions):
        notes.append(f"{shown} is a GGUF file: transformers dequantizes its quantized weights "
                     "to fp32, so 'fp32' here is that quantization expanded, not the "
                     "original full-precision model, and rtn4 re-quantizes it")
    session = Session(store, progress=progress, ray=ray)
    kept: Model | None = None  # an fp32 hf model, rounded in place by the rtn level after it
    for n, level in enumerate(levels):
        label = level_label(source, level)

        def record(model: Model, level: str = level, label: str = label) -> None:
            seconds[level], report = model.load_report  # type: ignore[attr-defined]
            if report is not None:
                rtn[level] = report
                if store is not None:
                    store.put_note(f"rtn:{label}", report.model_dump_json())

        def load_level(label: str, level: str = level) -> Model:
            nonlocal kept
            if kept is not None and level in RTN_PRECISIONS:
                reused = kept
                reused.spec = f"{reused.spec}#{level}"
                model = _timed(lambda: (reused, rtn_quantize_(
                    reused.model, symmetric=level.endswith("-sym"))))  # type: ignore[attr-defined]
            else:
                if kept is not None:
                    kept.close()
                model = _timed(lambda: load(source, level))
            kept = None
            return model

        blocks = [Block(t, FROZEN, chosen[t.name]) for t in tasks]
        reuse = (ray is None and level == "fp32" and n + 1 < len(levels)
                 and levels[n + 1] in RTN_PRECISIONS)
        try:  # keep an fp32 hf model open: the next level rounds these weights (no reload)
            got = session.read(label, blocks, loader=None if ray else load_level,
                               keep=lambda m, reuse=reuse: reuse and hasattr(m, "model"),
                               on_load=record)
        except BaseException:
            if kept is not None:
                kept.close()
            raise
        if got.kept is not None:
            kept = got.kept
        else:
            gc.collect()
        for block in got.blocks:
            readings[f"{level}|{block.block.task.name}"] = block.readings
        if level not in rtn and store is not None and (kept_rtn := store.note(f"rtn:{label}")):
            rtn[level] = RtnReport.model_validate_json(kept_rtn)  # measured by an earlier run
    if kept is not None:
        kept.close()
    cells, comparisons = score_readings(readings, levels, tasks, chosen, baselines,
                                        model=shown, margin=margin)
    return QuantizationReport(
        command=command, created=datetime.now(UTC).isoformat(timespec="seconds"),
        source=shown, precisions=levels, tasks=[t.name for t in tasks], limit=limit, margin=margin,
        cells=cells, comparisons=comparisons, rtn=rtn, load_seconds=seconds,
        readings=readings, notes=notes, read_counts=session.counts)


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
    return cells, comparisons


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
