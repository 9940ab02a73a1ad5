"""Put the small model behind the baseline.

* :func:`shortlist_rerank` - BM25 shortlists the top ``k`` options, the model re-orders the
  shortlist by log-probability, the rest keep BM25's order. Reported: the paired gain over
  BM25 alone on the same items, with a paired posterior interval
  (``stats.paired_bounded_difference``).
* :class:`Cascade` - a router an agent can call at run time: it answers with the baseline
  when the baseline is confident (the margin between its top-two scores is at least
  ``margin``, fitted on the fit split by :meth:`Cascade.fit`) and consults the model, on the
  baseline's shortlist, only when it is not.

A routing table (:class:`RoutingTable`, written by ``slmbench recommend``) says per task
whether to deploy the baseline, the model or the cascade; :meth:`Cascade.from_route` makes the
router of one route (the baseline always: margin 0; the model always: margin inf).

How the model is consulted on a shortlist, and the graded baseline a task routes on, are
:mod:`.shortlists`'; the routing table's records, :mod:`.routes`.

A task can be cascaded when it declares a graded baseline and a shortlist
(``MicroTask.graded``, ``MicroTask.restrict``): BM25 over turns (ranking) and BM25 over
functions (tools, with ``none`` scored at the fitted abstain threshold, so its argmax is the
baseline's own decision). The rule baselines of approval and memory give no graded score to
route on. Every function here is handed the task; the records keep its name.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from slmbench.core import stats
from slmbench.core.errors import ConfigError
from slmbench.microtasks.baselines import ScoredBaseline
from slmbench.microtasks.datasets.records import AnyItem, TaskName
from slmbench.microtasks.diagnostics.probes import history_conversations
from slmbench.microtasks.diagnostics.routes import Route
from slmbench.microtasks.diagnostics.shortlists import (
    Orderer,
    model_orderer,
    order,
    read_orders,
    scored_baseline,
    shortlisted,
    stored_orderer,
    top_margin,
)
from slmbench.microtasks.samples import fit_sample, select_items
from slmbench.microtasks.session import Session
from slmbench.microtasks.spec import MicroTask, item_values
from slmbench.microtasks.store import ReadCounts
from slmbench.models.base import Model
from slmbench.models.readiness import check_logprobs

# --- shortlist + re-rank ---------------------------------------------------------------------

class RerankItem(BaseModel):
    model_config = ConfigDict(frozen=True)

    item_id: str
    gold: str
    baseline: list[str]
    reranked: list[str]
    latency_s: float | None  # the baseline's time plus the model's (None: not recorded)


class Gain(BaseModel):
    """Cascade minus baseline on one metric, paired over items."""

    model_config = ConfigDict(frozen=True)

    metric: str
    baseline: float
    cascade: float
    gain: stats.Estimate


class RerankResult(BaseModel):
    model_config = ConfigDict(frozen=True)

    task: TaskName
    model: str
    k: int
    n_items: int
    gains: list[Gain]
    items: list[RerankItem]

    @property
    def top1_hits(self) -> tuple[int, int]:
        """On how many items the gold is first: in the model's re-ranked order, in BM25's."""
        return (sum(i.reranked[0] == i.gold for i in self.items),
                sum(i.baseline[0] == i.gold for i in self.items))


def rerank(orderer: Orderer, task: MicroTask, baseline: ScoredBaseline, item: AnyItem, k: int
           ) -> tuple[list[str], list[str], float | None]:
    """Baseline order, that order with its top ``k`` re-ordered by the model, and the
    model's seconds for the decision (its reading's own timing)."""
    base = order(baseline.scores(item), task.options_for(item))
    by_model = orderer(item, base[:k])
    return base, [*by_model.ranking, *base[k:]], by_model.seconds


def _check_k(k: int) -> None:
    if k < 2:
        raise ConfigError(f"a shortlist needs k >= 2 (got {k})", "use --k 2 or more")


def paired_gains(golds: Sequence[str], cascade: Sequence[Sequence[str]],
                 base: Sequence[Sequence[str]], metrics: Sequence[str]) -> list[Gain]:
    out = []
    for metric in metrics:
        c = item_values(metric, golds, cascade)  # type: ignore[arg-type]
        b = item_values(metric, golds, base)  # type: ignore[arg-type]
        out.append(Gain(metric=metric, baseline=float(b.mean()), cascade=float(c.mean()),
                        gain=stats.paired_bounded_difference(c, b)))
    return out


def shortlist_rerank(orderer: Orderer, task: MicroTask, baseline: ScoredBaseline,
                     items: Sequence[AnyItem], *, model: str, k: int = 3,
                     metrics: Sequence[str] = ("mrr", "ndcg@5", "accuracy")) -> RerankResult:
    """Re-rank the baseline's top ``k`` with the model (``orderer``; ``model`` names it) on
    every item; the paired gain over the baseline alone."""
    _check_k(k)
    rows = []
    for item in items:
        base, reranked, seconds = rerank(orderer, task, baseline, item, k)
        rows.append(RerankItem(item_id=item.id, gold=task.gold(item),
                               baseline=base, reranked=reranked, latency_s=seconds))
    gains = paired_gains([r.gold for r in rows], [r.reranked for r in rows],
                         [r.baseline for r in rows], metrics)
    return RerankResult(task=task.name, model=model, k=k, n_items=len(rows),
                        gains=gains, items=rows)


# --- the router ------------------------------------------------------------------------------

class CascadeDecision(BaseModel):
    """One routed decision: the ranking, who made it, how sure the baseline was, how long."""

    model_config = ConfigDict(frozen=True)

    ranking: list[str]
    used_model: bool
    baseline_margin: float
    latency_s: float | None  # None: the model's reading time was not recorded


class Cascade:
    """Baseline first; the small model re-ranks the baseline's top ``k`` only when the
    baseline's top-two margin is below ``margin``, on items of ``task``. ``orderer``
    consults the model (:func:`model_orderer` at run time, :func:`stored_orderer` when
    measuring from a store); ``model`` names it.

    >>> ask = model_orderer(m, ranking)                                        # doctest: +SKIP
    >>> cascade = Cascade.fit(ranking, BM25Turns(), ask, fit_items, model=m.spec)  # doctest: +SKIP
    >>> cascade.decide(item).ranking[0]                                         # doctest: +SKIP
    """

    def __init__(self, task: MicroTask, baseline: ScoredBaseline, orderer: Orderer,
                 margin: float, *, model: str, k: int = 3) -> None:
        self.task, self.baseline, self.orderer, self.margin = task, baseline, orderer, margin
        self.model, self.k = model, k

    def decide(self, item: AnyItem) -> CascadeDecision:
        """The decision on ``item``; its latency is model time only (0 where the baseline
        decides alone): the baseline's own time is not stored, so a page regenerated from the
        stores could not show the same number."""
        scores = self.baseline.scores(item)
        base = order(scores, self.task.options_for(item))
        gap = top_margin(scores)
        if gap >= self.margin:
            return CascadeDecision(ranking=base, used_model=False, baseline_margin=gap,
                                   latency_s=0.0)
        by_model = self.orderer(item, base[: self.k])
        return CascadeDecision(
            ranking=[*by_model.ranking, *base[self.k:]], used_model=True, baseline_margin=gap,
            latency_s=by_model.seconds)

    @classmethod
    def from_route(cls, route: Route, task: MicroTask, baseline: ScoredBaseline, model: Model
                   ) -> Cascade:
        """The run-time router of one routing-table route (its task must be ``task``), on
        ``task``'s graded ``baseline``, consulting ``model`` directly."""
        if route.task != task.name:
            raise ConfigError(f"the route is for {route.task}, the task is {task.name}",
                              "pass the route of the task")
        margin = {"baseline": 0.0, "model": float("inf")}.get(route.deploy, route.margin)
        if margin is None:
            raise ConfigError(f"the {route.task} cascade route names no margin",
                              "rerun slmbench recommend with --cascade")
        return cls(task, baseline, model_orderer(model, task), margin, model=model.spec,
                   k=route.k)

    @classmethod
    def fit(cls, task: MicroTask, baseline: ScoredBaseline, orderer: Orderer,
            fit_items: Sequence[AnyItem], *, model: str, k: int = 3) -> Cascade:
        """Choose ``margin`` maximising top-1 accuracy on ``fit_items`` (ties: fewer model
        calls). The model is consulted on every fit item to know what consulting it gives."""
        if not fit_items:
            raise ConfigError("fitting a cascade needs fit items", "raise --fit-limit")
        rows = []
        for item in fit_items:
            scores = baseline.scores(item)
            base = order(scores, task.options_for(item))
            gold = task.gold(item)
            by_model = orderer(item, base[:k]).ranking
            rows.append((top_margin(scores), base[0] == gold, by_model[0] == gold))
        return cls(task, baseline, orderer, best_margin(rows), model=model, k=k)


