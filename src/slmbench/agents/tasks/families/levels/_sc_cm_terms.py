"""What the scheduling and communication ladders share: people, roles, meetings, and how a
level's instance draws its entities so that seed 0's answer (the replay and memory agents')
is wrong in the other worlds."""

from __future__ import annotations

import dataclasses
import datetime as dt
import random
from collections import Counter
from collections.abc import Callable, Hashable, Sequence
from typing import Any, TypeVar

from slmbench.agents.tasks.families.levels.ladder import Form
from slmbench.agents.tasks.families.terms import (
    and_list,
    clock_aliases,
    date_aliases,
    day_long,
    full_name_aliases,
    my_events,
    seed0,
    title_aliases,
    to_minutes,
    week_days,
)
from slmbench.agents.world import Employee, Event, World

__all__ = ["MEETING_TITLES", "F", "attendees_of", "by_department", "by_manager", "choose",
           "colleagues", "date_words", "day_short", "first", "first_of_day", "first_with_role",
           "mailed", "meeting_values", "next_meeting", "notify", "person_values", "posted",
           "query", "role_last", "roles", "send", "shared_roles", "uid", "unique_events"]

T = TypeVar("T")

# invented titles for a meeting the agent books (drawn per world, so that a replay of seed
# 0's booking has the wrong title)
MEETING_TITLES = ("Dock firmware check", "Pricing sync", "Launch retro", "Supplier review",
                  "Roadmap check-in", "Hiring debrief", "Security drill", "Travel planning",
                  "Inventory audit", "Contract walkthrough", "Onboarding plan", "Design critique")


def uid(e: Employee) -> str:
    return e.email.split("@")[0]


def first(e: Employee) -> str:
    return e.name.split()[0]


def colleagues(world: World) -> list[Employee]:
    """Everyone but the user."""
    return [e for e in world.employees if e.email != world.user]


def attendees_of(world: World, ev: Event) -> list[Employee]:
    """A meeting's attendees but the user."""
    return [p for a in ev.attendees if a != world.user and (p := world.person(a))]


def roles(world: World) -> dict[str, Employee]:
    """Job titles one colleague alone holds, with the holder."""
    counts = Counter(e.title for e in world.employees)
    return {e.title: e for e in colleagues(world) if counts[e.title] == 1}


def shared_roles(world: World) -> dict[str, Employee]:
    """:func:`roles` whose holder is in some but not all of the user's meetings."""
    mine = my_events(world)
    return {t: e for t, e in roles(world).items()
            if 0 < sum(e.email in ev.attendees for ev in mine) < len(mine)}


def unique_events(world: World) -> list[Event]:
    """The user's meetings whose title no other meeting of theirs has."""
    mine = my_events(world)
    counts = Counter(e.title for e in mine)
    return [e for e in mine if counts[e.title] == 1]


def day_short(day: dt.date) -> str:
    """``Wednesday 12 March``."""
    return f"{day:%A} {day.day} {day:%B}"


def date_words(day: dt.date) -> list[str]:
    return [*date_aliases(day), f"{day:%A}"]


def choose(world: World, rng: random.Random, options: Callable[[World], Sequence[T]],
           answer: Callable[[World, T], Hashable]) -> T:
    """Seed 0 takes its first option; another world draws among the options whose ``answer``
    differs from seed 0's (while any do), so that seed 0's answer, remembered or replayed,
    is wrong there, not right by coincidence."""
    if world.seed == 0:
        return options(world)[0]
    s0 = seed0()
    remembered = answer(s0, options(s0)[0])
    mine = list(options(world))
    fresh = [o for o in mine if answer(world, o) != remembered]
    return rng.choice(fresh or mine)


def person_values(world: World, e: Employee, prefix: str = "") -> dict[str, Any]:
    """A colleague's name, first name, address, address id, aliases and Teams handle."""
    return {f"{prefix}name": e.name, f"{prefix}first": first(e), f"{prefix}address": e.email,
            f"{prefix}id": uid(e), f"{prefix}aliases": full_name_aliases(e),
            f"{prefix}handle": first(e).lower()}


