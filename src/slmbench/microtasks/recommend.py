"""Which decider to deploy per micro-task: the baseline, the small model, or a cascade.

:func:`recommend` reads eligibility matrices (and, for the cost, the readings store behind
them) and answers, per micro-task, on its deciding metric (the task's first):

* **model**: the configuration eligible *family-wise* (lower bound above τ, paired Δ above 0
  on the items read, not constant, and its Holm-adjusted p-value over every configuration of
  the runs at most 0.05) with the highest lower bound;
* **cascade**: no eligible configuration, but a ``slmbench cascade`` report for the task
  whose router's paired MRR gain over the baseline alone is above 0 (its lower bound; of
  several reports for a task, the one with the highest lower bound);
* **baseline** otherwise: the τ anchor, which is cheaper. A cell undecided after its full
  split is "not shown better than the baseline", so it names the baseline too.

Each recommendation carries its evidence (score, 95% interval, n) and, for a model, its
cost on the machine that measured it: median seconds and tokens per reading (one ``score``
and one greedy ``generate``), from the readings store. :meth:`Recommendation.routes` is
the routing table :class:`~slmbench.microtasks.diagnostics.cascade.Cascade` loads.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from slmbench.core import stats
from slmbench.core.errors import ConfigError
from slmbench.microtasks.cells import EligibilityCell
from slmbench.microtasks.diagnostics.cascade import CascadeReport
from slmbench.microtasks.diagnostics.routes import Route, RoutingTable
from slmbench.microtasks.matrix import MatrixRun, family_runs
from slmbench.microtasks.store import ReadingStore

__all__ = ["Cost", "Recommendation", "TaskRecommendation", "load_cascades", "load_matrices",
           "recommend", "write_routes"]

_HINT = ("pass an `slmbench eligibility --out` folder, its eligibility.json, or a study's "
         "eligibility.json")


class Cost(BaseModel):
    """Median cost of one model reading, from the readings store (None: not recorded)."""

    model_config = ConfigDict(frozen=True)

    readings: int
    median_seconds: float | None
    median_tokens: float | None


class TaskRecommendation(BaseModel):
    """What to deploy for one micro-task, and why."""

    model_config = ConfigDict(frozen=True)

    task: str
    metric: str
    deploy: Literal["baseline", "model", "cascade"]
    baseline: str
    baseline_score: float
    baseline_interval: stats.Estimate | None  # τ with its interval (None: a matrix too old)
    n_items: int  # items τ was set on
    model: str | None = None
    prompt_id: str | None = None
    reading: Literal["generation", "logprob"] | None = None
    score: stats.Estimate | None = None
    diff: stats.Estimate | None = None  # model - baseline, paired
    cost: Cost | None = None
    margin: float | None = None
    model_share: stats.Estimate | None = None  # cascade: share of calls reaching the model
    why: str
    cells: int  # configurations considered
    eligible_cells: int  # eligible cell by cell
    family_eligible_cells: int = 0  # eligible family-wise (Holm over the runs' configurations)
    family: int | None = None  # configurations in the family-wise correction
    p_holm: float | None = None  # the deployed model's Holm-adjusted p-value


class Recommendation(BaseModel):
    """Every task's recommendation; ``routes()`` is the routing table."""

    model_config = ConfigDict(frozen=True)

    tasks: list[TaskRecommendation]
    command: str = ""

    def routes(self) -> RoutingTable:
        return RoutingTable(command=self.command, routes=[
            Route(task=t.task, deploy=t.deploy, baseline=t.baseline, model=t.model,
                  prompt_id=t.prompt_id, reading=t.reading, margin=t.margin)
            for t in self.tasks])


def load_matrices(path: Path) -> tuple[list[MatrixRun], Path | None]:
    """The matrices at ``path`` (an eligibility ``--out`` folder, its ``eligibility.json``,
    or a JSON list of matrices) and the readings store beside them, if there is one."""
    file = path / "eligibility.json" if path.is_dir() else path
    if not file.is_file():
        raise ConfigError(f"{path} holds no eligibility.json", _HINT)
    try:
        raw = json.loads(file.read_text(encoding="utf-8"))
        runs = [MatrixRun.model_validate(r) for r in (raw if isinstance(raw, list) else [raw])]
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(x) for x in err["loc"])
        raise ConfigError(f"{file} is not an eligibility matrix: {where}: {err['msg']}",
                          _HINT + " (one written before the cell format changed: rerun "
                          "`slmbench eligibility` on its readings store)") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{file} is not an eligibility matrix: {str(exc).splitlines()[0]}",
                          _HINT) from None
    store = file.parent / "readings.sqlite"
    return runs, store if store.is_file() else None


def load_cascades(paths: Sequence[Path]) -> list[CascadeReport]:
    """The cascade reports (``slmbench cascade``'s ``cascade.json``) at ``paths``."""
    return [CascadeReport.model_validate_json(p.read_text(encoding="utf-8")) for p in paths]