def best_margin(rows: Sequence[tuple[float, bool, bool]]) -> float:
    """The margin maximising correct answers over ``(baseline margin, baseline right, model
    right)`` rows, where items with a margin below it go to the model (ties: the lowest,
    i.e. the fewest model calls)."""
    margins = np.asarray([r[0] for r in rows], dtype=float)
    base_ok = np.asarray([r[1] for r in rows], dtype=bool)
    model_ok = np.asarray([r[2] for r in rows], dtype=bool)
    finite = sorted({float(m) for m in margins if np.isfinite(m)})
    candidates = [0.0, *(m + 1e-9 for m in finite), float("inf")]
    correct = [np.where(margins < cut, model_ok, base_ok).sum() for cut in candidates]
    return candidates[int(np.argmax(correct))]  # the first of the best: the lowest


class CascadeEval(BaseModel):
    """The router on eval items: accuracy, latency and the share of calls reaching the model.

    A decision's latency is model time: the model's log-prob reading time where it consulted
    the model (the reading's own timing, also when the reading came from a store), 0 where the
    baseline decided alone (BM25's own milliseconds are not stored, so they are not counted);
    a mean is None when some decision's time was not recorded.
    """

    model_config = ConfigDict(frozen=True)

    task: TaskName
    model: str
    k: int
    margin: float
    n_items: int
    accuracy: stats.Estimate
    baseline_accuracy: stats.Estimate
    model_share: stats.Estimate
    mean_latency_s: float | None
    mean_latency_baseline_s: float | None  # decisions the baseline answered
    mean_latency_model_s: float | None  # decisions that consulted the model
    mrr_gain: stats.Estimate  # router minus baseline alone, paired


