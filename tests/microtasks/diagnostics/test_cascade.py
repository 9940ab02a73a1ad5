"""Shortlist re-rank gain over BM25 (paired) and the Cascade router (fit margin, routing)."""

from __future__ import annotations

import pytest
from diag_fakes import PROV, NeedleModel

from slmbench.core.errors import ConfigError
from slmbench.microtasks.datasets.records import RankItem
from slmbench.microtasks.diagnostics.cascade import (
    BM25Turns,
    Cascade,
    best_margin,
    evaluate,
    shortlist_rerank,
    top_margin,
)


def hard_item(k: int) -> RankItem:
    """BM25 narrowly prefers a decoy sharing two of the question's words; gold is second."""
    turns = ("the weather was nice today", "decoy about a cat name",
             "NEEDLE my cat is called Tom", "we ate pasta at noon")
    return RankItem(id=f"hard-{k}", split="eval", query=f"what is my cat name question {k}",
                    turns=turns, gold=2, provenance=PROV)


def easy_item(k: int) -> RankItem:
    """Only the gold turn shares words with the question: BM25 is right and sure of it."""
    turns = (f"NEEDLE flight booked to Lisbon {k} on Friday, Lisbon flight",
             "the weather was nice today", "we ate pasta at noon", "music was loud")
    return RankItem(id=f"easy-{k}", split="eval", query=f"when is my flight to Lisbon {k}",
                    turns=turns, gold=0, provenance=PROV)


def test_bm25_is_fooled_by_the_decoy_and_sure_on_easy_items() -> None:
    bm25 = BM25Turns()
    hard = bm25.scores(hard_item(0))
    assert max(hard, key=hard.__getitem__) == "2"  # the decoy
    assert max(bm25.scores(easy_item(0)).items(), key=lambda kv: kv[1])[0] == "1"


def test_rerank_gain_is_paired_and_its_interval_excludes_zero() -> None:
    items = [hard_item(k) for k in range(12)] + [easy_item(k) for k in range(12)]
    result = shortlist_rerank(NeedleModel(), BM25Turns(), items, k=2)
    acc = next(g for g in result.gains if g.metric == "accuracy")
    assert acc.baseline == pytest.approx(0.5) and acc.cascade == 1.0
    assert acc.gain.estimate == pytest.approx(0.5)
    assert acc.gain.low is not None and acc.gain.low > 0
    mrr = next(g for g in result.gains if g.metric == "mrr")
    assert mrr.gain.estimate == pytest.approx(0.25)  # hard items: rank 2 -> 1


def test_rerank_cannot_recover_a_gold_outside_the_shortlist() -> None:
    item = RankItem(id="out", split="eval", query="what is my cat name",
                    turns=("a cat name list", "NEEDLE he is called Tom", "my cat sleeps"),
                    gold=1, provenance=PROV)
    result = shortlist_rerank(NeedleModel(), BM25Turns(), [item], k=2)
    assert result.items[0].baseline[-1] == "2"  # BM25 ranks the gold last: not shortlisted
    assert result.items[0].reranked[-1] == "2"
    with pytest.raises(ConfigError, match="k >= 2"):
        shortlist_rerank(NeedleModel(), BM25Turns(), [item], k=1)


def test_best_margin_sends_only_unsure_items_to_the_model() -> None:
    # (baseline margin, baseline right, model right)
    rows = [(0.1, False, True), (0.2, False, True), (3.0, True, False), (4.0, True, False)]
    cut = best_margin(rows)
    assert 0.2 < cut <= 3.0
    # a model that is never better than the baseline is never consulted
    assert best_margin([(0.1, True, False), (2.0, True, True)]) == 0.0


def test_cascade_routes_by_margin_and_counts_model_calls() -> None:
    fit = [hard_item(k) for k in range(6)] + [easy_item(k) for k in range(6)]
    model = NeedleModel()
    cascade = Cascade.fit(BM25Turns(), model, fit, k=2)
    hard_gap = top_margin(BM25Turns().scores(hard_item(99)))
    easy_gap = top_margin(BM25Turns().scores(easy_item(99)))
    assert hard_gap < cascade.margin <= easy_gap
    model.calls = 0
    items = [hard_item(k) for k in range(10, 20)] + [easy_item(k) for k in range(10, 20)]
    report = evaluate(cascade, items)
    assert model.calls == 10  # only the unsure (hard) items reached the model
    assert report.model_share.estimate == pytest.approx(0.5)
    assert report.accuracy.estimate == 1.0 and report.baseline_accuracy.estimate == 0.5
    assert report.mean_latency_model_s is not None and report.mean_latency_baseline_s is not None
