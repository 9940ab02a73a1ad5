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

How the model is consulted (an :data:`Orderer`): the shortlisted item (only the kept options,
stored under the id ``<item>|<kept options>``) is read as any micro-task item is, prompt p0, each
option's log-probability summed over its surface forms. When measuring, every shortlist is
read first through the one read loop (:func:`read_orders`: :meth:`Session.read`, its store
and Ray cluster), then looked up (:func:`stored_orderer`); the run-time router asks the model
itself the same way, scoring only (:func:`model_orderer`).

Baselines with graded scores: BM25 over turns (ranking) and BM25 over functions (tools,
with ``none`` scored at the fitted abstain threshold, so its argmax is the baseline's own
decision). The rule baselines of approval and memory give no graded score to route on.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal, Protocol

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from slmbench.core import stats
from slmbench.core.errors import ConfigError
from slmbench.microtasks import tasks as registry
from slmbench.microtasks.baselines import bm25_scores, fit_none_threshold, tool_docs
from slmbench.microtasks.datasets.records import AnyItem, RankItem, TaskName, ToolItem
from slmbench.microtasks.diagnostics.probes import conversations, widen_ranking
from slmbench.microtasks.eligibility import item_values
from slmbench.microtasks.readout import logprob_ranking
from slmbench.microtasks.session import Block, Session, fit_sample, select_items
from slmbench.microtasks.store import ReadCounts
from slmbench.models.base import Model
from slmbench.models.readiness import check_logprobs


class ScoredBaseline(Protocol):
    """A baseline that scores every option of an item (higher is better)."""

    name: str
    task: TaskName

    def scores(self, item: AnyItem) -> dict[str, float]: ...


class BM25Turns:
    """BM25 of the question against each shown turn; options are turn numbers."""

    name = "bm25"
    task: TaskName = "ranking"

    def scores(self, item: AnyItem) -> dict[str, float]:
        assert isinstance(item, RankItem)
        values = bm25_scores(item.query, list(item.turns))
        return {str(k + 1): float(v) for k, v in enumerate(values)}


class BM25Functions:
    """BM25 of the request against each function; ``none`` scores the abstain threshold."""

    name = "bm25"
    task: TaskName = "tools"

    def __init__(self, none_threshold: float) -> None:
        self.none_threshold = none_threshold

    @classmethod
    def fit(cls, fit_items: Sequence[ToolItem]) -> BM25Functions:
        return cls(fit_none_threshold(fit_items))

    def scores(self, item: AnyItem) -> dict[str, float]:
        assert isinstance(item, ToolItem)
        values = bm25_scores(item.request, tool_docs(item))
        out = {f.name: float(v) for f, v in zip(item.functions, values, strict=True)}
        return {**out, "none": self.none_threshold}


def scored_baseline(task: TaskName, fit_items: Sequence[AnyItem]) -> ScoredBaseline:
    """The graded baseline a cascade routes ``task`` on (fitted on ``fit_items``)."""
    if task == "ranking":
        return BM25Turns()
    if task == "tools":
        return BM25Functions.fit(fit_items)  # type: ignore[arg-type]
    raise ConfigError(f"no graded baseline score to route {task} on", "cascade ranking or tools")


def order(scores: dict[str, float], options: Sequence[str]) -> list[str]:
    """Options by score, best first (ties: the order of ``options``)."""
    return sorted(options, key=lambda o: (-scores[o], list(options).index(o)))


def top_margin(scores: dict[str, float]) -> float:
    """Score gap between the best and second-best option (inf with one option)."""
    top = sorted(scores.values(), reverse=True)
    return float("inf") if len(top) < 2 else top[0] - top[1]


def restrict(item: AnyItem, keep: Sequence[str]) -> tuple[AnyItem, list[str]]:
    """The item showing only the ``keep`` options (in their original order) and the map from
    the restricted item's options back to the original ones."""
    options = registry.get(_task_of(item)).options_for(item)
    kept = [o for o in options if o in set(keep)]
    if isinstance(item, RankItem):
        idx = [int(o) - 1 for o in kept]
        gold = idx.index(item.gold) if item.gold in idx else 0
        sub = item.model_copy(update={"turns": tuple(item.turns[i] for i in idx), "gold": gold})
        return sub, kept
    if isinstance(item, ToolItem):
        funcs = tuple(f for f in item.functions if f.name in set(kept))
        if not funcs:  # the shortlist is only "none": nothing for the model to choose
            return item, options
        sub_t = item.model_copy(update={"functions": funcs})
        return sub_t, registry.get("tools").options_for(sub_t)
    raise ConfigError(f"{type(item).__name__} has no shortlist to restrict",
                      "cascades route ranking and tools items")