def _mean_s(decisions: Sequence[CascadeDecision]) -> float | None:
    times = [d.latency_s for d in decisions]
    if not times or any(t is None for t in times):
        return None
    return float(np.mean(times))


def evaluate(cascade: Cascade, items: Sequence[AnyItem]) -> CascadeEval:
    decisions = [cascade.decide(i) for i in items]
    task = cascade.task
    golds = [task.gold(i) for i in items]
    base = [order(cascade.baseline.scores(i), task.options_for(i)) for i in items]
    hits = sum(d.ranking[0] == g for d, g in zip(decisions, golds, strict=True))
    base_hits = sum(b[0] == g for b, g in zip(base, golds, strict=True))
    used = [d for d in decisions if d.used_model]
    gain = paired_gains(golds, [d.ranking for d in decisions], base, ["mrr"])[0].gain
    return CascadeEval(
        task=task.name, model=cascade.model, k=cascade.k, margin=cascade.margin,
        n_items=len(items), accuracy=stats.wilson(hits, len(items)),
        baseline_accuracy=stats.wilson(base_hits, len(items)),
        model_share=stats.wilson(len(used), len(items)),
        mean_latency_s=_mean_s(decisions),
        mean_latency_baseline_s=_mean_s([d for d in decisions if not d.used_model]),
        mean_latency_model_s=_mean_s(used), mrr_gain=gain)


