"""Context-length probe: memory and ranking scores as the history in the prompt grows.

Conversations are rebuilt from the memory dataset (one item per user turn, id
``memory-<conversation>-<index>``). For a history of ``n`` turns:

* **ranking**: the item's question over a window of ``n`` turns that holds the gold turn.
  BFCL's prerequisite conversations have 4-14 user turns, so a window longer than the
  conversation is padded, *before* it, with turns of other conversations (chosen by a hash of
  the item id): older, unrelated history. The BM25 baseline ranks the same widened turns.
* **memory**: the frozen memory prompt, with the ``n`` user turns that came before the turn
  (same padding rule) shown first as "Earlier messages from this user".

Scores are the eligibility metrics (F1 for memory; nDCG@5 and MRR for ranking) of the
log-prob decision, with their 95% intervals (:mod:`slmbench.microtasks.eligibility`).
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Callable, Sequence
from datetime import UTC, datetime

from pydantic import BaseModel, ConfigDict

from slmbench.core import stats
from slmbench.core.errors import ConfigError
from slmbench.microtasks import tasks as registry
from slmbench.microtasks.baselines import Baseline, bm25_ranking, rule_memory
from slmbench.microtasks.datasets.records import Item, MemoryItem, RankItem, TaskName
from slmbench.microtasks.eligibility import Scorer, interval
from slmbench.microtasks.session import Progress, Session, logprob_order, select_items
from slmbench.microtasks.spec import Metric
from slmbench.models.base import Message, Model

HISTORY_LENGTHS: tuple[int, ...] = (4, 8, 16, 32)
HISTORY_HEADER = "Earlier messages from this user:"

Conversations = dict[str, list[str]]


def conversations(memory_items: Sequence[MemoryItem]) -> Conversations:
    """User turns of every conversation, in order, rebuilt from memory item ids."""
    turns: dict[str, dict[int, str]] = defaultdict(dict)
    for item in memory_items:
        conv, _, index = item.id.removeprefix("memory-").rpartition("-")
        turns[conv][int(index)] = item.turn
    return {c: [t[i] for i in sorted(t)] for c, t in sorted(turns.items())}


def _padding(convs: Conversations, exclude: str, key: str, n: int) -> list[str]:
    """``n`` turns from conversations other than ``exclude``, in an order hashed from ``key``."""
    others = sorted((c for c in convs if c != exclude),
                    key=lambda c: hashlib.sha256(f"{key}:{c}".encode()).hexdigest())
    pool = [t for c in others for t in convs[c]]
    if len(pool) < n:
        raise ConfigError(f"only {len(pool)} turns to pad a history of {n}",
                          "use shorter histories or the full memory dataset")
    return pool[:n]


def _rank_origin(item: RankItem) -> tuple[str, int]:
    """The conversation and index of the gold turn (from the item's window provenance)."""
    conv, _, span = item.provenance[-1].record_id.rpartition("#")
    return conv, int(span.split("-")[0]) + item.gold


def widen_ranking(item: RankItem, n: int, convs: Conversations) -> RankItem:
    """The item with a window of ``n`` history turns that holds its gold turn."""
    conv, gold_index = _rank_origin(item)
    turns = convs[conv]
    if len(turns) >= n:
        shift = int(hashlib.sha256(item.id.encode()).hexdigest()[:8], 16) % n
        start = max(0, min(gold_index - shift, len(turns) - n))
        shown, gold = turns[start:start + n], gold_index - start
    else:
        pad = _padding(convs, conv, item.id, n - len(turns))
        shown, gold = pad + turns, len(pad) + gold_index
    return item.model_copy(update={"id": f"{item.id}@{n}", "turns": tuple(shown), "gold": gold})


def memory_history(item: MemoryItem, n: int, convs: Conversations) -> list[str]:
    """The ``n`` user turns shown before ``item``'s turn (older padding first)."""
    conv, _, index = item.id.removeprefix("memory-").rpartition("-")
    before = convs[conv][: int(index)][-n:]
    return _padding(convs, conv, item.id, n - len(before)) + before if len(before) < n \
        else before


def memory_messages(item: MemoryItem, history: Sequence[str]) -> list[Message]:
    """The frozen memory prompt with the history shown first in the user message."""
    system, user = registry.get("memory").render("p0", item)
    shown = "\n".join(f"[{k + 1}] {' '.join(t.split())}" for k, t in enumerate(history))
    return [system, Message(role="user", content=f"{HISTORY_HEADER}\n{shown}\n\n{user.content}")]


class ProbePoint(BaseModel):
    """One task's score at one history length, with the baseline's score on the same items."""

    model_config = ConfigDict(frozen=True)

    task: TaskName
    model: str
    n_turns: int
    metric: Metric
    n_items: int
    score: stats.Estimate  # the metric with its 95% interval
    baseline: float
    baseline_name: str


def _probe(model: Model, name: TaskName, lengths: Sequence[int], progress: Progress | None,
           shown: Callable[[int], tuple[list[Item], list[list[Message]]]],
           baseline: Callable[[list[Item]], Baseline]) -> list[ProbePoint]:
    """Per history length: the items and prompts ``shown(n)`` gives, read by log-prob, and
    every metric of the task against ``baseline`` on the same items."""
    task = registry.get(name)
    points = []
    for n in lengths:
        items, prompts = shown(n)
        if progress:
            progress(f"{model.spec} · {name} · {n} turns: {len(items)} items")
        rankings = [logprob_order(model, m, task.options_for(i))
                    for i, m in zip(items, prompts, strict=True)]
        golds = [task.gold(i) for i in items]
        base = baseline(items)
        base_rankings = [base.rankings[i.id] for i in items]
        for metric in task.metrics:
            scorer = Scorer(name, metric, golds)
            points.append(ProbePoint(task=name, model=model.spec, n_turns=n, metric=metric,
                                     n_items=len(golds), score=interval(scorer, rankings),
                                     baseline=scorer.score(base_rankings),
                                     baseline_name=base.name))
    return points


def probe_ranking(model: Model, items: Sequence[RankItem], convs: Conversations,
                  lengths: Sequence[int] = HISTORY_LENGTHS,
                  progress: Progress | None = None) -> list[ProbePoint]:
    """Ranking over windows of each length that hold the gold turn; BM25 on the same turns."""
    task = registry.get("ranking")

    def shown(n: int) -> tuple[list[Item], list[list[Message]]]:
        wide = [widen_ranking(i, n, convs) for i in items]
        return list(wide), [task.render("p0", w) for w in wide]

    return _probe(model, "ranking", lengths, progress, shown,
                  lambda wide: bm25_ranking(wide))  # type: ignore[arg-type]


def probe_memory(model: Model, items: Sequence[MemoryItem], convs: Conversations,
                 lengths: Sequence[int] = HISTORY_LENGTHS,
                 progress: Progress | None = None) -> list[ProbePoint]:
    """Memory with each length of earlier turns shown first; the rules see the turn only."""
    base = rule_memory(items)
    return _probe(model, "memory", lengths, progress,
                  lambda n: (list(items), [memory_messages(i, memory_history(i, n, convs))
                                           for i in items]),
                  lambda _items: base)


PROBE_TASKS = ("memory", "ranking")


class ProbeReport(BaseModel):
    """Everything one ``slmbench probe`` run measured, as written to probe.json."""

    command: str
    created: str
    models: list[str]
    lengths: list[int]
    limit: int | None
    points: list[ProbePoint]


def run_probe(models: Sequence[str], tasks: Sequence[TaskName], lengths: Sequence[int], *,
              limit: int | None = None, seed: int = 0, command: str = "",
              progress: Progress | None = None, session: Session | None = None) -> ProbeReport:
    """The context-length probe of every model on memory and/or ranking eval samples."""
    if not tasks or set(tasks) - set(PROBE_TASKS):
        raise ConfigError("the context-length probe covers memory and ranking",
                          "use --task memory and/or --task ranking")
    memory = registry.get("memory").load_items()
    convs = conversations(memory)  # type: ignore[arg-type]
    points: list[ProbePoint] = []
    for spec in models:
        with (session or Session()).model(spec) as loaded:
            if "memory" in tasks:
                points += probe_memory(loaded, select_items("memory", memory, limit, seed),  # type: ignore[arg-type]
                                       convs, lengths, progress)
            if "ranking" in tasks:
                ranking = select_items("ranking", registry.get("ranking").load_items(), limit,
                                       seed)
                points += probe_ranking(loaded, ranking, convs, lengths, progress)  # type: ignore[arg-type]
    return ProbeReport(command=command, created=datetime.now(UTC).isoformat(timespec="seconds"),
                       models=list(models), lengths=list(lengths), limit=limit, points=points)
