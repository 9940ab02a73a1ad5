"""Context-length probe: memory and ranking scores as the history in the prompt grows.

Conversations are rebuilt from the memory dataset (one item per user turn, id
``memory-<conversation>-<index>``). For a history of ``n`` turns:

* **ranking**: the item's question over a window of ``n`` turns that holds the gold turn.
  BFCL's prerequisite conversations have 4-14 user turns, so a window longer than the
  conversation is padded, *before* it, with turns of other conversations (chosen by a hash of
  the item id): older, unrelated history. The BM25 baseline ranks the same widened turns.
* **memory**: the frozen memory prompt, with the ``n`` user turns that came before the turn
  (same padding rule) shown first as "Earlier messages from this user".

Each point is an eligibility cell (:func:`slmbench.microtasks.eligibility.make_cell`) of the
log-prob decision on one metric (F1 for memory; nDCG@5 and MRR for ranking): the score with
its 95% interval, τ = the best of the task's non-LLM references on the same items (BM25 on
the widened turns for ranking; the rules and the learned baseline on the turn alone for
memory; majority, random and every constant answer for both), the paired difference, the
verdict and the constant flag. Readings go through the one read loop
(:class:`~slmbench.microtasks.session.Session`) and its readings store, so a killed probe
resumes and its page can be rebuilt from the store.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from pydantic import BaseModel, ConfigDict, Field

from slmbench.core.errors import ConfigError
from slmbench.microtasks import tasks as registry
from slmbench.microtasks.datasets.records import Item, MemoryItem, RankItem, TaskName
from slmbench.microtasks.eligibility import EligibilityCell, make_cell
from slmbench.microtasks.session import (
    Block,
    BlockReading,
    Session,
    fit_sample,
    precision_of,
    select_items,
)
from slmbench.microtasks.store import ReadCounts
from slmbench.models.records import Message

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
    """One task's cell at one history length: the model's log-prob decisions scored against
    τ = the best non-LLM reference (constant answers included) on the same items."""

    model_config = ConfigDict(frozen=True)

    n_turns: int
    cell: EligibilityCell  # score, τ with its interval, paired difference, verdict, constant


def _points(spec: str, name: TaskName, n: int, read: BlockReading,
            fit: Sequence[Item]) -> list[ProbePoint]:
    """Every metric of the task on the items read, against the task's references (each
    fitted on ``fit``) on the same items."""
    task = registry.get(name)
    rankings = []
    for item, reading in zip(read.items, read.readings, strict=True):
        if reading.logprob_ranking is None:
            raise ConfigError(f"{spec} gives no log-probabilities ({item.id}): the probe "
                              "reads log-prob decisions", "probe a llamacpp:, llamaserver: "
                              "or hf: model")
        rankings.append(reading.logprob_ranking)
    golds = [task.gold(i) for i in read.items]
    refs = {b.name: [b.rankings[i.id] for i in read.items]
            for b in task.baselines(fit, read.items)}
    return [ProbePoint(n_turns=n, cell=make_cell(
        task=name, metric=metric, model=spec, precision=precision_of(spec),
        prompt_id=read.block.prompt_id, reading="logprob", golds=golds, rankings=rankings,
        baselines=refs)) for metric in task.metrics]


@dataclass(frozen=True)
class ProbeStep:
    """One block of the probe: a task's items at one history length, and the fit items its
    references learn from (widened like the block's, for ranking)."""

    n_turns: int
    block: Block
    fit: Sequence[Item]


def probe_steps(tasks: Sequence[TaskName], memory: Sequence[MemoryItem],
                ranking: Sequence[RankItem], lengths: Sequence[int] = HISTORY_LENGTHS, *,
                limit: int | None = None, seed: int = 0) -> list[ProbeStep]:
    """The probe's blocks: per task and length, a seeded eval sample of ``limit`` items.
    Ranking items are widened to ``n`` history turns under the frozen prompt; memory items
    keep their turn, with ``n`` earlier turns shown first (stored under ``p0+<n>turns``).
    ``memory`` must hold every split: the conversations are rebuilt from it."""
    convs = conversations(memory)
    steps: list[ProbeStep] = []
    if "memory" in tasks:
        chosen = select_items("memory", memory, limit, seed)
        fit = fit_sample(memory, None)
        for n in lengths:
            def shown(item: Item, n: int = n) -> list[Message]:
                return memory_messages(item, memory_history(item, n, convs))  # type: ignore[arg-type]
            steps.append(ProbeStep(n, Block(task="memory", prompt_id=f"p0+{n}turns",
                                            items=chosen, messages=shown), fit))
    if "ranking" in tasks:
        chosen = select_items("ranking", ranking, limit, seed)
        fit = fit_sample(ranking, None)
        for n in lengths:
            def wide(items: Sequence[Item], n: int = n) -> list[Item]:
                return [widen_ranking(i, n, convs) for i in items]  # type: ignore[arg-type]
            steps.append(ProbeStep(n, Block(task="ranking", prompt_id="p0",
                                            items=wide(chosen)), wide(fit)))
    return steps


def read_probe(session: Session, spec: str, steps: Sequence[ProbeStep]) -> list[ProbePoint]:
    """Read every step's block with ``spec`` through the session (its store reused and
    resumed), and score each one against its references."""
    got = session.read(spec, [s.block for s in steps])
    return [p for step, read in zip(steps, got.blocks, strict=True)
            for p in _points(spec, step.block.task, step.n_turns, read, step.fit)]


PROBE_TASKS = ("memory", "ranking")


class ProbeReport(BaseModel):
    """Everything one ``slmbench probe`` run measured, as written to probe.json."""

    command: str
    created: str
    models: list[str]
    lengths: list[int]
    limit: int | None
    points: list[ProbePoint]
    notes: list[str] = Field(default_factory=list)
    read_counts: ReadCounts = Field(default_factory=ReadCounts)


def run_probe(models: Sequence[str], tasks: Sequence[TaskName], lengths: Sequence[int], *,
              limit: int | None = None, seed: int = 0, command: str = "",
              session: Session | None = None) -> ProbeReport:
    """The context-length probe of every model on memory and/or ranking eval samples, read
    through the session's read loop (and its store, reused and resumed)."""
    if not tasks or set(tasks) - set(PROBE_TASKS):
        raise ConfigError("the context-length probe covers memory and ranking",
                          "use --task memory and/or --task ranking")
    session = session or Session()
    steps = probe_steps(tasks, registry.get("memory").load_items(),  # type: ignore[arg-type]
                        registry.get("ranking").load_items() if "ranking" in tasks else [],  # type: ignore[arg-type]
                        lengths, limit=limit, seed=seed)
    points = [p for spec in models for p in read_probe(session, spec, steps)]
    return ProbeReport(command=command, created=datetime.now(UTC).isoformat(timespec="seconds"),
                       models=list(models), lengths=list(lengths), limit=limit, points=points,
                       notes=list(session.notes), read_counts=session.counts)
