"""Part B across runtimes: does one model, served two ways, decide the same items alike?

Each runtime's readings come from one fixed-n matrix of one spec (``MatrixRun`` with a
single model) over the same items, prompts and seed. Per pair of runtimes and per (task,
prompt):

- the generation reading's decisions (the top option; a format failure is an answer of its
  own, :data:`FORMAT_FAILURE`) compared item by item: agreed share and Cohen's κ
  (``stats.decision_agreement``);
- the same for the log-prob reading's decision, and the spread of per-option log-probability
  differences (``stats.difference_spread``), only where both runtimes give log-probs
  (``llamaserver:`` gives none: then both are None, and say so);
- each cell's verdict (per reading) side by side, compared only where both cells decided;
- against the noise floor (one runtime under two settings, :func:`against_floor`): whether
  the runtimes disagree on more items than the settings do (McNemar, item by item).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence

from pydantic import BaseModel, ConfigDict

from slmbench.core import stats
from slmbench.core.errors import ConfigError
from slmbench.core.stats import Agreement, McNemarResult, Spread
from slmbench.microtasks.cells import EligibilityCell, Verdict
from slmbench.microtasks.matrix import MatrixRun
from slmbench.microtasks.readout import ItemReading, Reading

__all__ = ["FORMAT_FAILURE", "CellVerdicts", "ReadingAgreement", "against_floor",
           "readings_agreement"]

FORMAT_FAILURE = "(format failure)"
READINGS: tuple[Reading, ...] = ("generation", "logprob")


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True)


class CellVerdicts(_Frozen):
    """One (task, prompt, reading) cell's verdict on each runtime; ``same`` is None unless
    both decided (a verdict still ``undecided`` on either side is not compared)."""

    reading: Reading
    a: Verdict
    b: Verdict
    same: bool | None


class ReadingAgreement(_Frozen):
    """Runtime ``a`` against runtime ``b`` on one (task, prompt), over the items both read."""

    task: str
    prompt_id: str
    a: str
    b: str
    items: int
    decisions: Agreement  # the generation reading's top decision
    disagreed: list[str]  # ids of the items whose generation decisions differ
    logprob_decisions: Agreement | None  # None: a side gives no log-probabilities
    logprobs: Spread | None  # |lp_a − lp_b| over every option of every item both scored
    verdicts: list[CellVerdicts]
    note: str | None = None


def _decision(r: ItemReading, reading: Reading) -> str | None:
    ranked = r.ranking(reading)
    if ranked is None:
        return None
    return ranked[0] if ranked else FORMAT_FAILURE


def _single(spec: str, run: MatrixRun) -> MatrixRun:
    if run.models != [spec]:
        raise ConfigError(f"the readings of {spec} come from a matrix of {run.models}",
                          "read each runtime in a matrix of its own spec")
    if run.sequential:
        raise ConfigError(f"{spec}: its matrix was read until decided; agreement compares "
                          "every chosen item", "read the agreement matrices with --fixed-n")
    return run


def _readings(run: MatrixRun, task: str, prompt_id: str) -> dict[str, ItemReading]:
    return {r.item_id: r for r in run.readings if r.task == task and r.prompt_id == prompt_id}


def _cells(run: MatrixRun, task: str, prompt_id: str) -> dict[str, EligibilityCell]:
    return {c.reading: c for c in run.cells if c.task == task and c.prompt_id == prompt_id}


def _verdicts(a: MatrixRun, b: MatrixRun, task: str, prompt_id: str) -> list[CellVerdicts]:
    left, right = _cells(a, task, prompt_id), _cells(b, task, prompt_id)
    out = []
    for reading in [r for r in READINGS if r in left and r in right]:
        va, vb = left[reading].verdict, right[reading].verdict
        decided = "undecided" not in (va, vb)
        out.append(CellVerdicts(reading=reading, a=va, b=vb,
                                same=(va == vb) if decided else None))
    return out


def _logprob_spread(pairs: Sequence[tuple[ItemReading, ItemReading]]) -> Spread | None:
    xs: list[float] = []
    ys: list[float] = []
    for x, y in pairs:
        if x.logprobs is None or y.logprobs is None:
            return None
        for option in x.options:
            xs.append(x.logprobs[option])
            ys.append(y.logprobs[option])
    return stats.difference_spread(xs, ys) if xs else None


def _pair(a: str, run_a: MatrixRun, b: str, run_b: MatrixRun, task: str,
          prompt_id: str) -> ReadingAgreement:
    left, right = _readings(run_a, task, prompt_id), _readings(run_b, task, prompt_id)
    shared = [i for i in run_a.items.get(task, []) if i in left and i in right]
    if not shared:
        raise ConfigError(f"{a} and {b} share no item of {task} under {prompt_id}",
                          "read both runtimes on the same items (same limit and seed)")
    pairs = [(left[i], right[i]) for i in shared]
    gen = stats.decision_agreement([_decision(x, "generation") or FORMAT_FAILURE
                                    for x, _ in pairs],
                                   [_decision(y, "generation") or FORMAT_FAILURE
                                    for _, y in pairs])
    lp_a = [_decision(x, "logprob") for x, _ in pairs]
    lp_b = [_decision(y, "logprob") for _, y in pairs]
    both = all(v is not None for v in (*lp_a, *lp_b))
    return ReadingAgreement(
        task=task, prompt_id=prompt_id, a=a, b=b, items=len(shared), decisions=gen,
        disagreed=[i for i, (x, y) in zip(shared, pairs, strict=True)
                   if _decision(x, "generation") != _decision(y, "generation")],
        logprob_decisions=stats.decision_agreement(
            [v or "" for v in lp_a], [v or "" for v in lp_b]) if both else None,
        logprobs=_logprob_spread(pairs) if both else None,
        verdicts=_verdicts(run_a, run_b, task, prompt_id),
        note=None if both else "a runtime gives no log-probabilities: the generation "
                               "reading only")


def readings_agreement(runs: Mapping[str, MatrixRun]) -> list[ReadingAgreement]:
    """One :class:`ReadingAgreement` per pair of runtimes (``runs``: spec → its own fixed-n
    matrix) and per (task, prompt) both matrices hold, pairs in the mapping's order.
    ConfigError if fewer than two runtimes, a matrix is not one spec's or was read until
    decided, or a pair shares no item of a task."""
    checked = {spec: _single(spec, run) for spec, run in runs.items()}
    if len(checked) < 2:
        raise ConfigError(f"agreement needs two runtimes (got {list(runs)})",
                          "pass two or more model specs of the same model")
    out = []
    for (a, ra), (b, rb) in itertools.combinations(checked.items(), 2):
        for task in [t for t in ra.tasks if t in rb.tasks]:
            for prompt_id in [p for p in ra.prompts if p in rb.prompts]:
                out.append(_pair(a, ra, b, rb, task, prompt_id))
    return out


def against_floor(cross: ReadingAgreement, floor: ReadingAgreement,
                  items: Sequence[str]) -> McNemarResult:
    """Whether two runtimes disagree on more items than one runtime under two settings
    (``floor``, e.g. two chunkings of ``llamacpp:``) on the same task and prompt: McNemar on
    each of ``items`` (the ids both read) agreeing within the floor against agreeing across
    the runtimes (``only_a``: items the floor agrees on and the runtimes do not)."""
    if (cross.task, cross.prompt_id) != (floor.task, floor.prompt_id):
        raise ConfigError(f"the noise floor of {cross.task} · {cross.prompt_id} is read on "
                          f"{floor.task} · {floor.prompt_id}",
                          "compare a runtime pair with the floor of the same task and prompt")
    off_cross, off_floor = set(cross.disagreed), set(floor.disagreed)
    return stats.mcnemar([i not in off_floor for i in items],
                         [i not in off_cross for i in items])
