import datetime as dt
import json
from pathlib import Path

import pytest

from slmbench.agents.world import World, describe

DOCS = Path(__file__).resolve().parents[3] / "docs" / "world.md"


def test_same_seed_gives_identical_world_and_other_seed_differs() -> None:
    assert World.create(0).snapshot() == World.create(0).snapshot()
    assert World.create(7).snapshot() == World.create(7).snapshot()
    assert World.create(7).slots == World.create(7).slots
    a, b = World.create(0).snapshot(), World.create(1).snapshot()
    for key in ("facts", "events", "employees", "products", "sales", "inbox", "files"):
        assert a[key] != b[key], key


def test_seed_0_is_the_curated_world_of_world_yaml() -> None:
    w = World.create(0)
    assert w.slots["ceo"] == "Dana Whitfield" and w.slots["peak_height"] == 4612
    assert [f.key for f in w.facts][8:10] == ["varrick_height", "veldt_river_length"]
    assert w.facts[8].text == ("Mount Varrick, the highest peak of the Halden Range, rises "
                               "4,612 metres above sea level (2019 survey).")
    assert w.email("M09").body.startswith("Good news: Harbor Logistics wants 12 Laptop Pro 14")
    assert "- Security Suite License stock is low (8 units)." in w.files["notes.txt"]


def _minutes(hhmm: str) -> int:
    return int(hhmm[:2]) * 60 + int(hhmm[3:])


@pytest.mark.parametrize("seed", range(1, 41))
def test_a_drawn_world_is_consistent_by_construction(seed: int) -> None:
    w, curated = World.create(seed), World.create(0)
    week = {w.today + dt.timedelta(days=i) for i in range(5)}
    people = {e.email for e in w.employees}
    firsts = [e.name.split()[0] for e in w.employees]
    assert len(set(firsts)) == len(firsts)  # a first name names one colleague
    assert not {e.name for e in w.employees} & {e.name for e in curated.employees}
    assert {e.manager for e in w.employees} - {None} <= {e.id for e in w.employees}
    for e in w.events:
        assert e.date in week and set(e.attendees) <= people
        assert "09:00" <= e.start < e.end <= "17:00"
    for a in w.events:
        for b in w.events:
            if a.id < b.id and a.date == b.date and set(a.attendees) & set(b.attendees):
                assert _minutes(a.end) <= _minutes(b.start) or _minutes(b.end) <= _minutes(a.start)
    outside = {"it-support@brightline.example", "hr@brightline.example",
               "security-team@brightline-support.example",
               f"billing@{w.slots['vendor_key']}.example"}
    assert {m.sender for m in w.inbox} <= people | outside
    assert len({m.date for m in w.inbox}) == len(w.inbox)  # "the most recent" is one message
    assert not max(w.inbox, key=lambda m: m.date).read
    order = next(p for p in w.products if p.name == w.slots["order_product"])
    assert 0 < int(w.slots["order_qty"]) < order.stock
    prices = {p.id: p.price for p in w.products}
    for s in w.sales:
        assert s.amount == round(s.quantity * prices[s.product_id], 2)
        assert w.person(s.employee_id).department == "Sales"
    stocks = sorted(p.stock for p in w.products)
    assert stocks[0] == 0 and 1 <= stocks[1] <= 9 and stocks[2] >= 10
    assert 0 < w.slots["q1_target"] < sum(s.amount for s in w.sales)
    assert w.slots["invoice_due"] != w.slots["vendor_renewal"]
    maintenance = dt.date.fromisoformat(str(w.slots["maintenance_date"]))
    assert maintenance.weekday() >= 5 and maintenance > max(week)
    assert maintenance != dt.date.fromisoformat(str(curated.slots["maintenance_date"]))
    assert len({f.key for f in w.facts}) == len(w.facts)
    assert f"its CEO is {w.slots['ceo']}." in w.facts[32].text
    assert f"has {len(w.employees)} employees" in w.facts[33].text


def test_worlds_are_independent_copies() -> None:
    w1, w2 = World.create(), World.create()
    w1.events.clear()
    w1.inbox[0].read = True
    w1.files["x.txt"] = "x"
    assert len(w2.events) == 11 and not w2.inbox[0].read and "x.txt" not in w2.files
    assert len(World.create().events) == 11


def test_a_kept_world_is_never_handed_out() -> None:
    """World.create copies the seed's world built once: changing a copy (its slots too)
    changes neither the next copy nor the fresh snapshot a trial is diffed against."""
    from slmbench.agents.world.core import fresh_snapshot

    w = World.create(5)
    w.employees[0].name = "Changed"
    w.slots.clear()
    w.files["notes.txt"] = "changed"
    built = World._build(5)
    assert World.create(5) == built and World.create(5).slots == built.slots
    assert fresh_snapshot(5) == built.snapshot()


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
