"""Threshold diagnostics: AUC, offsets fitted on the fit split only, calibration, bias."""

from __future__ import annotations

import math

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
from slmbench.microtasks.datasets.records import MemoryItem, RankItem
from slmbench.microtasks.diagnostics.probes import (
    conversations,
    memory_history,
    memory_messages,
    probe_ranking,
    widen_ranking,
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
    offsets = fit_offsets("approval", fit)
    assert 1.5 < -offsets["deny"] < 2.5
    cell = diagnose("approval", "m", fit, evals, fit_items, eval_items)
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
    cell = diagnose("approval", "m", fit, evals, fit_items, eval_items)
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
    cell = diagnose("ranking", "m", fit, evals, fit_items, eval_items)
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
        scored_item(item, reading)


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
    text = memory_messages(early, hist)[-1].content
    assert text.startswith("Earlier messages") and "[8] b1 NEEDLE" in text and "b2" in text


def test_probe_reports_a_point_per_length_with_the_baseline() -> None:
    items, rank = probe_world()
    points = probe_ranking(NeedleModel(), [rank], conversations(items), lengths=(4, 8))
    assert [(p.n_turns, p.metric) for p in points] == [(4, "ndcg@5"), (4, "mrr"),
                                                       (8, "ndcg@5"), (8, "mrr")]
    assert all(p.score.estimate == 1.0 and p.baseline_name == "bm25" for p in points)