# --- the model's order of a shortlist --------------------------------------------------------

class ModelOrder(BaseModel):
    """The model's order of one item's shortlist (original option names, best first) and
    the seconds its log-prob reading took (None: the stored reading predates that timing)."""

    model_config = ConfigDict(frozen=True)

    ranking: list[str]
    seconds: float | None


#: the model's order of ``item``'s shortlist: how the re-rank and the router consult it
Orderer = Callable[[AnyItem, Sequence[str]], ModelOrder]


def shortlisted(item: AnyItem, shortlist: Sequence[str]) -> tuple[AnyItem, list[str]]:
    """:func:`restrict`, with the item id ``<id>|<kept options>``: the id its reading is
    stored under, so each shortlist of an item is its own stored reading."""
    sub, back = restrict(item, shortlist)
    return sub.model_copy(update={"id": f"{item.id}|{'/'.join(back)}"}), back


def model_orderer(model: Model) -> Orderer:
    """At run time: the model's log-prob order of a shortlist, read as a stored reading
    reads it (prompt p0, surface forms summed; :func:`~slmbench.microtasks.readout.
    logprob_ranking`), without a store and without generating."""

    def ask(item: AnyItem, shortlist: Sequence[str]) -> ModelOrder:
        task = _task_of(item)
        sub, back = shortlisted(item, shortlist)
        ranked, seconds = logprob_ranking(model, task, "p0", sub)
        options = registry.get(task).options_for(sub)
        return ModelOrder(ranking=[back[options.index(o)] for o in ranked], seconds=seconds)

    return ask


def read_orders(session: Session, spec: str, items: Sequence[AnyItem],
                shortlists: Sequence[Sequence[str]]) -> dict[str, ModelOrder]:
    """The model's order of each item's shortlist, read through the session's read loop
    (:meth:`Session.read`: its store reused and resumed, its Ray cluster if any) as one
    block under prompt p0, keyed by the shortlisted item's id (:func:`shortlisted`).

    An item whose reading the backend gave up on is missing from the result (the session
    counts and notes it). Raises ConfigError when the backend gives no log-probabilities:
    the cascade re-ranks by them.
    """
    subs: dict[str, tuple[AnyItem, list[str]]] = {}
    for item, shortlist in zip(items, shortlists, strict=True):
        sub, back = shortlisted(item, shortlist)
        subs.setdefault(sub.id, (sub, back))
    if not subs:
        return {}
    task = _task_of(next(iter(subs.values()))[0])
    (got,) = session.read(spec, [Block(task=task, prompt_id="p0",
                                       items=[s for s, _ in subs.values()])]).blocks
    out = {}
    for sub, reading in zip(got.items, got.readings, strict=True):
        if reading.logprob_ranking is None:
            raise ConfigError(f"{spec} gives no log-probabilities: the cascade re-ranks the "
                              "shortlist by them", "run the cascade on a llamacpp: or hf: model")
        back = subs[sub.id][1]
        out[sub.id] = ModelOrder(ranking=[back[reading.options.index(o)]
                                          for o in reading.logprob_ranking],
                                 seconds=reading.score_seconds)
    return out


def stored_orderer(orders: Mapping[str, ModelOrder]) -> Orderer:
    """The orders :func:`read_orders` read, looked up (KeyError: that shortlist was not read)."""
    return lambda item, shortlist: orders[shortlisted(item, shortlist)[0].id]


def _task_of(item: AnyItem) -> TaskName:
    return "ranking" if isinstance(item, RankItem) else "tools"


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


def rerank(orderer: Orderer, baseline: ScoredBaseline, item: AnyItem, k: int
           ) -> tuple[list[str], list[str], float | None]:
    """Baseline order, that order with its top ``k`` re-ordered by the model, and the
    seconds the decision took (the baseline's, timed now, plus the model's reading)."""
    start = time.perf_counter()
    scores = baseline.scores(item)
    base = order(scores, registry.get(baseline.task).options_for(item))
    baseline_s = time.perf_counter() - start
    by_model = orderer(item, base[:k])
    seconds = None if by_model.seconds is None else baseline_s + by_model.seconds
    return base, [*by_model.ranking, *base[k:]], seconds


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


