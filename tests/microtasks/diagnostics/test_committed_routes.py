"""The routing table committed beside ``docs/results/reference-study.md`` (issue #17:
"`slmbench recommend` on that store prints the routing table; its JSON loads into
`Cascade`"; written by ``slmbench recommend docs/results/reference-study``): it loads, it is
what ``recommend`` makes of the matrices committed beside it (so it is regenerated with
them), and its ranking route drives the Cascade router."""

from __future__ import annotations

from pathlib import Path

from diag_fakes import NeedleModel
from test_cascade import easy_item, hard_item

from slmbench.microtasks import tasks
from slmbench.microtasks.baselines import BM25Turns
from slmbench.microtasks.diagnostics.cascade import Cascade, evaluate
from slmbench.microtasks.diagnostics.routes import RoutingTable
from slmbench.microtasks.recommend import load_matrices, recommend

PAGE = Path(__file__).resolve().parents[3] / "docs" / "results" / "reference-study"


def test_the_committed_routes_are_what_recommend_makes_of_the_committed_matrices() -> None:
    table = RoutingTable.load(PAGE / "routes.json")
    runs, _ = load_matrices(PAGE)
    assert {r.task for r in table.routes} == {t for r in runs for t in r.tasks}
    assert recommend(runs).routes().routes == table.routes


def test_the_committed_ranking_route_loads_into_the_cascade_router() -> None:
    route = RoutingTable.load(PAGE / "routes.json").route("ranking")
    model = NeedleModel()
    cascade = Cascade.from_route(route, tasks.get("ranking"), BM25Turns(), model)
    items = [hard_item(k) for k in range(5)] + [easy_item(k) for k in range(5)]
    share = evaluate(cascade, items).model_share.estimate
    if route.deploy == "baseline":
        assert share == 0.0 and model.calls == 0  # BM25 answers every item alone
    else:
        assert share is not None and share > 0.0 and model.calls > 0