def write_routes(rec: Recommendation, path: Path) -> Path:
    """Write the routing table of ``rec`` (:meth:`Recommendation.routes`) to ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(rec.routes().model_dump_json(indent=1), encoding="utf-8")
    return path


def _cost(store: ReadingStore | None, cell: EligibilityCell) -> Cost | None:
    if store is None:
        return None
    rows = [r["raw"] for r in store.rows()
            if (r["model"], r["task"], r["prompt_id"]) == (cell.model, cell.task, cell.prompt_id)]
    seconds = [float(r["seconds"]) for r in rows if r.get("seconds")]
    tokens = [float(r["tokens"]) for r in rows if r.get("tokens") is not None]
    return Cost(readings=len(rows),
                median_seconds=statistics.median(seconds) if seconds else None,
                median_tokens=statistics.median(tokens) if tokens else None)


def _for_task(task: str, cells: list[EligibilityCell], store: ReadingStore | None,
              cascade: CascadeReport | None) -> TaskRecommendation:
    ofs = [c for c in cells if c.task == task]
    if not ofs:
        raise ConfigError(f"no {task} cell in the matrices", _HINT)
    metric = ofs[0].metric  # cells come in the task's metric order: the first decides
    mine = [c for c in ofs if c.metric == metric]
    ref = max(mine, key=lambda c: c.n_split or c.n_items)  # τ set on the most items
    n_tau = ref.n_split or ref.n_items
    base_ci = ref.tau_interval or (stats.wilson(round(ref.tau * n_tau), n_tau)
                                   if metric == "accuracy" else None)
    common = dict(task=task, metric=metric, baseline=ref.tau_anchor, baseline_score=ref.tau,
                  baseline_interval=base_ci, n_items=n_tau, cells=len(mine),
                  eligible_cells=sum(c.eligible for c in mine),
                  family_eligible_cells=sum(bool(c.family_eligible) for c in mine),
                  family=mine[0].family)
    good = [c for c in mine if c.family_eligible]
    if good:
        best = max(good, key=lambda c: c.score.low or 0.0)
        return TaskRecommendation(
            **common, deploy="model", model=best.model, prompt_id=best.prompt_id,
            reading=best.reading, score=best.score, diff=best.diff, cost=_cost(store, best),
            p_holm=best.p_holm,
            why=f"eligible family-wise: its {best.interval_label} lower bound beats τ, it beats "
                f"{best.tau_anchor} on the {best.n_items} items read, and it survives Holm over "
                f"{best.family} configurations")
    if cascade is not None and cascade.task == task and (
            cascade.router.mrr_gain.low is not None and cascade.router.mrr_gain.low > 0):
        return TaskRecommendation(
            **common, deploy="cascade", model=cascade.model, prompt_id="p0", reading="logprob",
            score=cascade.router.accuracy, diff=cascade.router.mrr_gain,
            margin=cascade.router.margin, model_share=cascade.router.model_share,
            why="no eligible configuration, but the cascade (baseline first, the model on the "
                "uncertain share) beats the baseline alone on the same items (paired MRR)")
    undecided = sum(c.verdict == "undecided" and not c.constant for c in mine)  # as the pages
    lone = sum(c.eligible for c in mine)  # eligible cell by cell, not after Holm
    short_of = sum(c.eligible and c.stop_rule_met is False and c.n_split is not None
                   and c.n_items < c.n_split for c in mine)  # read stopped before its stop
    why = ("no configuration is shown better than the baseline"
           + (f" family-wise ({lone} eligible cell by cell, none after Holm over "
              f"{mine[0].family} configurations" + (
                  f"; {short_of} not read to the family-wise stop: reading on could settle "
                  "them" if short_of else "") + ")" if lone else "")
           + (f" ({undecided} undecided: not shown better, so the cheaper baseline)"
              if undecided else ""))
    return TaskRecommendation(**common, deploy="baseline", why=why)


def _low(c: CascadeReport) -> float:
    """The lower bound of a cascade router's paired MRR gain (-inf: none)."""
    low = c.router.mrr_gain.low
    return float("-inf") if low is None else low


def recommend(runs: Sequence[MatrixRun], *, store: ReadingStore | None = None,
              cascades: Sequence[CascadeReport] = (), command: str = "") -> Recommendation:
    """Per micro-task in ``runs``: baseline, model or cascade, with evidence and cost."""
    if not any(r.cells for r in runs):
        raise ConfigError("there is no eligibility cell to recommend from (no Part B matrix, "
                          "or every model's readings incomplete)", _HINT)
    cells = [c for r in family_runs(runs) for c in r.cells]  # Holm over every cell given
    names = list(dict.fromkeys(t for r in runs for t in r.tasks))
    by_task: dict[str, CascadeReport] = {}  # per task, the cascade with the best lower bound
    for c in cascades:
        held = by_task.get(c.task)
        if held is None or _low(c) > _low(held):
            by_task[c.task] = c
    return Recommendation(command=command, tasks=[
        _for_task(t, cells, store, by_task.get(t)) for t in names])
