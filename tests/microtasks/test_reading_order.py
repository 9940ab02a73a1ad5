"""The order a Part B cell is read in (issue #60, item 4): a cell read until decided has a
verdict that depends on its order, so that order must be a uniform permutation of the items,
drawn from the seed and the item ids alone, never from an item's content, its stratum or
whether a baseline gets it right."""

from __future__ import annotations

import itertools
from collections import Counter

from scipy import stats as sps

from slmbench.microtasks import tasks
from slmbench.microtasks.datasets.records import ApprovalItem
from slmbench.microtasks.samples import select_items

APPROVAL = tasks.get("approval")
SEEDS = range(4000)


def _items(n: int, *, flip: bool = False, prefix: str = "a") -> list[ApprovalItem]:
    """``n`` approval items; ``flip``: the same ids with every label, command and rule
    changed (another content, another stratum, another baseline's correctness)."""
    return [ApprovalItem(id=f"{prefix}{k}", split="eval", provenance=(),
                         command=f"rm -rf /{k}" if flip else f"ls {k}",
                         label=("approve" if k % 3 else "deny") if not flip else
                         ("deny" if k % 3 else "approve"), rule="r2" if flip else "r1",
                         origin="ipi" if flip else "cheat")
            for k in range(n)]


def _order(items: list[ApprovalItem], seed: int, limit: int | None = None) -> tuple[str, ...]:
    return tuple(i.id for i in select_items(APPROVAL, items, limit, seed))


def test_the_order_is_the_same_whatever_the_items_say() -> None:
    """Content, stratum (the gold label) and a baseline's correctness are functions of an
    item's content: changing all of them leaves every seed's order as it was."""
    same, other = _items(40), _items(40, flip=True)
    for seed in range(200):
        assert _order(same, seed) == _order(other, seed)
    # and the list it is handed in does not matter either
    assert _order(same[::-1], 3) == _order(same, 3)


def test_every_permutation_is_equally_likely_over_seeds() -> None:
    """Four items: each of the 24 orders about 4000/24 times over 4000 seeds (chi-square on
    23 df; a fixed seed range, so the test is deterministic)."""
    items = _items(4)
    counts = Counter(_order(items, seed) for seed in SEEDS)
    assert set(counts) == set(itertools.permutations(i.id for i in items))
    assert sps.chisquare(list(counts.values())).pvalue > 0.001


def test_each_stratum_is_spread_evenly_through_the_order() -> None:
    """Where an item is read does not depend on its stratum: over seeds, every position of
    a 30-item order holds a "deny" item (10 of 30) about a third of the time, and each item
    comes first about 1/30 of the time."""
    items = _items(30)
    deny = {i.id for i in items if i.label == "deny"}
    first: Counter[str] = Counter()
    denied = [0] * 30
    for seed in SEEDS:
        order = _order(items, seed)
        first[order[0]] += 1
        for pos, key in enumerate(order):
            denied[pos] += key in deny
    assert sps.chisquare([first[i.id] for i in items]).pvalue > 0.001
    for pos in range(30):
        assert sps.binomtest(denied[pos], len(SEEDS), 1 / 3).pvalue > 0.0001, pos


def test_a_stratified_sample_is_read_in_a_uniform_order_too() -> None:
    """With a limit, the sample keeps each stratum's share, and the chosen items are read
    in the same seeded order as the whole split (not stratum by stratum)."""
    items = _items(30)
    for seed in range(300):
        chosen = select_items(APPROVAL, items, 12, seed)
        assert sum(i.label == "deny" for i in chosen) == 4
        whole = _order(items, seed)
        assert [i.id for i in chosen] == [k for k in whole if k in {i.id for i in chosen}]
    firsts = Counter(select_items(APPROVAL, items, 12, seed)[0].label for seed in SEEDS)
    assert sps.binomtest(firsts["deny"], len(SEEDS), 1 / 3).pvalue > 0.001
