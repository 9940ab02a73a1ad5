"""``recommend``: baseline, model or cascade per task, with evidence and cost; its routing
table loads into the Cascade router."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from diag_fakes import NeedleModel
from seq_fakes import Oracle, write_approval
from test_cascade import easy_item, hard_item

from slmbench.core.errors import ConfigError
from slmbench.microtasks import tasks as registry
from slmbench.microtasks.baselines import BM25Turns
from slmbench.microtasks.diagnostics.cascade import (
    Cascade,
    CascadeReport,
    evaluate,
    shortlist_rerank,
)
from slmbench.microtasks.diagnostics.routes import RoutingTable
from slmbench.microtasks.diagnostics.shortlists import model_orderer
from slmbench.microtasks.eligibility import make_cell
from slmbench.microtasks.matrix import MatrixRun, run_matrix
from slmbench.microtasks.recommend import load_matrices, recommend
from slmbench.microtasks.store import ReadingStore

APPROVAL = registry.get("approval")
RANKING = registry.get("ranking")


def _approval_run(tmp_path: Path, specs: list[str]) -> MatrixRun:
    golds = write_approval(tmp_path)
    models = {s: Oracle(golds, wrong="wrong" in s, spec=s) for s in specs}
    with ReadingStore(tmp_path / "readings.sqlite") as store:
        run = run_matrix(specs, [APPROVAL], ["p0"], source=tmp_path,
                         loader=lambda spec: models[spec], store=store, sequential=True)
    (tmp_path / "eligibility.json").write_text(run.model_dump_json())
    return run


def test_an_eligible_model_is_recommended_with_its_evidence_and_cost(tmp_path: Path) -> None:
    _approval_run(tmp_path, ["scripted:right", "scripted:wrong"])
    runs, store_path = load_matrices(tmp_path)
    assert store_path == tmp_path / "readings.sqlite"
    with ReadingStore(store_path) as store:
        rec = recommend(runs, store=store)
    (task,) = rec.tasks
    assert task.deploy == "model" and task.model == "scripted:right"
    assert task.score is not None and task.score.low is not None
    assert task.score.low > task.baseline_score and task.diff is not None
    assert task.cost is not None and task.cost.readings == task.score.n
    assert task.cost.median_tokens == 10 + 1 + 4  # prompt, reply, approve Approve deny Deny
    assert task.cost.median_seconds is not None and task.cost.median_seconds > 0
    assert task.baseline_interval is not None and task.n_items == 400


def test_nothing_eligible_names_the_cheaper_baseline(tmp_path: Path) -> None:
    run = _approval_run(tmp_path, ["scripted:wrong"])
    (task,) = recommend([run]).tasks
    assert task.deploy == "baseline" and task.model is None
    assert task.baseline == run.cells[0].tau_anchor
    assert "not shown better" in task.why or "no configuration" in task.why


def _ranking_run() -> MatrixRun:
    golds = ["1", "2"] * 20
    cell = make_cell(task=RANKING, metric="ndcg@5", model="needle", precision="-",
                     prompt_id="p0", reading="logprob", golds=golds,
                     rankings=[["1", "2"]] * 40, baselines={"bm25": [[g] for g in golds]})
    return MatrixRun(command="t", created=datetime.now(UTC).isoformat(), models=["needle"],
                     tasks=["ranking"], prompts=["p0"], limit=None, seed=0, items={},
                     baseline_scores={}, cells=[cell], tau_sweep=[], by_prompt=[],
                     readings=[], notes=[])


def test_a_cascade_that_beats_the_baseline_is_routed_and_its_table_loads(
        tmp_path: Path) -> None:
    model = NeedleModel()
    fit = [hard_item(k) for k in range(6)] + [easy_item(k) for k in range(6)]
    items = [hard_item(k) for k in range(10, 30)] + [easy_item(k) for k in range(10, 30)]
    ask = model_orderer(model, RANKING)
    router = evaluate(Cascade.fit(RANKING, BM25Turns(), ask, fit, model="needle", k=2), items)
    report = CascadeReport(command="t", created="now", model="needle", task="ranking", k=2,
                           n_fit=len(fit), router=router,
                           rerank=shortlist_rerank(ask, RANKING, BM25Turns(), items,
                                                   model="needle", k=2))
    rec = recommend([_ranking_run()], cascades=[report])
    (task,) = rec.tasks
    assert task.deploy == "cascade" and task.margin == router.margin
    path = tmp_path / "routes.json"
    path.write_text(rec.routes().model_dump_json())
    table = RoutingTable.load(path)
    cascade = Cascade.from_route(table.route("ranking"), RANKING, BM25Turns(),
                                 model)
    model.calls = 0
    assert evaluate(cascade, items).accuracy.estimate == 1.0
    assert model.calls == 20  # the hard half, as fitted
    # without the cascade report: the baseline, which never calls the model
    plain = recommend([_ranking_run()]).routes()
    model.calls = 0
    always_baseline = Cascade.from_route(plain.route("ranking"), RANKING,
                                         BM25Turns(), model)
    assert evaluate(always_baseline, items).model_share.estimate == 0.0 and model.calls == 0
    with pytest.raises(ConfigError, match="no route for tools"):
        table.route("tools")
    # a second report for the task whose router does not win, before or after: the winner
    # is routed either way (the highest lower bound of the paired gain)
    never = Cascade(RANKING, BM25Turns(), ask, 0.0, model="other", k=2)  # margin 0: BM25 alone
    loser = report.model_copy(update={"model": "other", "router": evaluate(never, items)})
    assert loser.router.mrr_gain.estimate == 0.0
    for order in ([report, loser], [loser, report]):
        (task,) = recommend([_ranking_run()], cascades=order).tasks
        assert task.deploy == "cascade" and task.model == "needle"


def test_a_file_that_is_not_a_matrix_or_a_table_is_a_one_line_error(tmp_path: Path) -> None:
    (tmp_path / "eligibility.json").write_text("{}")
    with pytest.raises(ConfigError, match="not an eligibility matrix"):
        load_matrices(tmp_path)
    (tmp_path / "routes.json").write_text("[]")
    with pytest.raises(ConfigError, match="not a routing table"):
        RoutingTable.load(tmp_path / "routes.json")


def test_nothing_to_recommend_from_is_an_error() -> None:
    with pytest.raises(ConfigError, match="no eligibility cell to recommend from"):
        recommend([])
