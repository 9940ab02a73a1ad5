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

This module loads and rounds the weights (torch) and reads every level through the one read
loop; the precision names, the records and the paired comparisons are
:mod:`.precisions`' (no torch).
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
from torch import nn

from slmbench.core.errors import ConfigError
from slmbench.core.paths import shown_path
from slmbench.microtasks.diagnostics.precisions import (
    HF_PRECISIONS,
    NOT_AVAILABLE,
    RTN_PRECISIONS,
    QuantizationReport,
    RtnLayer,
    RtnReport,
    kind_of,
    score_readings,
)
from slmbench.microtasks.prompts import FROZEN
from slmbench.microtasks.readout import ItemReading
from slmbench.microtasks.samples import select_items
from slmbench.microtasks.session import (
    READ_ATTEMPTS,
    Block,
    Session,
    read_on,
)
from slmbench.microtasks.spec import MicroTask
from slmbench.microtasks.store import ReadingStore
from slmbench.models.base import Model
from slmbench.models.factory import load_model
from slmbench.models.placement import TIMEOUT_S, RayModelOptions, default_cpus
from slmbench.models.ray import RayCluster

GROUP_SIZE = 128
BITS = 4






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




# --- paired comparison ----------------------------------------------------------------------













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
        source=shown, precisions=levels, tasks=[t.name for t in tasks], limit=limit,
        margin=margin,
        cells=cells, comparisons=comparisons, rtn=rtn, load_seconds=seconds,
        readings=readings, notes=notes, read_counts=session.counts)




