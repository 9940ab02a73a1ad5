"""A constant answer cannot clear τ: constant references, the learned baseline, the flag."""

from __future__ import annotations

import random

from slmbench.microtasks import tasks
from slmbench.microtasks.datasets.records import ApprovalItem, MemoryItem, RankItem
from slmbench.microtasks.eligibility import make_cell

SAVE_WORDS = ("my name is", "i live in", "my birthday is", "i prefer", "my order number is")
SKIP_WORDS = ("thanks", "hello there", "ok sounds good", "what time is it", "never mind")


def _memory_items(n: int, seed: int, split: str = "eval") -> list[MemoryItem]:
    """Memory-like items, 40% save (the real eval split: 0.40 of items save)."""
    rng = random.Random(seed)
    out = []
    for k in range(n):
        save = rng.random() < 0.4
        words = SAVE_WORDS if save else SKIP_WORDS
        out.append(MemoryItem(id=f"{split}-{seed}-{k}", split=split, provenance=(),
                              turn=f"{rng.choice(words)} {rng.randint(0, 99)}",
                              label="save" if save else "skip"))
    return out


def _cell(task: str, items, fit, rankings):
    spec = tasks.get(task)
    base = {b.name: [b.rankings[i.id] for i in items] for b in spec.baselines(fit, items)}
    return make_cell(task=task, metric=spec.metrics[0], model="const", precision="fp16",
                     prompt_id="p0", reading="generation", golds=[spec.gold(i) for i in items],
                     rankings=rankings, baselines=base)


def test_the_constant_save_model_is_never_eligible_at_n_200() -> None:
    fit = _memory_items(100, seed=999, split="fit")
    for draw in range(10):
        items = _memory_items(200, seed=draw)
        cell = _cell("memory", items, fit, [["save", "skip"]] * len(items))
        assert cell.constant and cell.top_share == 1.0
        assert not cell.eligible
        # τ includes "always save": the constant model ties it, its lower bound is below
        assert cell.baseline_scores["always save"] == cell.score.estimate
        assert cell.tau >= cell.score.estimate
        assert cell.score.low is not None and cell.score.low < cell.tau


def test_a_cell_answering_one_thing_on_95_percent_is_flagged_even_if_it_scores() -> None:
    items = _memory_items(200, seed=3)
    fit = _memory_items(100, seed=998, split="fit")
    # right on every save item, "save" on 95% of all items: F1 well above the rules
    rankings = [["save"] if i.label == "save" or k % 20 else ["skip"]
                for k, i in enumerate(items)]
    cell = _cell("memory", items, fit, rankings)
    assert cell.top_share is not None and cell.top_share >= 0.95
    assert cell.constant and not cell.eligible


def test_every_task_declares_its_constant_answers_as_references() -> None:
    item = ApprovalItem(id="a", split="eval", provenance=(), command="ls", label="approve",
                        rule="r", origin="cheat")
    names = {b.name for b in tasks.get("approval").baselines([item], [item])}
    assert {"always approve", "always deny", "learned", "rules"} <= names
    rank = RankItem(id="r", split="eval", provenance=(), query="bananas",
                    turns=("apples", "bananas", "cherries"), gold=1)
    got = {b.name: b.rankings["r"] for b in tasks.get("ranking").baselines([rank], [rank])}
    assert got["first listed first"] == ["1", "2", "3"]
    assert got["last listed first"] == ["3", "2", "1"]
    assert "always none" in {b.name for b in tasks.get("tools").baselines([], [])}


def test_the_learned_baseline_learns_from_the_fit_split_only() -> None:
    fit = _memory_items(200, seed=11, split="fit")
    items = _memory_items(100, seed=12)
    learned = next(b for b in tasks.get("memory").baselines(fit, items) if b.name == "learned")
    right = sum(learned.rankings[i.id][0] == i.label for i in items)
    assert right >= 95  # the words separate the classes; a constant gets about 60
    # fitted on items of the other class only, it can only answer that class
    only_skip = [i for i in fit if i.label == "skip"]
    flat = next(b for b in tasks.get("memory").baselines(only_skip, items)
                if b.name == "learned")
    assert {r[0] for r in flat.rankings.values()} == {"skip"}
