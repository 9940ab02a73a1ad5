"""A scripted agent drives all ten tools; the world changes exactly as each call says."""

import datetime as dt
import json

import pytest

from slmbench.agents.tools.toolbox import TOOL_NAMES, WorldToolbox
from slmbench.agents.world import World


@pytest.fixture
def box() -> WorldToolbox:
    return WorldToolbox(World.create(0))


def ok(box: WorldToolbox, name: str, **args: object) -> dict:
    result = box.call(name, args)
    assert result.ok, result.observation
    assert result.injected_fault is None
    return json.loads(result.observation)


def test_all_ten_tools_are_offered_with_strict_schemas(box: WorldToolbox) -> None:
    specs = box.specs()
    assert [s.name for s in specs] == list(TOOL_NAMES) and len(specs) == 10
    for s in specs:
        assert s.parameters["additionalProperties"] is False
        assert s.description
        assert s.openai_format()["function"]["name"] == s.name
        assert '"title": "' not in json.dumps(s.parameters)  # no pydantic title noise
    calendar = next(s for s in specs if s.name == "calendar").parameters
    assert calendar["properties"]["title"]["anyOf"]  # a *field* named title is kept


def test_scripted_session_touches_every_tool(box: WorldToolbox) -> None:
    w = box.world
    hits = ok(box, "web_search", query="How tall is the Lantern Tower?")["results"]
    assert hits[0]["key"] == "lantern_tower_height"
    assert "287 metres" in ok(box, "fact_lookup", key="lantern_tower_height")["text"]

    # calendar: create, check, cancel
    created = ok(box, "calendar", action="create", title="Stock check", date="2025-03-12",
                 start="10:00", end="10:30", attendees=["Tom Becker"])["created"]
    assert created["id"] == "EV100"
    assert created["attendees"] == ["alex.morgan@brightline.example",
                                    "tom.becker@brightline.example"]
    assert [e.id for e in w.find_events(title="Stock check")] == ["EV100"]
    avail = ok(box, "calendar", action="check_availability", date="2025-03-12",
               start="10:15", end="11:00", attendees=["tom.becker@brightline.example"])
    assert avail["all_free"] is False
    listed = ok(box, "calendar", action="list", date="2025-03-12")["events"]
    assert [e["id"] for e in listed] == ["EV06", "EV07", "EV100"]
    ok(box, "calendar", action="cancel", event_id="EV06")
    assert w.event("EV06") is None and len(w.events) == 11

    # the first slot where Alex, Priya and Sofia are all free for an hour
    meeting = ok(box, "schedule_meeting", title="Pricing review",
                 attendees=["Priya Raman", "Sofia"], duration_minutes=60)["scheduled"]
    assert (meeting["date"], meeting["start"], meeting["end"]) == ("2025-03-10", "09:30", "10:30")
    assert w.event(meeting["id"]).attendees == [
        "alex.morgan@brightline.example", "priya.raman@brightline.example",
        "sofia.alvarez@brightline.example"]

    eng = ok(box, "query_table", table="employees", filters={"department": "Engineering"},
             columns=["name"], order_by="name")
    assert [r["name"] for r in eng["rows"]] == ["Jamal Carter", "Mei Chen", "Priya Raman",
                                                "Tom Becker"]
    total = ok(box, "query_table", table="sales", aggregate="sum", aggregate_column="amount")
    assert total["value"] == pytest.approx(sum(s.amount for s in w.sales))

    west = ok(box, "csv_processor", operation="aggregate", file="regional_revenue.csv",
              column="revenue", function="sum", filters=[{"column": "region", "value": "West"}])
    assert west["value"] == 47600 + 49100 + 46300 + 55800

    out = ok(box, "code_interpreter", code=(
        "import csv\nrows = list(csv.DictReader(open('sales_q1.csv')))\n"
        "print(len(rows), round(sum(float(r['amount']) for r in rows), 2))"))
    assert out["stdout"].split() == ["40", f"{sum(s.amount for s in w.sales):.1f}"]

    ok(box, "file_manager", action="write", path="report.txt", content="Q1 total: 84674")
    assert w.files["report.txt"] == "Q1 total: 84674"
    assert ok(box, "file_manager", action="read", path="./report.txt")["content"].startswith("Q1")
    ok(box, "file_manager", action="delete", path="notes.txt")
    assert "notes.txt" not in w.files
    names = [f["name"] for f in ok(box, "file_manager", action="list")["files"]]
    assert names == ["regional_revenue.csv", "report.txt", "sales_q1.csv"]

    unread = ok(box, "email", action="list", unread_only=True)["emails"]
    assert "M01" in [m["id"] for m in unread]
    assert ok(box, "email", action="read", email_id="M01")["from"] == (
        "dana.whitfield@brightline.example")
    assert w.email("M01").read is True
    found = ok(box, "email", action="search", query="invoice")["emails"]
    assert [m["id"] for m in found] == ["M04"]
    ok(box, "email", action="send", to="Dana Whitfield", subject="Q1 sales",
       body="Total: 84674.00")
    assert [m.subject for m in w.sent_to("dana.whitfield@brightline.example")] == ["Q1 sales"]
    assert w.sent[0].date == dt.date(2025, 3, 10)

    ok(box, "notify", channel="slack", recipient="#ops", message="Report ready")
    ok(box, "notify", channel="email", recipient="Grace", message="Stock confirmed")
    assert [n.message for n in w.notifications_to("#ops", "slack")] == ["Report ready"]
    assert w.notifications_to("grace.okafor@brightline.example")[0].channel == "email"

    assert [c.name for c in box.calls if c.ok] and all(c.ok for c in box.calls)
    assert set(TOOL_NAMES) == {c.name for c in box.calls}
    snap = w.snapshot()
    assert snap["sent"][0]["to"] == ["dana.whitfield@brightline.example"]
    assert len(snap["notifications"]) == 2


