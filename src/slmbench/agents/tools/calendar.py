"""``calendar`` (list / create / cancel / check_availability) and ``schedule_meeting``.

Times are ``HH:MM`` on a 24-hour clock, dates ``YYYY-MM-DD``. The user the
agent acts for is added to every event it creates.
"""

from __future__ import annotations

import datetime as dt
from typing import Any, Literal

from pydantic import Field, field_validator

from slmbench.agents.tools.base import ToolError
from slmbench.agents.tools.common import StrictParams, WorldTool, as_list, jsonable
from slmbench.agents.world import HHMM, Event, World

SLOT_STEP_MIN = 30  # schedule_meeting tries start times on the hour and half hour
SEARCH_DAYS = 14  # ... on weekdays from today through this many days


def _minutes(hhmm: str) -> int:
    return int(hhmm[:2]) * 60 + int(hhmm[3:])


def _hhmm(minutes: int) -> str:
    return f"{minutes // 60:02d}:{minutes % 60:02d}"


def _addresses(world: World, people: list[str]) -> list[str]:
    out: list[str] = []
    for p in people:
        addr = world.address(p)
        if "@" not in addr:
            raise ToolError(f"unknown attendee {p!r}; use an employee's name or e-mail address")
        if addr not in out:
            out.append(addr)
    return out


def _with_user(world: World, attendees: list[str]) -> list[str]:
    return [world.user, *[a for a in attendees if a != world.user]]


def create_event(world: World, title: str, date: dt.date, start: str, end: str,
                 attendees: list[str]) -> Event:
    if _minutes(end) <= _minutes(start):
        raise ToolError(f"end {end} must be after start {start}")
    event = Event(id=world.new_event_id(), title=title, date=date, start=start, end=end,
                  attendees=attendees)
    world.events.append(event)
    return event


class Calendar(WorldTool, name="calendar"):
    """Manage the calendar. action=list: events on a date (default: your own events; give attendee
    for someone else's); action=create: new event (title, date, start, end, attendees);
    action=cancel: remove event_id; action=check_availability: are the attendees free on date
    between start and end?"""

    class Params(StrictParams):
        action: Literal["list", "create", "cancel", "check_availability"]
        date: dt.date | None = Field(default=None, description="YYYY-MM-DD")
        start: HHMM | None = Field(default=None, description="HH:MM, 24-hour")
        end: HHMM | None = Field(default=None, description="HH:MM, 24-hour")
        title: str | None = None
        attendees: list[str] | None = Field(default=None, description="names or e-mails")
        attendee: str | None = Field(default=None, description="list: whose calendar")
        event_id: str | None = Field(default=None, description="cancel: the event's id")

        _attendees = field_validator("attendees", mode="before")(as_list)

    def run(self, world: World, params: Params) -> dict[str, Any]:
        p = params
        if p.action == "list":
            who = world.address(p.attendee) if p.attendee else world.user
            events = world.find_events(date=p.date, attendee=who)
            return {"calendar_of": who, "date": p.date.isoformat() if p.date else None,
                    "events": [jsonable(e) for e in events]}
        if p.action == "cancel":
            if not p.event_id:
                raise ToolError("cancel needs event_id; use action=list to find it")
            event = world.event(p.event_id)
            if event is None:
                raise ToolError(f"no event with id {p.event_id!r}; use action=list to see ids")
            world.events.remove(event)
            return {"cancelled": jsonable(event)}
        if p.date is None or p.start is None or p.end is None:
            raise ToolError(f"{p.action} needs date, start and end")
        attendees = _with_user(world, _addresses(world, p.attendees or []))
        if p.action == "check_availability":
            busy = {a: [f"{e.title} ({e.start}-{e.end})" for e in
                        world.busy(a, p.date, p.start, p.end)] for a in attendees}
            return {"date": p.date.isoformat(), "start": p.start, "end": p.end,
                    "all_free": not any(busy.values()),
                    "busy": {a: b for a, b in busy.items() if b}}
        if not p.title:
            raise ToolError("create needs a title")
        conflicts = [e.id for a in attendees for e in world.busy(a, p.date, p.start, p.end)]
        event = create_event(world, p.title, p.date, p.start, p.end, attendees)
        return {"created": jsonable(event), "conflicts": sorted(set(conflicts))}


class ScheduleMeeting(WorldTool, name="schedule_meeting"):
    """Book a meeting at the first time all attendees (and you) are free, within office hours, on
    weekdays from today (or only on `date` if given)."""

    class Params(StrictParams):
        title: str = Field(min_length=1)
        attendees: list[str] = Field(min_length=1, description="names or e-mails")
        duration_minutes: int = Field(default=30, ge=15, le=480)
        date: dt.date | None = Field(default=None, description="YYYY-MM-DD; only this day")

        _attendees = field_validator("attendees", mode="before")(as_list)

    def run(self, world: World, params: Params) -> dict[str, Any]:
        attendees = _with_user(world, _addresses(world, params.attendees))
        days = [params.date] if params.date else [
            d for i in range(SEARCH_DAYS)
            if (d := world.today + dt.timedelta(days=i)).weekday() < 5]
        open_, close = (_minutes(t) for t in world.work_hours)
        for day in days:
            for s in range(open_, close - params.duration_minutes + 1, SLOT_STEP_MIN):
                start, end = _hhmm(s), _hhmm(s + params.duration_minutes)
                if not any(world.busy(a, day, start, end) for a in attendees):
                    event = create_event(world, params.title, day, start, end, attendees)
                    return {"scheduled": jsonable(event)}
        where = params.date.isoformat() if params.date else f"the next {SEARCH_DAYS} days"
        raise ToolError(f"no common free {params.duration_minutes}-minute slot on {where}")
