"""A cascade's shortlist and how the model is consulted on it.

A task can be cascaded when its ``MicroTask`` declares a graded baseline (``graded``: one
score per option, :func:`scored_baseline`) and a shortlist (``restrict``: the item showing
only some options, :func:`restrict`). The shortlisted item (only the kept options, stored
under the id ``<item>|<kept options>``, :func:`shortlisted`) is read as any micro-task item
is, prompt p0, each option's log-probability summed over its surface forms (an
:data:`Orderer`). When measuring, every shortlist is read first through the one read loop
(:func:`read_orders`: :meth:`Session.read`, its store and Ray cluster), then looked up
(:func:`stored_orderer`); the run-time router asks the model itself the same way, scoring
only (:func:`model_orderer`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from pydantic import BaseModel, ConfigDict

from slmbench.core.errors import ConfigError
from slmbench.microtasks.baselines import ScoredBaseline
from slmbench.microtasks.datasets.records import AnyItem
from slmbench.microtasks.readout import logprob_ranking
from slmbench.microtasks.session import Block, Session
from slmbench.microtasks.spec import MicroTask
from slmbench.models.base import Model

__all__ = ["ModelOrder", "Orderer", "model_orderer", "order", "read_orders", "restrict",
           "scored_baseline", "shortlisted", "stored_orderer", "top_margin"]

def scored_baseline(task: MicroTask, fit_items: Sequence[AnyItem]) -> ScoredBaseline:
    """The graded baseline a cascade routes ``task`` on (fitted on ``fit_items``)."""
    if task.graded is None:
        raise ConfigError(f"no graded baseline score to route {task.name} on",
                          "cascade a task that declares graded= (ranking, tools)")
    return task.graded(fit_items)


def order(scores: dict[str, float], options: Sequence[str]) -> list[str]:
    """Options by score, best first (ties: the order of ``options``)."""
    return sorted(options, key=lambda o: (-scores[o], list(options).index(o)))


def top_margin(scores: dict[str, float]) -> float:
    """Score gap between the best and second-best option (inf with one option)."""
    top = sorted(scores.values(), reverse=True)
    return float("inf") if len(top) < 2 else top[0] - top[1]


def restrict(task: MicroTask, item: AnyItem, keep: Sequence[str]) -> tuple[AnyItem, list[str]]:
    """The item showing only the ``keep`` options (in their original order) and the map from
    the restricted item's options back to the original ones (``task.restrict``)."""
    if task.restrict is None:
        raise ConfigError(f"micro-task {task.name!r} has no shortlist to restrict",
                          "cascade a task that declares restrict= (ranking, tools)")
    kept = [o for o in task.options_for(item) if o in set(keep)]
    return task.restrict(item, kept)  # type: ignore[return-value]


class ModelOrder(BaseModel):
    """The model's order of one item's shortlist (original option names, best first) and
    the seconds its log-prob reading took (None: the stored reading predates that timing)."""

    model_config = ConfigDict(frozen=True)

    ranking: list[str]
    seconds: float | None


#: the model's order of ``item``'s shortlist: how the re-rank and the router consult it
Orderer = Callable[[AnyItem, Sequence[str]], ModelOrder]


def shortlisted(task: MicroTask, item: AnyItem, shortlist: Sequence[str]
                ) -> tuple[AnyItem, list[str]]:
    """:func:`restrict`, with the item id ``<id>|<kept options>``: the id its reading is
    stored under, so each shortlist of an item is its own stored reading."""
    sub, back = restrict(task, item, shortlist)
    return sub.model_copy(update={"id": f"{item.id}|{'/'.join(back)}"}), back


def model_orderer(model: Model, task: MicroTask) -> Orderer:
    """At run time: the model's log-prob order of a shortlist of a ``task`` item, read as a
    stored reading reads it (prompt p0, surface forms summed; :func:`~slmbench.microtasks.
    readout.logprob_ranking`), without a store and without generating."""

    def ask(item: AnyItem, shortlist: Sequence[str]) -> ModelOrder:
        sub, back = shortlisted(task, item, shortlist)
        ranked, seconds = logprob_ranking(model, task, "p0", sub)
        options = task.options_for(sub)
        return ModelOrder(ranking=[back[options.index(o)] for o in ranked], seconds=seconds)

    return ask


def read_orders(session: Session, spec: str, task: MicroTask, items: Sequence[AnyItem],
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
        sub, back = shortlisted(task, item, shortlist)
        subs.setdefault(sub.id, (sub, back))
    if not subs:
        return {}
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


def stored_orderer(task: MicroTask, orders: Mapping[str, ModelOrder]) -> Orderer:
    """The orders :func:`read_orders` read of ``task``'s shortlists, looked up (KeyError:
    that shortlist was not read)."""
    return lambda item, shortlist: orders[shortlisted(task, item, shortlist)[0].id]