def meeting_values(world: World, ev: Event, prefix: str = "") -> dict[str, Any]:
    """A meeting's title, day and times as the templates write and accept them."""
    p = prefix
    return {f"{p}title": ev.title, f"{p}title_lower": ev.title.lower(),
            f"{p}title_aliases": title_aliases(ev.title), f"{p}event": ev.id,
            f"{p}date": ev.date.isoformat(), f"{p}day": day_short(ev.date),
            f"{p}date_words": date_words(ev.date), f"{p}start": ev.start, f"{p}end": ev.end,
            f"{p}start_aliases": clock_aliases(ev.start),
            f"{p}end_aliases": clock_aliases(ev.end), f"{p}location": ev.location,
            f"{p}place": ([ev.location, ev.location.removeprefix("Room ")]
                          if ev.location.startswith("Room ") else ev.location)}


# -- writing a form short ----------------------------------------------------------------

def query(table: str, **filters: Any) -> dict[str, Any]:
    return {"tool": "query_table", "arguments": {"table": table, "filters": filters}}


def notify(channel: str, recipient: str, message: str) -> dict[str, Any]:
    return {"tool": "notify", "arguments": {"channel": channel, "recipient": recipient,
                                            "message": message}}


def send(to: Any, subject: str, body: str) -> dict[str, Any]:
    return {"tool": "email", "arguments": {"action": "send", "to": to, "subject": subject,
                                           "body": body}}


def posted(channel: str, recipient: str, contains: list[Any]) -> dict[str, Any]:
    return {"kind": "state", "checks": [{"check": "notification", "channel": channel,
                                         "recipient": recipient, "contains": contains}]}


def mailed(to: str, body: list[Any], subject: list[Any] | None = None) -> dict[str, Any]:
    return {"kind": "state", "checks": [{"check": "email_sent", "to": to,
                                         "subject_contains": subject or [],
                                         "body_contains": body}]}


@dataclasses.dataclass(frozen=True)
class F:
    """A form, written short: what, binder, tools, instruction, scorer, actions, answer."""

    what: str
    binder: Any
    tools: list[str]
    instruction: str
    scorer: dict[str, Any]
    actions: list[dict[str, Any]]
    answer: str

    def form(self) -> Form:
        return Form(what=self.what, binder=self.binder, template={
            "instruction": self.instruction, "tools": self.tools, "scorer": self.scorer,
            "reference": {"actions": self.actions, "answer": self.answer}})


# -- scheduling's binders of SC-5, SC-6 and SC-7 (here: scheduling.py keeps to 400 lines)

# -- SC-5: when a meeting starts ------------------------------------------------------------

def _next_options(w: World) -> list[tuple[Event, Event]]:
    out = []
    for ev in unique_events(w):
        later = [e for e in my_events(w, ev.date) if to_minutes(e.start) > to_minutes(ev.start)]
        if later:
            out.append((ev, min(later, key=lambda e: to_minutes(e.start))))
    return out


def next_meeting(world: World, rng: random.Random) -> dict[str, Any]:
    ev, nxt = choose(world, rng, _next_options, lambda w, o: (o[1].title, o[1].start))
    others = sorted({e.title for e in my_events(world, ev.date)} - {ev.title, nxt.title})
    return {"anchor": ev.title, **meeting_values(world, nxt), "forbidden": others}


def first_with_role(world: World, rng: random.Random) -> dict[str, Any]:
    def meetings(w: World, role: str) -> list[Event]:
        e = shared_roles(w)[role]
        return sorted((ev for ev in my_events(w) if e.email in ev.attendees),
                      key=lambda ev: (ev.date, to_minutes(ev.start)))

    role = choose(world, rng, lambda w: sorted(shared_roles(w)),
                  lambda w, r: (meetings(w, r)[0].title, meetings(w, r)[0].date))
    found = meetings(world, role)
    later = sorted({ev.title for ev in found[1:]} - {found[0].title})
    return {"role": role, "holder": shared_roles(world)[role].name,
            **meeting_values(world, found[0]), "forbidden": later}


# -- SC-6: who else is invited --------------------------------------------------------------

