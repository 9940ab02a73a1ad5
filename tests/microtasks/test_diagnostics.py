"""Threshold diagnostics: AUC, offsets fitted on the fit split only, calibration, bias."""

from __future__ import annotations

import math

import pytest
from diag_fakes import (
    approval_items,
    approval_scores,
    balanced_labels,
    margins_for,
    rank_items,
    rank_scores,
)

from slmbench.errors import LogprobsUnsupportedError
from slmbench.microtasks.diagnostics import (
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
    assert cell.tuned.score == pytest.approx(0.5)
    assert cell.auc.estimate == 1.0


def test_miscalibrated_but_separating_model_is_fixed_by_the_threshold() -> None:
    labels = balanced_labels(60)
    fit_items, eval_items = approval_items(labels, "fit"), approval_items(labels, "eval")
    spec = dict(deny=(2.5, 3.5), approve=(0.5, 1.5))
    fit = approval_scores(fit_items, margins_for(labels, **spec, seed=3))
    evals = approval_scores(eval_items, margins_for(labels, **spec, seed=4))
    cell = diagnose("approval", "m", fit, evals, fit_items, eval_items)
    assert cell.default.score == pytest.approx(0.5)  # always "deny" at threshold 0
    assert cell.majority_decision == "deny" and cell.majority_share == 1.0
    assert cell.tuned.score == 1.0 and cell.tuned.eligible and not cell.default.eligible
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
    assert cell.tuned.score == 1.0 > cell.default.score
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
