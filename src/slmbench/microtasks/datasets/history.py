"""Longer histories for the context-length probe and a cascade's ``--turns``, rebuilt from
the conversations of the memory dataset (one item per user turn, id
``memory-<conversation>-<index>``).

A task that can be shown a longer history declares how in its ``MicroTask``
(``conversations`` for the task whose items are the turns; ``widen`` or ``history`` for a
task shown them); these are the built-in tasks' functions. A history longer than its own
conversation is padded, *before* it, with turns of other conversations (chosen by a hash of
the item id): older, unrelated history.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Sequence

from slmbench.core.errors import ConfigError
from slmbench.microtasks.datasets.records import Item, MemoryItem, RankItem

__all__ = ["Conversations", "conversations", "memory_history", "widen_ranking"]

Conversations = dict[str, list[str]]


def conversations(memory_items: Sequence[Item]) -> Conversations:
    """User turns of every conversation, in order, rebuilt from memory item ids."""
    turns: dict[str, dict[int, str]] = defaultdict(dict)
    for item in memory_items:
        assert isinstance(item, MemoryItem)
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


def widen_ranking(item: Item, n: int, convs: Conversations) -> RankItem:
    """The ranking item with a window of ``n`` history turns that holds its gold turn (id
    ``<id>@<n>``)."""
    assert isinstance(item, RankItem)
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


def memory_history(item: Item, n: int, convs: Conversations) -> list[str]:
    """The ``n`` user turns shown before a memory item's turn (older padding first)."""
    conv, _, index = item.id.removeprefix("memory-").rpartition("-")
    before = convs[conv][: int(index)][-n:]
    return _padding(convs, conv, item.id, n - len(before)) + before if len(before) < n \
        else before