def _split_options(w: World, inside: Any) -> list[tuple[Event, Any]]:
    out = []
    for ev in unique_events(w):
        people = attendees_of(w, ev)
        for key in sorted({k for p in people for k in inside(w, p)}):
            n = sum(key in inside(w, p) for p in people)
            if 0 < n < len(people):
                out.append((ev, key))
    return out


def _split(world: World, rng: random.Random, inside: Any) -> tuple[Event, Any, dict[str, Any]]:
    def answer(w: World, o: tuple[Event, Any]) -> tuple[str, ...]:
        return tuple(p.name for p in attendees_of(w, o[0]) if o[1] in inside(w, p))

    ev, key = choose(world, rng, lambda w: _split_options(w, inside), answer)
    people = attendees_of(world, ev)
    yes = [p for p in people if key in inside(world, p)]
    no = [p.name for p in people if key not in inside(world, p)]
    return ev, key, {**meeting_values(world, ev), "names": and_list([p.name for p in yes]),
                     "required": [full_name_aliases(p) for p in yes], "forbidden": no}


def by_department(world: World, rng: random.Random) -> dict[str, Any]:
    _, dept, values = _split(world, rng, lambda w, p: {p.department})
    return {**values, "department": dept}


def by_manager(world: World, rng: random.Random) -> dict[str, Any]:
    def boss(w: World, p: Employee) -> set[str]:
        m = w.person(p.manager) if p.manager else None
        return {m.name} if m is not None and m.email != w.user else set()

    _, name, values = _split(world, rng, boss)
    manager = world.person(name)
    assert manager is not None
    values["forbidden"] = [n for n in values["forbidden"] if n != name]
    return {**values, "boss": name, "boss_id": manager.id}


# -- SC-7: the first or last meeting of a day -----------------------------------------------

def first_of_day(world: World, rng: random.Random) -> dict[str, Any]:
    def first(w: World, d: dt.date) -> Event:
        return min(my_events(w, d), key=lambda e: to_minutes(e.start))

    day = choose(world, rng, lambda w: [d for d in week_days(w) if len(my_events(w, d)) >= 2],
                 lambda w, d: (first(w, d).title, first(w, d).end))
    ev = first(world, day)
    others = sorted({e.title for e in my_events(world, day)} - {ev.title})
    people = attendees_of(world, ev)
    # who else is in it too: a title and its end are one of a few pairs across worlds
    return {**meeting_values(world, ev), "long_day": day_long(day), "forbidden": others,
            "people": [full_name_aliases(p) for p in people],
            "names": and_list([p.name for p in people])}


def role_last(world: World, rng: random.Random) -> dict[str, Any]:
    def last(w: World, o: tuple[str, dt.date]) -> Event:
        events = w.find_events(date=o[1], attendee=roles(w)[o[0]].email)
        return max(events, key=lambda e: (to_minutes(e.end), to_minutes(e.start)))

    def options(w: World) -> list[tuple[str, dt.date]]:
        """Days of two or more meetings, the last ending alone; a world with none (about 1
        in 40): days of one meeting."""
        busy: dict[int, list[tuple[str, dt.date]]] = {1: [], 2: []}
        for role, e in sorted(roles(w).items()):
            for d in week_days(w):
                ends = sorted(to_minutes(ev.end) for ev in w.find_events(date=d,
                                                                          attendee=e.email))
                if len(ends) == 1 or (len(ends) >= 2 and ends[-1] != ends[-2]):
                    busy[min(len(ends), 2)].append((role, d))
        return busy[2] or busy[1]

    role, day = choose(world, rng, options, lambda w, o: (last(w, o).title, last(w, o).end))
    ev = last(world, (role, day))
    holder = roles(world)[role]
    others = sorted({e.title for e in world.find_events(date=day, attendee=holder.email)}
                    - {ev.title})
    # the holder's name too: a last meeting and its end are one of a few pairs (#59)
    return {"role": role, "holder": holder.name, **meeting_values(world, ev),
            "long_day": day_long(day), "forbidden": others,
            "people": [full_name_aliases(holder)]}