def test_schedule_meeting_respects_busy_attendees_and_the_given_day(box: WorldToolbox) -> None:
    # Wednesday: Alex busy 09:00-10:00 and 13:00-16:00; Tom busy 09:00-10:00
    m = ok(box, "schedule_meeting", title="Sync", attendees=["Tom"], duration_minutes=180,
           date="2025-03-12")["scheduled"]
    assert (m["start"], m["end"]) == ("10:00", "13:00")
    r = box.call("schedule_meeting", {"title": "Long", "attendees": ["Tom"],
                                      "duration_minutes": 240, "date": "2025-03-12"})
    assert not r.ok and "no common free 240-minute slot" in r.observation


def test_a_single_attendee_may_be_given_as_a_string(box: WorldToolbox) -> None:
    m = ok(box, "schedule_meeting", title="Chat", attendees="Mei Chen, Ben Foster",
           date="2025-03-14")["scheduled"]
    assert m["attendees"][1:] == ["mei.chen@brightline.example", "ben.foster@brightline.example"]
    assert m["start"] == "09:00"


def test_email_to_an_unknown_person_is_refused_and_nothing_is_sent(box: WorldToolbox) -> None:
    r = box.call("email", {"action": "send", "to": ["Bob"], "subject": "hi", "body": "x"})
    assert not r.ok and "unknown recipient 'Bob'" in r.observation
    assert box.world.sent == []


def test_query_table_reports_unknown_columns(box: WorldToolbox) -> None:
    r = box.call("query_table", {"table": "products", "filters": [{"column": "colour",
                                                                   "value": "red"}]})
    assert not r.ok and "columns are: id, name, category, price, stock" in r.observation


def test_csv_processor_inline_sort_and_summary(box: WorldToolbox) -> None:
    data = "item,qty\nb,10\na,2\nc,7\n"
    top = ok(box, "csv_processor", operation="sort", csv=data, column="qty", descending=True,
             limit=2)
    assert [r["item"] for r in top["rows"]] == ["b", "c"] and top["row_count"] == 3
    summary = ok(box, "csv_processor", operation="summary", csv=data)
    assert summary["numeric"]["qty"] == {"sum": 19.0, "mean": 6.3333, "min": 2.0, "max": 10.0}
    both = box.call("csv_processor", {"operation": "summary", "csv": data, "file": "x.csv"})
    assert not both.ok and "exactly one of file or csv" in both.observation