class CascadeReport(BaseModel):
    """Everything one ``slmbench cascade`` run measured, as written to cascade.json."""

    command: str
    created: str
    model: str
    task: TaskName
    k: int
    n_fit: int
    rerank: RerankResult
    router: CascadeEval
    notes: list[str] = Field(default_factory=list)
    read_counts: ReadCounts = Field(default_factory=ReadCounts)


def cascade_items(task: MicroTask, *, k: int = 3, turns: int | None = None,
                  history: MicroTask | None = None, limit: int | None = None,
                  fit_limit: int | None = None, seed: int = 0
                  ) -> tuple[ScoredBaseline, list[AnyItem], list[list[str]]]:
    """What a cascade reads: its baseline (fitted on the fit split), its eval then fit items
    (``limit`` and ``fit_limit`` of them, seeded; with ``turns``, widened to that many turns
    of ``history``'s conversations: the task its ``history_from`` names) and each item's
    baseline shortlist of ``k``. :func:`shortlisted` gives the reading each one is."""
    _check_k(k)  # before any reading
    pool = task.load_items()
    fit_items, eval_items = fit_sample(pool, fit_limit, seed), select_items(task, pool, limit,
                                                                            seed)
    baseline = scored_baseline(task, [i for i in pool if i.split == "fit"])
    if turns:
        fit_items, eval_items = _widened(task, history, turns, fit_items, eval_items)
    both = [*eval_items, *fit_items]
    return baseline, both, [order(baseline.scores(i), task.options_for(i))[:k] for i in both]


def _widened(task: MicroTask, history: MicroTask | None, turns: int,
             *parts: list[AnyItem]) -> tuple[list[AnyItem], ...]:
    """Each of ``parts`` widened to ``turns`` turns of ``history``'s conversations."""
    widen = task.widen
    if widen is None or history is None:
        raise ConfigError(f"micro-task {task.name!r} cannot be widened to {turns} turns "
                          f"{'' if history else '(no history task given)'}".strip(),
                          "cascade with turns a task that declares widen= (ranking)")
    convs = history_conversations(history)
    return tuple([widen(i, turns, convs) for i in part] for part in parts)  # type: ignore[misc]


def run_cascade(spec: str, task: MicroTask, *, k: int = 3, turns: int | None = None,
                history: MicroTask | None = None, limit: int | None = None,
                fit_limit: int | None = None, seed: int = 0, command: str = "",
                session: Session | None = None) -> CascadeReport:
    """Shortlist re-rank (paired gain over the graded baseline) and the router, fitted on fit
    items, the model's readings made through the session's read loop (and its store, reused
    and resumed). An eval or fit item whose reading the backend gave up on is left out of
    every number (counted in ``read_counts``, its cause in ``notes``).

    ``turns`` widens every item to that many history turns of ``history`` (the task
    ``task.history_from`` names).
    """
    check_logprobs(spec)  # the re-rank reads log-probabilities: refuse before any reading
    baseline, both, lists = cascade_items(task, k=k, turns=turns, history=history, limit=limit,
                                          fit_limit=fit_limit, seed=seed)
    session = session or Session()
    orders = read_orders(session, spec, task, both, lists)
    read = [i for i, s in zip(both, lists, strict=True)
            if shortlisted(task, i, s)[0].id in orders]
    eval_read = [i for i in read if i.split == "eval"]
    fit_read = [i for i in read if i.split == "fit"]
    if not eval_read or not fit_read:
        raise ConfigError(f"no {'eval' if not eval_read else 'fit'} item of the cascade was "
                          f"read: {'; '.join(session.notes) or 'no readings'}",
                          "fix the cause above and run the same command again")
    stored = stored_orderer(task, orders)
    rerank_result = shortlist_rerank(stored, task, baseline, eval_read, model=spec, k=k)
    router = evaluate(Cascade.fit(task, baseline, stored, fit_read, model=spec, k=k), eval_read)
    return CascadeReport(command=command, created=datetime.now(UTC).isoformat(timespec="seconds"),
                         model=spec, task=task.name, k=k, n_fit=len(fit_read),
                         rerank=rerank_result, router=router, notes=list(session.notes),
                         read_counts=session.counts)
