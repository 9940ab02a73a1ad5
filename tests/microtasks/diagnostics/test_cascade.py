"""Shortlist re-rank gain over BM25 (paired) and the Cascade router (fit margin, routing)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from diag_fakes import PROV, NeedleModel

from slmbench.cli.main import main
from slmbench.core.errors import ConfigError
from slmbench.microtasks import tasks
from slmbench.microtasks.baselines import BM25Turns
from slmbench.microtasks.datasets.records import RankItem
from slmbench.microtasks.diagnostics.cascade import (
    Cascade,
    CascadeReport,
    best_margin,
    evaluate,
    run_cascade,
    shortlist_rerank,
)
from slmbench.microtasks.diagnostics.shortlists import Orderer, model_orderer, top_margin
from slmbench.microtasks.session import Session
from slmbench.microtasks.store import ReadingStore
from slmbench.models.scripted import Script, ScriptedModel
from slmbench.report.cascade_page import cascade_markdown
from slmbench.report.study_facts import num

RANKING = tasks.get("ranking")


def needle() -> Orderer:
    """The needle model's order of a ranking shortlist, asked at run time."""
    return model_orderer(NeedleModel(), RANKING)


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
    result = shortlist_rerank(needle(), RANKING, BM25Turns(), items, model="n", k=2)
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
    result = shortlist_rerank(needle(), RANKING, BM25Turns(), [item], model="n", k=2)
    assert result.items[0].baseline[-1] == "2"  # BM25 ranks the gold last: not shortlisted
    assert result.items[0].reranked[-1] == "2"
    with pytest.raises(ConfigError, match="k >= 2"):
        shortlist_rerank(needle(), RANKING, BM25Turns(), [item], model="n", k=1)


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
    cascade = Cascade.fit(RANKING, BM25Turns(), model_orderer(model, RANKING), fit,
                          model=model.spec, k=2)
    hard_gap = top_margin(BM25Turns().scores(hard_item(99)))
    easy_gap = top_margin(BM25Turns().scores(easy_item(99)))
    assert hard_gap < cascade.margin <= easy_gap
    model.calls = 0
    items = [hard_item(k) for k in range(10, 20)] + [easy_item(k) for k in range(10, 20)]
    report = evaluate(cascade, items)
    assert model.calls == 10  # only the unsure (hard) items reached the model
    assert model.generations == 0  # at run time the router scores; it never generates
    assert report.model_share.estimate == pytest.approx(0.5)
    assert report.accuracy.estimate == 1.0 and report.baseline_accuracy.estimate == 0.5
    assert report.mean_latency_model_s is not None and report.mean_latency_baseline_s is not None


# --- a cascade run through the read loop -------------------------------------------------------

def write_ranking(home: Path) -> None:
    """A built ranking dataset: hard and easy items in both splits."""
    items = [*(hard_item(k) for k in range(8)), *(easy_item(k) for k in range(8))]
    fit = [i.model_copy(update={"id": f"fit-{i.id}", "split": "fit"})
           for k in range(50, 54) for i in (hard_item(k), easy_item(k))]
    (home / "datasets").mkdir(parents=True)
    (home / "datasets" / "ranking.jsonl").write_text(
        "".join(i.model_dump_json() + "\n" for i in [*items, *fit]), encoding="utf-8")


@pytest.fixture
def ranking_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    write_ranking(home)
    monkeypatch.setenv("SLMBENCH_HOME", str(home))
    return home


def test_a_cascade_run_reads_each_shortlist_once_through_the_store_and_resumes(
        ranking_home: Path, tmp_path: Path) -> None:
    loads: list[NeedleModel] = []

    def loader(spec: str) -> NeedleModel:
        loads.append(NeedleModel())
        return loads[-1]

    with ReadingStore(tmp_path / "readings.sqlite") as store:
        first = run_cascade("scripted:needle", RANKING, k=2,
                            session=Session(store=store, loader=loader))
        ids = [r["item_id"] for r in store.rows()]
        again = run_cascade("scripted:needle", RANKING, k=2,
                            session=Session(store=store, loader=loader))
    # 16 eval + 8 fit items, one stored reading per shortlist; the router's eval decisions
    # reuse the re-rank's readings instead of asking the model again
    assert len(loads) == 1 and loads[0].calls == 24 and len(ids) == 24
    assert all("|" in i for i in ids) and "hard-0|2/3" in ids  # <item>|<kept options>
    assert first.read_counts.read_now == 24 and again.read_counts.read_now == 0
    assert again.read_counts.from_store == 24
    # the same decisions and numbers, latencies included: they are the stored readings' own
    # model time (BM25's milliseconds are not stored, so not counted), so a page regenerated
    # from the store is the same page
    assert again.rerank.gains == first.rerank.gains
    assert [i.reranked for i in again.rerank.items] == [i.reranked for i in first.rerank.items]
    assert again.router.model_dump() == first.router.model_dump()
    assert first.router.mean_latency_baseline_s == 0.0
    acc = next(g for g in first.rerank.gains if g.metric == "accuracy")
    assert acc.baseline == pytest.approx(0.5) and acc.cascade == 1.0  # the needle re-ranked
    router = first.router
    assert router.model_share.estimate == pytest.approx(0.5)  # the hard half only
    assert router.accuracy.estimate == 1.0 and first.n_fit == 8
    assert router.mean_latency_model_s is not None and router.mean_latency_baseline_s is not None