def shortlist_rerank(orderer: Orderer, baseline: ScoredBaseline, items: Sequence[AnyItem], *,
                     model: str, k: int = 3,
                     metrics: Sequence[str] = ("mrr", "ndcg@5", "accuracy")) -> RerankResult:
    """Re-rank the baseline's top ``k`` with the model (``orderer``; ``model`` names it) on
    every item; the paired gain over the baseline alone."""
    _check_k(k)
    rows = []
    for item in items:
        base, reranked, seconds = rerank(orderer, baseline, item, k)
        rows.append(RerankItem(item_id=item.id, gold=registry.get(baseline.task).gold(item),
                               baseline=base, reranked=reranked, latency_s=seconds))
    gains = paired_gains([r.gold for r in rows], [r.reranked for r in rows],
                         [r.baseline for r in rows], metrics)
    return RerankResult(task=baseline.task, model=model, k=k, n_items=len(rows),
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
    baseline's top-two margin is below ``margin``. ``orderer`` consults the model
    (:func:`model_orderer` at run time, :func:`stored_orderer` when measuring from a
    store); ``model`` names it.

    >>> ask = model_orderer(m)                                          # doctest: +SKIP
    >>> cascade = Cascade.fit(BM25Turns(), ask, fit_items, model=m.spec)  # doctest: +SKIP
    >>> cascade.decide(item).ranking[0]                                  # doctest: +SKIP
    """

    def __init__(self, baseline: ScoredBaseline, orderer: Orderer, margin: float, *,
                 model: str, k: int = 3) -> None:
        self.baseline, self.orderer, self.margin = baseline, orderer, margin
        self.model, self.k = model, k

    def decide(self, item: AnyItem) -> CascadeDecision:
        start = time.perf_counter()
        scores = self.baseline.scores(item)
        options = registry.get(self.baseline.task).options_for(item)
        base = order(scores, options)
        gap = top_margin(scores)
        baseline_s = time.perf_counter() - start
        if gap >= self.margin:
            return CascadeDecision(ranking=base, used_model=False, baseline_margin=gap,
                                   latency_s=baseline_s)
        by_model = self.orderer(item, base[: self.k])
        return CascadeDecision(
            ranking=[*by_model.ranking, *base[self.k:]], used_model=True, baseline_margin=gap,
            latency_s=None if by_model.seconds is None else baseline_s + by_model.seconds)

    @classmethod
    def from_route(cls, route: Route, baseline: ScoredBaseline, model: Model) -> Cascade:
        """The run-time router of one routing-table route (its task must be
        ``baseline.task``), consulting ``model`` directly."""
        if route.task != baseline.task:
            raise ConfigError(f"the route is for {route.task}, the baseline for {baseline.task}",
                              "pass the route of the baseline's task")
        margin = {"baseline": 0.0, "model": float("inf")}.get(route.deploy, route.margin)
        if margin is None:
            raise ConfigError(f"the {route.task} cascade route names no margin",
                              "rerun slmbench recommend with --cascade")
        return cls(baseline, model_orderer(model), margin, model=model.spec, k=route.k)

    @classmethod
    def fit(cls, baseline: ScoredBaseline, orderer: Orderer, fit_items: Sequence[AnyItem], *,
            model: str, k: int = 3) -> Cascade:
        """Choose ``margin`` maximising top-1 accuracy on ``fit_items`` (ties: fewer model
        calls). The model is consulted on every fit item to know what consulting it gives."""
        if not fit_items:
            raise ConfigError("fitting a cascade needs fit items", "raise --fit-limit")
        rows = []
        for item in fit_items:
            scores = baseline.scores(item)
            base = order(scores, registry.get(baseline.task).options_for(item))
            gold = registry.get(baseline.task).gold(item)
            by_model = orderer(item, base[:k]).ranking
            rows.append((top_margin(scores), base[0] == gold, by_model[0] == gold))
        return cls(baseline, orderer, best_margin(rows), model=model, k=k)


ROUTES_VERSION = 1


class Route(BaseModel):
    """What to deploy for one micro-task: the baseline, the model, or the cascade."""

    model_config = ConfigDict(frozen=True)

    task: TaskName
    deploy: Literal["baseline", "model", "cascade"]
    baseline: str  # the baseline's name (the τ anchor)
    model: str | None = None  # the model spec (model and cascade)
    prompt_id: str | None = None
    reading: Literal["generation", "logprob"] | None = None
    margin: float | None = None  # cascade: the baseline margin under which the model decides
    k: int = 3  # the shortlist the model re-orders


class RoutingTable(BaseModel):
    """The routes ``slmbench recommend`` writes as JSON, one per micro-task."""

    model_config = ConfigDict(frozen=True)

    routes: list[Route]
    command: str = ""
    version: Literal[1] = ROUTES_VERSION

    def route(self, task: TaskName) -> Route:
        for r in self.routes:
            if r.task == task:
                return r
        raise ConfigError(f"the routing table has no route for {task}",
                          f"it routes {', '.join(r.task for r in self.routes) or 'nothing'}")

    @classmethod
    def load(cls, path: Path) -> RoutingTable:
        """Read a routing table written by ``slmbench recommend``."""
        try:
            return cls.model_validate_json(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise ConfigError(f"routing table {path} does not exist",
                              "write it with: slmbench recommend PATH --routes FILE") from None
        except ValidationError as exc:
            raise ConfigError(f"{path} is not a routing table: {exc.errors()[0]['msg']}",
                              "write it with: slmbench recommend PATH --routes FILE") from None


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

    A decision's latency is the baseline's time, measured as it decides, plus the model's
    log-prob reading time where it consulted the model (the reading's own timing, also when
    the reading came from a store); a mean is None when some decision's time was not recorded.
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
    task = registry.get(cascade.baseline.task)
    golds = [task.gold(i) for i in items]
    base = [order(cascade.baseline.scores(i), task.options_for(i)) for i in items]
    hits = sum(d.ranking[0] == g for d, g in zip(decisions, golds, strict=True))
    base_hits = sum(b[0] == g for b, g in zip(base, golds, strict=True))
    used = [d for d in decisions if d.used_model]
    gain = paired_gains(golds, [d.ranking for d in decisions], base, ["mrr"])[0].gain
    return CascadeEval(
        task=cascade.baseline.task, model=cascade.model, k=cascade.k, margin=cascade.margin,
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


def cascade_items(task: TaskName, *, k: int = 3, turns: int | None = None,
                  limit: int | None = None, fit_limit: int | None = None, seed: int = 0
                  ) -> tuple[ScoredBaseline, list[AnyItem], list[list[str]]]:
    """What a cascade reads: its baseline (fitted on the fit split), its eval then fit items
    (``limit`` and ``fit_limit`` of them, seeded; ranking items widened to ``turns``) and each
    item's BM25 shortlist of ``k``. :func:`shortlisted` gives the reading each one is."""
    _check_k(k)  # before any reading
    pool = registry.get(task).load_items()
    fit_items, eval_items = fit_sample(pool, fit_limit, seed), select_items(task, pool, limit,
                                                                            seed)
    baseline = scored_baseline(task, [i for i in pool if i.split == "fit"])
    if task == "ranking" and turns:
        convs = conversations(registry.get("memory").load_items())  # type: ignore[arg-type]
        fit_items = [widen_ranking(i, turns, convs) for i in fit_items]  # type: ignore[arg-type]
        eval_items = [widen_ranking(i, turns, convs) for i in eval_items]  # type: ignore[arg-type]
    options = registry.get(task).options_for
    both = [*eval_items, *fit_items]
    return baseline, both, [order(baseline.scores(i), options(i))[:k] for i in both]


def run_cascade(spec: str, task: TaskName, *, k: int = 3, turns: int | None = None,
                limit: int | None = None, fit_limit: int | None = None, seed: int = 0,
                command: str = "", session: Session | None = None) -> CascadeReport:
    """Shortlist re-rank (paired gain over BM25) and the router, fitted on fit items, the
    model's readings made through the session's read loop (and its store, reused and
    resumed). An eval or fit item whose reading the backend gave up on is left out of
    every number (counted in ``read_counts``, its cause in ``notes``).

    ``turns`` (ranking only) widens every item to that many history turns.
    """
    check_logprobs(spec)  # the re-rank reads log-probabilities: refuse before any reading
    baseline, both, lists = cascade_items(task, k=k, turns=turns, limit=limit,
                                          fit_limit=fit_limit, seed=seed)
    session = session or Session()
    orders = read_orders(session, spec, both, lists)
    read = [i for i, s in zip(both, lists, strict=True) if shortlisted(i, s)[0].id in orders]
    eval_read = [i for i in read if i.split == "eval"]
    fit_read = [i for i in read if i.split == "fit"]
    if not eval_read or not fit_read:
        raise ConfigError(f"no {'eval' if not eval_read else 'fit'} item of the cascade was "
                          f"read: {'; '.join(session.notes) or 'no readings'}",
                          "fix the cause above and run the same command again")
    stored = stored_orderer(orders)
    rerank_result = shortlist_rerank(stored, baseline, eval_read, model=spec, k=k)
    router = evaluate(Cascade.fit(baseline, stored, fit_read, model=spec, k=k), eval_read)
    return CascadeReport(command=command, created=datetime.now(UTC).isoformat(timespec="seconds"),
                         model=spec, task=task, k=k, n_fit=len(fit_read), rerank=rerank_result,
                         router=router, notes=list(session.notes),
                         read_counts=session.counts)
