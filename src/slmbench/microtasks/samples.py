"""Which items a Part B run reads: the eval split or a seeded, stratified sample of it, and a
seeded sample of the fit split; each order a function of the seed and the item ids alone."""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Sequence

from slmbench.microtasks.datasets.records import Item
from slmbench.microtasks.spec import MicroTask


def _key(seed: int, item_id: str) -> str:
    return hashlib.sha256(f"{seed}:{item_id}".encode()).hexdigest()


def select_items(task: MicroTask, items: Sequence[Item], limit: int | None, seed: int = 0
                 ) -> list[Item]:
    """The eval split, or a seeded sample of ``limit`` items stratified by the task's
    ``stratum`` (its gold answer class unless it says otherwise)."""
    pool = sorted((i for i in items if i.split == "eval"), key=lambda i: _key(seed, i.id))
    if limit is None or limit >= len(pool):
        return pool
    groups: dict[str, list[Item]] = defaultdict(list)
    for item in pool:
        groups[task.stratum_of(item)].append(item)
    quota = {c: int(limit * len(g) / len(pool)) for c, g in groups.items()}
    by_remainder = sorted(groups, key=lambda c: -(limit * len(groups[c]) / len(pool) % 1))
    for c in by_remainder[: limit - sum(quota.values())]:
        quota[c] += 1
    chosen = [i for c, g in groups.items() for i in g[: quota[c]]]
    return sorted(chosen, key=lambda i: _key(seed, i.id))


def fit_sample(items: Sequence[Item], limit: int | None, seed: int = 0) -> list[Item]:
    """A seeded sample of ``limit`` items of the fit split (all of it when ``limit`` is None)."""
    pool = sorted((i for i in items if i.split == "fit"), key=lambda i: _key(seed, i.id))
    return pool if limit is None else pool[:limit]
