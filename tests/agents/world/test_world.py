import datetime as dt
import json
from pathlib import Path

from slmbench.agents.world import World, describe

DOCS = Path(__file__).resolve().parents[3] / "docs" / "world.md"


def test_same_seed_gives_identical_world_and_other_seed_differs() -> None:
    assert World.create(0).snapshot() == World.create(0).snapshot()
    assert World.create(7).snapshot() == World.create(7).snapshot()
    assert World.create(0).snapshot()["sales"] != World.create(1).snapshot()["sales"]
    # only the sales part depends on the seed
    a, b = World.create(0).snapshot(), World.create(1).snapshot()
    for key in ("facts", "events", "employees", "products", "inbox"):
        assert a[key] == b[key]


def test_worlds_are_independent_copies() -> None:
    w1, w2 = World.create(), World.create()
    w1.events.clear()
    w1.inbox[0].read = True
    w1.files["x.txt"] = "x"
    assert len(w2.events) == 11 and not w2.inbox[0].read and "x.txt" not in w2.files
    assert len(World.create().events) == 11


def test_contents_match_the_documented_shape() -> None:
    w = World.create()
    assert len(w.facts) == 40 and len({f.key for f in w.facts}) == 40
    assert len(w.employees) == 14 and len(w.products) == 10 and len(w.sales) == 40
    assert len(w.inbox) == 9 and len(w.events) == 11
    assert w.today == dt.date(2025, 3, 10) and w.user == "alex.morgan@brightline.example"
    assert {e.date for e in w.events} <= {w.today + dt.timedelta(days=i) for i in range(5)}
    prices = {p.id: p.price for p in w.products}
    for s in w.sales:
        assert s.amount == round(s.quantity * prices[s.product_id], 2)
        assert dt.date(2025, 1, 1) <= s.date < w.today
    managers = {e.manager for e in w.employees} - {None}
    assert managers <= {e.id for e in w.employees}
    assert set(w.files) == {"sales_q1.csv", "regional_revenue.csv", "notes.txt"}
    assert w.files["sales_q1.csv"].count("\n") == 41  # header + 40 sales


def test_snapshot_is_plain_json_with_from_alias() -> None:
    snap = World.create().snapshot()
    back = json.loads(json.dumps(snap))
    assert back == snap
    assert snap["inbox"][0]["from"] == "dana.whitfield@brightline.example"
    assert snap["events"][0]["date"] == "2025-03-10"


def test_query_helpers() -> None:
    w = World.create()
    assert w.person("Sofia").id == "E04"
    assert w.person("MEI.CHEN@brightline.example").name == "Mei Chen"
    assert w.person("nobody") is None
    assert w.address("Priya Raman") == "priya.raman@brightline.example"
    assert [e.id for e in w.find_events(date=dt.date(2025, 3, 11), attendee="Alex Morgan")] == [
        "EV03", "EV04"]
    assert [e.id for e in w.find_events(title="planning")] == ["EV07"]
    busy = w.busy("Tom Becker", dt.date(2025, 3, 11), "15:00", "16:00")
    assert [e.id for e in busy] == ["EV05"]
    assert w.busy("Tom Becker", dt.date(2025, 3, 11), "15:30", "16:00") == []
    assert w.table("products")[5]["stock"] == 0


def test_docs_world_md_is_the_current_describe_output() -> None:
    assert DOCS.read_text() == describe(World.create(0)), (
        "regenerate with: python -m slmbench.agents.world > docs/world.md")
