"""Threshold diagnostics: AUC, offsets fitted on the fit split only, calibration, bias."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from diag_fakes import (
    PROV,
    NeedleModel,
    approval_items,
    approval_scores,
    balanced_labels,
    margins_for,
    rank_items,
    rank_scores,
)

from slmbench.core.errors import LogprobsUnsupportedError
from slmbench.microtasks import tasks
from slmbench.microtasks.datasets.history import conversations, memory_history, widen_ranking
from slmbench.microtasks.datasets.records import MemoryItem, RankItem
from slmbench.microtasks.diagnostics.probes import (
    ProbeReport,
    history_messages,
    probe_steps,
    read_probe,
)
from slmbench.microtasks.diagnostics.thresholds import (
    binary_auc,
    calibration,
    diagnose,
    fit_offsets,
    gold_vs_distractor_auc,
    scored_item,
)
from slmbench.microtasks.readout import ItemReading
from slmbench.microtasks.session import Session
from slmbench.microtasks.store import ReadingStore
from slmbench.models.records import CandidateScore, Completion, Message, as_messages
from slmbench.report.probe_page import probe_markdown

APPROVAL = tasks.get("approval")


def test_binary_auc_matches_pair_counting() -> None:
    # positives 3, 1; negatives 2, 0, 1: 3 wins all three pairs, 1 wins one and ties one
    auc = binary_auc([3, 1, 2, 0, 1], [True, True, False, False, False])
    assert auc.estimate == pytest.approx((3 + 1 + 0.5) / 6)
    assert auc.low is not None and auc.high is not None and auc.low <= auc.high
    assert binary_auc([1, 2, 3, 4], [False, False, True, True]).estimate == 1.0
    assert binary_auc([1, 2, 3, 4], [True, True, False, False]).estimate == 0.0


def test_binary_auc_with_one_class_is_undefined_not_made_up() -> None:
    auc = binary_auc([1.0, 2.0, 3.0], [True, True, True])
    assert auc.estimate is None and auc.note and "one class" in auc.note


def test_gold_vs_distractor_auc_counts_pairs_within_items() -> None:
    items = rank_items([0, 1], "eval", n_turns=3)
    # item 0: gold "1" beats both others; item 1: gold "2" loses to both (boost on "1", "3")
    scored = rank_scores(items[:1], gold_lp=-1, other_lp=-3, position_boost={})
    scored += rank_scores(items[1:], gold_lp=-3, other_lp=-1, position_boost={})
    auc = gold_vs_distractor_auc(scored)
    assert auc.estimate == pytest.approx(0.5)
    assert gold_vs_distractor_auc(scored[:1]).estimate == 1.0


def test_threshold_is_fitted_on_fit_items_and_applied_unchanged_to_eval() -> None:
    labels = balanced_labels(40)
    fit_items = approval_items(labels, "fit")
    eval_items = approval_items(labels, "eval")
    # fit: classes split at 2; eval: split at 5. A threshold tuned on eval would sit near 5.
    fit = approval_scores(fit_items, margins_for(labels, deny=(2.5, 3.5), approve=(0.5, 1.5),
                                                 seed=1))
    evals = approval_scores(eval_items, margins_for(labels, deny=(5.5, 6.5), approve=(3.5, 4.5),
                                                    seed=2))
    offsets = fit_offsets(APPROVAL, fit)
    assert 1.5 < -offsets["deny"] < 2.5
    cell = diagnose(APPROVAL, "m", fit, evals, fit_items, eval_items)
    assert cell.threshold == pytest.approx(-offsets["deny"])
    assert cell.fit_tuned == 1.0 and cell.fit_default == 0.5
    # the fit threshold (~2) still says "deny" for every eval item: no leak from eval
    assert cell.tuned.score.estimate == pytest.approx(0.5)
    assert cell.auc.estimate == 1.0


def test_miscalibrated_but_separating_model_is_fixed_by_the_threshold() -> None:
    labels = balanced_labels(60)
    fit_items, eval_items = approval_items(labels, "fit"), approval_items(labels, "eval")
    spec = dict(deny=(2.5, 3.5), approve=(0.5, 1.5))
    fit = approval_scores(fit_items, margins_for(labels, **spec, seed=3))
    evals = approval_scores(eval_items, margins_for(labels, **spec, seed=4))
    cell = diagnose(APPROVAL, "m", fit, evals, fit_items, eval_items)
    assert cell.default.score.estimate == pytest.approx(0.5)  # always "deny" at threshold 0
    assert cell.majority_decision == "deny" and cell.majority_share == 1.0
    assert cell.tuned.score.estimate == 1.0 and cell.tuned.eligible and not cell.default.eligible
    assert cell.auc.low is not None and cell.auc.low > 0.9
    assert cell.calibration.gap > 0.3  # confident "deny" on half the items: over-confident


def test_position_offsets_undo_a_position_bias() -> None:
    golds = [k % 4 for k in range(40)]
    fit_items, eval_items = rank_items(golds, "fit"), rank_items(golds, "eval")
    boost = {"1": 3.0}  # position 1 always looks best by 1 nat over the gold
    fit = rank_scores(fit_items, gold_lp=-1.0, other_lp=-3.0, position_boost=boost)
    evals = rank_scores(eval_items, gold_lp=-1.0, other_lp=-3.0, position_boost=boost)
    cell = diagnose(tasks.get("ranking"), "m", fit, evals, fit_items, eval_items)
    assert cell.majority_decision == "turn 1" and cell.majority_share == 1.0
    assert cell.default.metric == "ndcg@5"
    assert cell.tuned.score.estimate == 1.0 > (cell.default.score.estimate or 0)
    assert cell.offsets["2"] > 1.0  # the other positions were lifted relative to "1"


def test_calibration_gap_is_confidence_minus_accuracy() -> None:
    labels = balanced_labels(4)
    items = approval_items(labels, "eval")
    # margin ±ln 3 -> the chosen option has probability 0.75
    margins = [math.log(3), math.log(3), -math.log(3), -math.log(3)]
    # labels: approve, deny, approve, deny -> decisions deny, deny, approve, approve: 2 of 4
    cal = calibration(approval_scores(items, margins))
    assert cal.mean_confidence == pytest.approx(0.75)
    assert cal.accuracy == pytest.approx(0.5) and cal.gap == pytest.approx(0.25)


def test_scored_item_refuses_a_reading_without_logprobs() -> None:
    item = approval_items(["approve"], "eval")[0]
    reading = ItemReading(item_id=item.id, task="approval", prompt_id="p0",
                          options=["approve", "deny"], logprobs=None, logprob_ranking=None,
                          reply="approve", generation_ranking=["approve"])
    with pytest.raises(LogprobsUnsupportedError):
        scored_item(APPROVAL, item, reading)


# --- context-length probe ---------------------------------------------------------------------

def memory_items(conv: str, texts: list[str]) -> list[MemoryItem]:
    return [MemoryItem(id=f"memory-{conv}-{k}", split="eval", turn=t, label="skip",
                       provenance=PROV) for k, t in enumerate(texts)]


def probe_world() -> tuple[list[MemoryItem], RankItem]:
    convs = memory_items("c-b", ["b0", "b1 NEEDLE cat is Tom", "b2", "b3"])
    convs += memory_items("c-a", [f"a{k}" for k in range(12)])
    convs += memory_items("c-c", [f"c{k}" for k in range(12)])
    # a ranking item showing turns 1-3 of conversation c-b, gold = its turn 1 (shown first)
    rank = RankItem(id="ranking-q1", split="eval", query="cat name?",
                    turns=("b1 NEEDLE cat is Tom", "b2", "b3"), gold=0,
                    provenance=(PROV[0], PROV[0].model_copy(update={"record_id": "c-b#1-3"})))
    return convs[::-1], rank  # shuffled input order


def test_conversations_are_rebuilt_in_turn_order() -> None:
    items, _ = probe_world()
    convs = conversations(items)
    assert convs["c-b"] == ["b0", "b1 NEEDLE cat is Tom", "b2", "b3"]
    assert len(convs["c-a"]) == 12


def test_widened_ranking_keeps_the_gold_turn_and_pads_before_it() -> None:
    items, rank = probe_world()
    convs = conversations(items)
    for n in (4, 8, 16):
        wide = widen_ranking(rank, n, convs)
        assert len(wide.turns) == n and wide.turns[wide.gold] == "b1 NEEDLE cat is Tom"
        assert wide.turns[-4:] == ("b0", "b1 NEEDLE cat is Tom", "b2", "b3")
        assert not any(t.startswith("b") for t in wide.turns[:-4])  # padding is older history
    assert widen_ranking(rank, 4, convs).gold == 1  # the whole conversation, no padding


def test_memory_history_is_the_turns_just_before() -> None:
    items, _ = probe_world()
    convs = conversations(items)
    target = next(i for i in items if i.id == "memory-c-a-10")
    assert memory_history(target, 4, convs) == ["a6", "a7", "a8", "a9"]
    early = next(i for i in items if i.id == "memory-c-b-2")
    hist = memory_history(early, 8, convs)
    assert len(hist) == 8 and hist[-2:] == ["b0", "b1 NEEDLE cat is Tom"]
    text = history_messages(tasks.get("memory"), early, hist)[-1].content
    assert text.startswith("Earlier messages") and "[8] b1 NEEDLE" in text and "b2" in text


class ProbeModel(NeedleModel):
    """NeedleModel for ranking; on memory, "save" is likelier when the turn itself says
    KEEP; replies are empty (the probe reads log-probs)."""

    spec = "scripted:probe"

    def score(self, messages: Sequence[Message | dict[str, Any]], candidates: Sequence[str]
              ) -> list[CandidateScore]:
        if not any(c.lower() in ("save", "skip") for c in candidates):
            return super().score(messages, candidates)
        self.calls += 1
        turn = as_messages(messages)[-1].content.split("User message:\n")[-1]
        return [CandidateScore(candidate=c, logprob=(-0.1 if "KEEP" in turn else -3.0)
                               if c.lower() == "save" else -1.0, first_token_logprob=-1.0,
                               n_tokens=1) for c in candidates]

    def generate(self, messages: Sequence[Message | dict[str, Any]], **_: Any) -> Completion:
        return Completion(text="", prompt_tokens=1, completion_tokens=0, latency_s=0.0,
                          finish_reason="stop", model=self.spec)


def probe_fixture() -> tuple[list[MemoryItem], list[RankItem]]:
    items, rank = probe_world()
    # memory: eval turns of c-a and c-b, fit turns of c-c; the odd ones of c-a/c-c say KEEP
    # and are to be saved
    labelled = [i.model_copy(update={"label": "save", "turn": f"{i.turn} KEEP"})
                if not i.id.startswith("memory-c-b") and int(i.id.rsplit("-", 1)[1]) % 2
                else i for i in items]
    labelled = [i.model_copy(update={"split": "fit"}) if i.id.startswith("memory-c-c") else i
                for i in labelled]
    fit_rank = rank.model_copy(update={"id": "ranking-f1", "split": "fit"})
    return labelled, [rank, fit_rank]


def pools(memory: list[MemoryItem], ranking: list[RankItem]) -> list[tuple[Any, Any]]:
    return [(tasks.get("memory"), memory), (tasks.get("ranking"), ranking)]


def test_probe_scores_each_length_against_references_a_constant_cannot_beat(
        tmp_path: Path) -> None:
    memory, ranking = probe_fixture()
    steps = probe_steps(pools(memory, ranking), conversations(memory), lengths=(4, 8))
    assert [(s.block.task.name, s.block.prompt_id, s.n_turns) for s in steps] == [
        ("memory", "p0+4turns", 4), ("memory", "p0+8turns", 8),
        ("ranking", "p0", 4), ("ranking", "p0", 8)]
    with ReadingStore(tmp_path / "readings.sqlite") as store:
        points = read_probe(Session(store=store, loader=lambda _: ProbeModel()),
                            "scripted:probe", steps)
    by = {(p.cell.task, p.n_turns, p.cell.metric): p.cell for p in points}
    assert sorted(by) == [("memory", 4, "f1"), ("memory", 8, "f1"),
                          ("ranking", 4, "mrr"), ("ranking", 4, "ndcg@5"),
                          ("ranking", 8, "mrr"), ("ranking", 8, "ndcg@5")]
    for cell in by.values():  # tau is the best reference, constant answers included
        assert cell.tau == max(cell.baseline_scores.values())
        assert cell.tau_interval is not None and cell.score.low is not None
    assert {"always save", "always skip"} <= set(by[("memory", 4, "f1")].baseline_scores)
    assert {"first listed first", "last listed first", "bm25"} <= set(
        by[("ranking", 4, "mrr")].baseline_scores)
    memory_cell = by[("memory", 4, "f1")]
    assert memory_cell.score.estimate == 1.0  # the model saves exactly the KEEP turns
    assert by[("ranking", 8, "mrr")].score.estimate == 1.0
    assert by[("ranking", 8, "mrr")].n_items == 1


def test_probe_readings_resume_from_the_store_without_loading_the_model(
        tmp_path: Path) -> None:
    memory, ranking = probe_fixture()
    steps = probe_steps(pools(memory, ranking), conversations(memory), lengths=(4, 8))
    loads: list[str] = []

    def loader(spec: str) -> ProbeModel:
        loads.append(spec)
        return ProbeModel()

    with ReadingStore(tmp_path / "readings.sqlite") as store:
        first = read_probe(Session(store=store, loader=loader), "scripted:probe", steps)
        stored = store.count()
        again = Session(store=store, loader=loader)
        second = read_probe(again, "scripted:probe", steps)
    assert loads == ["scripted:probe"] and again.counts.read_now == 0
    assert again.counts.from_store == stored == sum(len(s.block.items) for s in steps)
    assert [p.model_dump() for p in first] == [p.model_dump() for p in second]
    # each history length is its own stored input: the 4- and 8-turn memory prompts differ
    with ReadingStore(tmp_path / "readings.sqlite") as store:
        prompts = {r["prompt_id"] for r in store.rows() if r["task"] == "memory"}
    assert prompts == {"p0+4turns", "p0+8turns"}


def test_probe_page_prints_every_cell_with_its_interval_and_tau(tmp_path: Path) -> None:
    memory, ranking = probe_fixture()
    steps = probe_steps(pools(memory, ranking), conversations(memory), lengths=(4,))
    points = read_probe(Session(loader=lambda _: ProbeModel()), "scripted:probe", steps)
    report = ProbeReport(command="slmbench probe -m scripted:probe", created="2026-12-01",
                         models=["scripted:probe"], lengths=[4], limit=None, points=points)
    page = probe_markdown(report)
    assert "slmbench probe -m scripted:probe" in page
    rows = [line for line in page.splitlines() if line.startswith("| memory")
            or line.startswith("| ranking")]
    assert len(rows) == len(points) == 3
    for row, point in zip(rows, points, strict=True):
        assert point.cell.tau_text in row and "[" in row.split("|")[6]
