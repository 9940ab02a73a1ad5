"""A constant answer cannot clear τ: constant references, the learned baseline, the flag."""

from __future__ import annotations

import random

from slmbench.microtasks import tasks
from slmbench.microtasks.datasets.records import (
    ApprovalItem,
    FunctionDoc,
    MemoryItem,
    RankItem,
    ToolItem,
)
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
    return make_cell(task=spec, metric=spec.metrics[0], model="const", precision="fp16",
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


def test_one_answer_on_95_percent_of_items_is_no_evidence_of_a_constant_cell() -> None:
    items = _memory_items(200, seed=3)
    fit = _memory_items(100, seed=998, split="fit")
    # right on every save item, "save" on 95% of all items: 200 items cannot show that the
    # share is above 95%, so the cell is judged like any other (and the rules beat it)
    rankings = [["save"] if i.label == "save" or k % 20 else ["skip"]
                for k, i in enumerate(items)]
    cell = _cell("memory", items, fit, rankings)
    assert cell.top_share is not None and cell.top_share >= 0.95
    assert not cell.constant and cell.constant_p is not None and cell.constant_p > 0.05
    assert not cell.eligible and cell.verdict != "eligible"


def test_constant_answer_models_are_never_eligible_on_any_task() -> None:
    """Held out: every declared constant of each task, and one outside that set (the
    second-listed option), answered on all of 300 items: shown constant, never eligible."""
    memory = _memory_items(300, seed=5)
    fit = _memory_items(100, seed=997, split="fit")
    for answer in ("save", "skip"):  # memory's constants: always save, always skip
        cell = _cell("memory", memory, fit, [[answer]] * len(memory))
        assert cell.constant and not cell.eligible and cell.p_value == 1.0
    approvals = [ApprovalItem(id=f"a{k}", split="eval", provenance=(), command=f"cmd {k}",
                              label="approve" if k % 3 else "deny", rule="r", origin="x")
                 for k in range(300)]
    for answer in ("approve", "deny"):
        cell = _cell("approval", approvals, approvals[:1], [[answer]] * len(approvals))
        assert cell.constant and not cell.eligible
    words = ("apples", "bananas", "cherries", "plums", "grapes", "melons")
    ranks = [RankItem(id=f"r{k}", split="eval", provenance=(), query=words[k % 6],
                      turns=tuple(words[(k + j) % 6] + " pie" for j in range(3)), gold=0)
             for k in range(300)]
    for first in ("1", "2", "3"):  # first listed, second listed (no declared constant), last
        cell = _cell("ranking", ranks, ranks[:1], [[first]] * len(ranks))
        assert cell.constant and not cell.eligible, first
    rng = random.Random(38)
    names = [f"tool_{k}" for k in range(6)]
    items = []
    for k in range(300):
        listed = rng.sample(names, 4)
        items.append(ToolItem(id=f"t{k}", split="eval", provenance=(), request=f"do {k}",
                              functions=tuple(FunctionDoc(name=n, description=f"does {n}")
                                              for n in listed),
                              label="none" if k % 4 == 0 else rng.choice(listed)))
    cell = _cell("tools", items, items[:1], [["none"]] * len(items))  # a declared constant
    assert cell.constant and not cell.eligible
    # first listed (declared) and second listed (not): the same position every time, a
    # different name on each item, so no answer share shows it; τ still holds them off
    for at in (0, 1):
        cell = _cell("tools", items, items[:1], [[i.functions[at].name] for i in items])
        assert not cell.constant and not cell.eligible and cell.verdict != "eligible", at


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