def test_the_cascade_page_says_what_each_interval_says(ranking_home: Path) -> None:
    report = run_cascade("scripted:needle", RANKING, k=2,
                         command="slmbench cascade -m scripted:needle --k 2",
                         session=Session(loader=lambda _: NeedleModel()))
    page = cascade_markdown(report)
    assert "slmbench cascade -m scripted:needle --k 2" in page
    for gain in report.rerank.gains:
        row = next(line for line in page.splitlines() if line.startswith(f"| {gain.metric} |"))
        assert num(gain.gain) in row
    assert "accuracy helps (the interval lies above 0)" in page
    assert "top-1 is the gold item on 16 of 16 items, BM25's on 8" in page
    assert num(report.router.model_share) in page and "Readings: 0 from the store" in page


def test_a_backend_without_logprobs_cannot_rerank(ranking_home: Path) -> None:
    model = ScriptedModel(Script(default="1"), spec="scripted:one")
    with pytest.raises(ConfigError, match="gives no log-probabilities"):
        run_cascade("scripted:one", RANKING, k=2, session=Session(loader=lambda _: model))


def test_the_cascade_command_writes_its_page_and_rewrites_it_from_the_store(
        ranking_home: Path, tmp_path: Path) -> None:
    script = tmp_path / "first.json"  # always puts turn 1 first, by log-prob
    script.write_text(json.dumps({"default": "1", "logprobs": {"*": -3.0, "1": -0.1}}))
    out = tmp_path / "out"
    argv = ["cascade", "-m", f"scripted:{script}", "--k", "2", "--out", str(out)]
    for _ in range(2):
        with pytest.raises(SystemExit) as done:
            main(argv)
        assert done.value.code == 0
    page = (out / "cascade.md").read_text()
    assert "Readings: 24 from the store, 0 read now" in page  # the second run loaded no model
    report = CascadeReport.model_validate_json((out / "cascade.json").read_text())
    assert report.read_counts.from_store == 24 and (out / "readings.sqlite").is_file()
    assert cascade_markdown(report) == page


def test_a_study_cascade_block_reads_into_the_study_store_and_its_page_shows_it(
        ranking_home: Path, tmp_path: Path) -> None:
    """A ``[[cascade]]`` block of a study file: planned (one reading per shortlist), read by
    ``run_cascades`` into the study's readings store once, and rebuilt from the store alone
    on the page (its row beside the Part B seed's cascade figure)."""
    from rich.console import Console

    from slmbench.report.cascade_page import rerank_gain
    from slmbench.study import load_study, run_cascades, size_plan, write_page

    path = tmp_path / "c.toml"
    path.write_text('name = "c"\nout = "runs/c"\npage = "docs/c.md"\n'
                    '[[cascade]]\nmodel = "scripted:needle"\nk = 2\n', encoding="utf-8")
    study = load_study(path, base=tmp_path)
    before = write_page(study, study_file=Path("c.toml"), command="c").read_text()
    assert "Cascade C1: no reading stored yet" in before
    assert "| C1 | needle | cascade on ranking: BM25's top 2 re-ranked by log-prob" in before
    [row] = size_plan(study)
    assert (row.block, row.unit, row.planned, row.stored) == ("C1", "reading", 24, 0)

    loads: list[NeedleModel] = []

    def loader(spec: str) -> NeedleModel:
        loads.append(NeedleModel())
        return loads[-1]

    run_cascades(study, None, Console(quiet=True), loader=loader)
    run_cascades(study, None, Console(quiet=True), loader=loader)  # all stored: no load
    assert len(loads) == 1 and loads[0].calls == 24
    [row] = size_plan(study)
    assert row.stored == 24 and row.spent_s > 0
    text = write_page(study, study_file=Path("c.toml"), command="c").read_text()
    assert "Cascade C1" not in text  # nothing incomplete
    with ReadingStore(study.part_b_dir / "readings.sqlite") as store:
        report = run_cascade("scripted:needle", RANKING, k=2, session=Session(store=store))
    section = text.split("## Cascade: BM25's shortlist re-ranked by the model", 1)[1]
    assert f"| needle | ranking | 2 | 16 / 8 | {num(rerank_gain(report))} |" in section
    assert f"needle re-ranking BM25's top 2 (16 eval items): MRR {num(rerank_gain(report))}" \
        in text
    # another model's filter leaves the block alone
    run_cascades(study, ["other:model"], Console(quiet=True), loader=loader)
    assert len(loads) == 1
    # with readings missing, the page leaves the block out and says how many are stored
    import sqlite3

    with sqlite3.connect(study.part_b_dir / "readings.sqlite") as db:
        db.execute("DELETE FROM readings WHERE rowid IN (SELECT rowid FROM readings LIMIT 4)")
    text = write_page(study, study_file=Path("c.toml"), command="c").read_text()
    assert "Cascade C1: needle on ranking has 20 of 24 shortlist readings stored" in text
    assert "## Cascade: BM25's shortlist" not in text and len(loads) == 1
