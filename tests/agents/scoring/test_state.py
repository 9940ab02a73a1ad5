"""World-state checks read the post-trial snapshot of a real seeded world."""

from __future__ import annotations

import datetime as dt

from slmbench.agents.scoring import score
from slmbench.agents.tasks.model import StateSpec
from slmbench.agents.world import Event, Notification, SentEmail, World


def _spec(*checks: dict) -> StateSpec:
    return StateSpec.model_validate({"kind": "state", "checks": list(checks)})


def test_event_exists_and_absent() -> None:
    world = World.create(0)
    world.events.append(Event(id="EV100", title="Design review", date=dt.date(2025, 3, 13),
                              start="14:00", end="15:00",
                              attendees=["alex.morgan@brightline.example",
                                         "priya.raman@brightline.example"]))
    state = world.snapshot()
    ok = _spec({"check": "event_exists", "fields": {"title": "design review",
                "date": "2025-03-13", "start": "14:00", "attendees": ["priya"]}})
    wrong_time = _spec({"check": "event_exists", "fields": {"title": "design", "start": "15:00"}})
    wrong_person = _spec({"check": "event_exists", "fields": {"title": "design",
                          "attendees": ["marcus"]}})
    assert score(ok, None, state).passed
    assert not score(wrong_time, None, state).passed
    assert not score(wrong_person, None, state).passed
    assert not score(_spec({"check": "event_absent", "fields": {"id": "EV04"}}), None,
                     state).passed
    world.events = [e for e in world.events if e.id != "EV04"]
    assert score(_spec({"check": "event_absent", "fields": {"id": "EV04"}}), None,
                 world.snapshot()).passed


def test_email_notification_and_nothing_sent() -> None:
    world = World.create(0)
    check_mail = _spec({"check": "email_sent", "to": "dana.whitfield",
                        "subject_contains": ["Q1"], "body_contains": ["84674"]})
    quiet = _spec({"check": "nothing_sent"})
    assert not score(check_mail, None, world.snapshot()).passed
    assert score(quiet, None, world.snapshot()).passed
    world.sent.append(SentEmail(id="SE1", to=["dana.whitfield@brightline.example"],
                                subject="Q1 sales", body="Total: $84,764", date=world.today))
    assert not score(check_mail, None, world.snapshot()).passed  # wrong figure in the body
    world.sent[0] = world.sent[0].model_copy(update={"body": "Total: $84,674.00"})
    assert score(check_mail, None, world.snapshot()).passed
    assert not score(quiet, None, world.snapshot()).passed
    world.notifications.append(Notification(id="N1", channel="slack", recipient="#ops",
                                            message="Dock restocked"))
    assert score(_spec({"check": "notification", "channel": "slack", "contains": ["dock"]}),
                 None, world.snapshot()).passed
    assert not score(_spec({"check": "notification", "channel": "teams"}), None,
                     world.snapshot()).passed


def test_a_number_in_a_state_check_is_not_part_of_a_longer_one() -> None:
    """"2 April" was found in "12 April" and "2 pm" in "12 pm": a wrong date or time in a
    message passed. A name still matches inside an address, and a time before "am"."""
    world = World.create(0)
    world.notifications.append(Notification(id="N1", channel="slack", recipient="#marketing",
                                            message="Launch on 12 April at 12 pm, see priya.raman"))
    def posted(*wanted: object) -> bool:
        spec = _spec({"check": "notification", "channel": "slack", "contains": list(wanted)})
        return score(spec, None, world.snapshot()).passed
    assert not posted("2 April") and not posted(["2 pm", "14:00"])
    assert posted("12 April") and posted("12 pm") and posted("Priya")
    world.notifications[0] = world.notifications[0].model_copy(update={"message": "at 10:00am"})
    assert posted(["10:00", "10 am"])


def test_file_content() -> None:
    world = World.create(0)
    spec = _spec({"check": "file", "path": "summary.txt", "contains": ["84674"]})
    assert "does not exist" in score(spec, None, world.snapshot()).reason
    world.files["summary.txt"] = "total 84674"
    assert score(spec, None, world.snapshot()).passed
