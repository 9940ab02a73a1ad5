"""scheduling's ladders (``docs/tasks.md``, "Levels")."""

from __future__ import annotations

import datetime as dt
import functools
import random
from typing import Any

from slmbench.agents.tasks.families.levels._sc_cm_terms import (
    MEETING_TITLES,
    attendees_of,
    by_department,
    by_manager,
    choose,
    colleagues,
    first_of_day,
    first_with_role,
    meeting_values,
    next_meeting,
    person_values,
    role_last,
    roles,
    shared_roles,
    uid,
    unique_events,
)
from slmbench.agents.tasks.families.levels.ladder import Form, Ladder
from slmbench.agents.tasks.families.terms import (
    and_list,
    clock_aliases,
    day_long,
    free_starts,
    full_name_aliases,
    my_events,
    title_aliases,
    to_hhmm,
    to_minutes,
    week_days,
)
from slmbench.agents.world import Employee, Event, World

__all__ = ["LADDERS"]


def _sample(rng: random.Random, names: list[str], k: int = 4) -> list[str]:
    return rng.sample(names, min(k, len(names)))


def _new_title(world: World, rng: random.Random) -> str:
    """A booked meeting's title: seed 0's is never another world's."""
    return MEETING_TITLES[0] if world.seed == 0 else rng.choice(MEETING_TITLES[1:])


# -- SC-1: which meetings on a day ----------------------------------------------------------

def _two_days(world: World, rng: random.Random) -> dict[str, Any]:
    def options(w: World) -> list[tuple[dt.date, dt.date]]:
        days = [d for d in week_days(w) if my_events(w, d)]
        return [(a, b) for a in days for b in days if a < b]

    def answer(w: World, o: tuple[dt.date, dt.date]) -> tuple[str, ...]:
        return tuple(sorted(e.title for d in o for e in my_events(w, d)))

    a, b = choose(world, rng, options, answer)
    titles = [e.title for d in (a, b) for e in my_events(world, d)]
    others = sorted({e.title for e in my_events(world)} - set(titles))
    return {"day": day_long(a), "date": a.isoformat(), "day2": day_long(b),
            "date2": b.isoformat(), "required": [title_aliases(t) for t in titles],
            "forbidden": _sample(rng, others), "listed": and_list([f'"{t}"' for t in titles])}


def _role_meetings(world: World, rng: random.Random) -> dict[str, Any]:
    def answer(w: World, role: str) -> tuple[str, ...]:
        e = shared_roles(w)[role]
        return tuple(ev.title for ev in my_events(w) if e.email in ev.attendees)

    role = choose(world, rng, lambda w: sorted(shared_roles(w)), answer)
    holder = shared_roles(world)[role]
    titles = list(answer(world, role))
    others = sorted({ev.title for ev in my_events(world)} - set(titles))
    # the holder's name too: an engineer's meetings are the same few titles in many worlds
    return {"role": role, "holder": holder.name,
            "required": [full_name_aliases(holder), *(title_aliases(t) for t in titles)],
            "forbidden": _sample(rng, others), "listed": and_list([f'"{t}"' for t in titles])}


# -- SC-2: book a 30-minute meeting ---------------------------------------------------------

def _booking_after(world: World, rng: random.Random, by_role: bool) -> dict[str, Any]:
    def options(w: World) -> list[tuple[Event, Employee]]:
        people = list(roles(w).values()) if by_role else colleagues(w)
        out = []
        for ev in unique_events(w):
            start, end = ev.end, to_hhmm(to_minutes(ev.end) + 30)
            if to_minutes(end) > to_minutes(w.work_hours[1]) or w.busy(w.user, ev.date, start,
                                                                        end):
                continue
            out += [(ev, p) for p in people if not w.busy(p.email, ev.date, start, end)]
        return out

    ev, who = choose(world, rng, options, lambda w, o: (o[0].title, o[1].title, o[0].end))
    return {**meeting_values(world, ev, "after_"), **person_values(world, who),
            "role": who.title, "booked": _new_title(world, rng),
            "new_end": to_hhmm(to_minutes(ev.end) + 30)}


_booking_l2 = functools.partial(_booking_after, by_role=False)
_booking_l3 = functools.partial(_booking_after, by_role=True)


def _booking_check(who: str) -> dict[str, Any]:
    return {"kind": "state", "checks": [{"check": "event_exists", "fields": {
        "title": "{{booked}}", "date": "{{after_date}}", "start": "{{after_end}}",
        "end": "{{new_end}}", "attendees": [who]}}]}


# -- SC-3: book a meeting for several people ------------------------------------------------

def _given_slot(world: World, rng: random.Random) -> dict[str, Any]:
    a, b = rng.sample(colleagues(world), 2)
    people = [world.user, a.email, b.email]
    options = [(d, s) for d in week_days(world) for s in free_starts(world, people, d, 60)]
    day, start = rng.choice(options) if options else (week_days(world)[-1], "16:00")
    return {**person_values(world, a, "a_"), **person_values(world, b, "b_"),
            "booked": _new_title(world, rng), "day": day_long(day), "date": day.isoformat(),
            "start": start, "end": to_hhmm(to_minutes(start) + 60)}


def _with_manager(world: World, rng: random.Random) -> dict[str, Any]:
    def options(w: World) -> list[tuple[Employee, dt.date]]:
        out = []
        for e in colleagues(w):
            boss = w.person(e.manager) if e.manager else None
            if boss is None or boss.email == w.user:
                continue
            out += [(e, d) for d in week_days(w)
                    if free_starts(w, [w.user, e.email, boss.email], d, 60)]
        return out

    who, day = choose(world, rng, options, lambda w, o: (o[0].title, o[1]))
    boss = world.person(str(who.manager))
    assert boss is not None
    start = free_starts(world, [world.user, who.email, boss.email], day, 60)[0]
    return {**person_values(world, who), **person_values(world, boss, "boss_"),
            "manager_id": boss.id, "booked": _new_title(world, rng), "day": day_long(day),
            "date": day.isoformat(), "start": start, "end": to_hhmm(to_minutes(start) + 60),
            "start_aliases": clock_aliases(start)}


# -- SC-4 and SC-8: cancel, repeat ----------------------------------------------------------

def _cancel(world: World, rng: random.Random) -> dict[str, Any]:
    ev = choose(world, rng, unique_events, lambda w, e: e.id)
    return meeting_values(world, ev)


def _repeat_options(w: World) -> list[tuple[Event, dt.date]]:
    return [(e, d) for e in unique_events(w) for d in week_days(w) if d != e.date
            and not any(w.busy(a, d, e.start, e.end) for a in e.attendees)]


def _repeat(world: World, rng: random.Random) -> dict[str, Any]:
    ev, day = choose(world, rng, _repeat_options, lambda w, o: (o[0].title, o[1], o[0].start))
    people = attendees_of(world, ev)
    return {**meeting_values(world, ev), "old_date": ev.date.isoformat(),
            "new_day": day_long(day), "new_date": day.isoformat(),
            "attendees": [p.name for p in people], "names": and_list([p.name for p in people]),
            "attendee_ids": [uid(p) for p in people]}


def _last_answer() -> dict[str, Any]:
    return {"kind": "all", "scorers": [
        {"kind": "entities", "required": ["{{title_aliases}}"], "forbidden": "{{forbidden}}"},
        {"kind": "entities", "required": ["{{end_aliases}}"]}]}


_LIST_DAY = {"tool": "calendar", "arguments": {"action": "list", "date": "{{date}}"}}
_LIST_WEEK = {"tool": "calendar", "arguments": {"action": "list"}}
_ROLE_ROW = {"tool": "query_table", "arguments": {"table": "employees",
                                                  "filters": {"title": "{{role}}"}}}

LADDERS: dict[str, Ladder] = {
    "SC-1": Ladder(base=1, why_base="one calendar list, the titles read from its result", forms={
        2: Form(what="two days' calendars, their titles together", binder=_two_days, template={
            "instruction": "Which meetings do I have on {{day}} and on {{day2}}? Give their "
                           "titles.",
            "tools": ["calendar"],
            "scorer": {"kind": "entities", "required": "{{required}}",
                       "forbidden": "{{forbidden}}"},
            "reference": {"actions": [_LIST_DAY, {"tool": "calendar", "arguments": {
                "action": "list", "date": "{{date2}}"}}],
                "answer": "On those two days you have {{listed}}."}}),
        3: Form(what="a role's holder looked up, then the week's meetings they share with me",
                binder=_role_meetings, template={
            "instruction": "Who is our {{role}}, and which of my meetings this week will they "
                           "be at? Give the person's full name and the meetings' titles.",
            "tools": ["query_table", "calendar"],
            "scorer": {"kind": "entities", "required": "{{required}}",
                       "forbidden": "{{forbidden}}"},
            "reference": {"actions": [_ROLE_ROW, _LIST_WEEK],
                          "answer": "Our {{role}}, {{holder}}, is in {{listed}}."}}),
    }),
    "SC-2": Ladder(base=1, why_base="one calendar create, every field given in the instruction",
                   forms={
        2: Form(what="a meeting's end read from the day's calendar, then a booking at it",
                binder=_booking_l2, template={
            "instruction": "Put a 30-minute meeting called \"{{booked}}\" with {{name}} in my "
                           "calendar on {{after_day}}, starting when my {{after_title}} "
                           "meeting ends.",
            "tools": ["calendar"], "scorer": _booking_check("{{id}}"),
            "reference": {"actions": [
                {"tool": "calendar", "arguments": {"action": "list", "date": "{{after_date}}"}},
                {"tool": "calendar", "arguments": {
                    "action": "create", "title": "{{booked}}", "date": "{{after_date}}",
                    "start": "{{after_end}}", "end": "{{new_end}}", "attendees": ["{{name}}"]}}],
                "answer": "I booked \"{{booked}}\" with {{name}} on {{after_date}} from "
                          "{{after_end}} to {{new_end}}."}}),
        3: Form(what="a role's holder looked up, a meeting's end read, then a booking",
                binder=_booking_l3, template={
            "instruction": "Put a 30-minute meeting called \"{{booked}}\" with our {{role}} in "
                           "my calendar on {{after_day}}, starting when my {{after_title}} "
                           "meeting ends.",
            "tools": ["query_table", "calendar"], "scorer": _booking_check("{{id}}"),
            "reference": {"actions": [
                _ROLE_ROW,
                {"tool": "calendar", "arguments": {"action": "list", "date": "{{after_date}}"}},
                {"tool": "calendar", "arguments": {
                    "action": "create", "title": "{{booked}}", "date": "{{after_date}}",
                    "start": "{{after_end}}", "end": "{{new_end}}", "attendees": ["{{name}}"]}}],
                "answer": "I booked \"{{booked}}\" with {{name}}, our {{role}}, on "
                          "{{after_date}} from {{after_end}} to {{new_end}}."}}),
    }),
    "SC-3": Ladder(base=2, why_base="one schedule_meeting call finds the three people's common "
                                    "free slot (a search over calendars) and books it", forms={
        1: Form(what="one calendar create for two colleagues, every field given",
                binder=_given_slot, template={
            "instruction": "Book a meeting called \"{{booked}}\" with {{a_name}} and {{b_name}} "
                           "on {{day}} from {{start}} to {{end}}.",
            "tools": ["calendar"],
            "scorer": {"kind": "state", "checks": [{"check": "event_exists", "fields": {
                "title": "{{booked}}", "date": "{{date}}", "start": "{{start}}",
                "end": "{{end}}", "attendees": ["{{a_id}}", "{{b_id}}"]}}]},
            "reference": {"actions": [{"tool": "calendar", "arguments": {
                "action": "create", "title": "{{booked}}", "date": "{{date}}",
                "start": "{{start}}", "end": "{{end}}", "attendees": ["{{a_name}}",
                                                                       "{{b_name}}"]}}],
                "answer": "I booked \"{{booked}}\" on {{date}} from {{start}} to {{end}}."}}),
        3: Form(what="a colleague's manager looked up in two hops, then the earliest common "
                     "slot booked", binder=_with_manager, template={
            "instruction": "Find the earliest 60-minute slot on {{day}} when {{name}}, "
                           "{{first}}'s manager and I are all free, book it as \"{{booked}}\", "
                           "and tell me when it starts.",
            "tools": ["query_table", "schedule_meeting", "calendar"],
            "scorer": {"kind": "all", "scorers": [
                {"kind": "state", "checks": [{"check": "event_exists", "fields": {
                    "title": "{{booked}}", "date": "{{date}}", "start": "{{start}}",
                    "end": "{{end}}", "attendees": ["{{id}}", "{{boss_id}}"]}}]},
                {"kind": "entities", "required": ["{{start_aliases}}"]}]},
            "reference": {"actions": [
                {"tool": "query_table", "arguments": {"table": "employees",
                                                      "filters": {"name": "{{name}}"}}},
                {"tool": "query_table", "arguments": {"table": "employees",
                                                      "filters": {"id": "{{manager_id}}"}}},
                {"tool": "schedule_meeting", "arguments": {
                    "title": "{{booked}}", "attendees": ["{{name}}", "{{boss_name}}"],
                    "duration_minutes": 60, "date": "{{date}}"}}],
                "answer": "\"{{booked}}\" with {{name}} and {{boss_name}} is booked on "
                          "{{date}} from {{start}} to {{end}}."}}),
    }),
    "SC-4": Ladder(base=3, why_base="three calls: the day's calendar listed, the lunch "
                                    "cancelled by its id, the colleague e-mailed", forms={
        1: Form(what="one calendar cancel, the event's id given", binder=_cancel, template={
            "instruction": "Cancel the event {{event}} ({{title}}, {{day}}) on my calendar.",
            "tools": ["calendar"],
            "scorer": {"kind": "state", "checks": [{"check": "event_absent",
                                                    "fields": {"id": "{{event}}"}}]},
            "reference": {"actions": [{"tool": "calendar", "arguments": {
                "action": "cancel", "event_id": "{{event}}"}}],
                "answer": "I cancelled {{event}}, the {{title}} on {{day}}."}}),
        2: Form(what="the day's calendar listed for a meeting's id, then cancelled",
                binder=_cancel, template={
            "instruction": "Cancel my {{title}} meeting on {{day}}.",
            "tools": ["calendar"],
            "scorer": {"kind": "state", "checks": [{"check": "event_absent",
                                                    "fields": {"id": "{{event}}"}}]},
            "reference": {"actions": [_LIST_DAY, {"tool": "calendar", "arguments": {
                "action": "cancel", "event_id": "{{event}}"}}],
                "answer": "I cancelled the {{title}} on {{day}}."}}),
    }),
    "SC-5": Ladder(base=1, why_base="one calendar list, the meeting's day and start read from "
                                    "its result", forms={
        2: Form(what="one calendar list, and the meeting after a given one found in it",
                binder=next_meeting, template={
            "instruction": "Which meeting do I have next after my {{anchor}} meeting on the "
                           "same day, and at what time does it start?",
            "tools": ["calendar"],
            "scorer": {"kind": "all", "scorers": [
                {"kind": "entities", "required": ["{{title_aliases}}"],
                 "forbidden": "{{forbidden}}"},
                {"kind": "entities", "required": ["{{start_aliases}}"]}]},
            "reference": {"actions": [_LIST_WEEK],
                          "answer": "Next that day you have {{title}}, starting at {{start}}."}}),
        3: Form(what="a role's holder looked up, then my first meeting of the week with them",
                binder=first_with_role, template={
            "instruction": "What is my first meeting this week with our {{role}}, and on which "
                           "day and at what time does it start?",
            "tools": ["query_table", "calendar"],
            "scorer": {"kind": "all", "scorers": [
                {"kind": "entities", "required": ["{{title_aliases}}"],
                 "forbidden": "{{forbidden}}"},
                {"kind": "entities", "required": ["{{date_words}}"]},
                {"kind": "entities", "required": ["{{start_aliases}}"]}]},
            "reference": {"actions": [_ROLE_ROW, _LIST_WEEK],
                          "answer": "Your first meeting with {{holder}} is {{title}}, on "
                                    "{{day}} ({{date}}) at {{start}}."}}),
    }),
    "SC-6": Ladder(base=1, why_base="one calendar list, the attendees read from its result",
                   forms={
        2: Form(what="a meeting's attendees, and the department table to filter them",
                binder=by_department, template={
            "instruction": "Which of the other people invited to my \"{{title}}\" meeting this "
                           "week work in the {{department}} department? Give their full names.",
            "tools": ["calendar", "query_table"],
            "scorer": {"kind": "entities", "required": "{{required}}",
                       "forbidden": "{{forbidden}}"},
            "reference": {"actions": [_LIST_DAY, {"tool": "query_table", "arguments": {
                "table": "employees", "filters": {"department": "{{department}}"}}}],
                "answer": "Invited to the {{title}} from {{department}}: {{names}}."}}),
        3: Form(what="a meeting's attendees, a manager's id and their reports, intersected",
                binder=by_manager, template={
            "instruction": "Which of the other people invited to my \"{{title}}\" meeting this "
                           "week report directly to {{boss}}? Give their full names.",
            "tools": ["calendar", "query_table"],
            "scorer": {"kind": "entities", "required": "{{required}}",
                       "forbidden": "{{forbidden}}"},
            "reference": {"actions": [
                _LIST_DAY,
                {"tool": "query_table", "arguments": {"table": "employees",
                                                      "filters": {"name": "{{boss}}"}}},
                {"tool": "query_table", "arguments": {"table": "employees",
                                                      "filters": {"manager": "{{boss_id}}"}}}],
                "answer": "Invited to the {{title}} and reporting to {{boss}}: {{names}}."}}),
    }),
    "SC-7": Ladder(base=2, why_base="one calendar list, and the latest-ending meeting found "
                                    "among the day's", forms={
        1: Form(what="one calendar list, the day's first meeting and its end read from it",
                binder=first_of_day, template={
            "instruction": "What is the first meeting on my calendar on {{long_day}}, at what "
                           "time does it end, and who else is in it? Give their full names.",
            "tools": ["calendar"],
            "scorer": {"kind": "all", "scorers": [
                *_last_answer()["scorers"], {"kind": "entities", "required": "{{people}}"}]},
            "reference": {"actions": [_LIST_DAY],
                          "answer": "Your first meeting on {{long_day}} is {{title}}, which "
                                    "ends at {{end}}, with {{names}}."}}),
        3: Form(what="a role's holder looked up, their day's calendar listed, its last meeting "
                     "found", binder=role_last, template={
            "instruction": "Who is our {{role}}, what is the last meeting on their calendar "
                           "on {{long_day}}, and at what time does it end?",
            "tools": ["query_table", "calendar"],
            "scorer": {"kind": "all", "scorers": [
                *_last_answer()["scorers"], {"kind": "entities", "required": "{{people}}"}]},
            "reference": {"actions": [_ROLE_ROW, {"tool": "calendar", "arguments": {
                "action": "list", "date": "{{date}}", "attendee": "{{holder}}"}}],
                "answer": "The last meeting of {{holder}} on {{long_day}} is {{title}}, which "
                          "ends at {{end}}."}}),
    }),
    "SC-8": Ladder(base=3, why_base="three calls: the week listed, the meeting cancelled, a "
                                    "copy created on the new day", forms={
        1: Form(what="one calendar create, every field given", binder=_repeat, template={
            "instruction": "Add a \"{{title}}\" meeting to my calendar on {{new_day}} from "
                           "{{start}} to {{end}} with {{names}}.",
            "tools": ["calendar"],
            "scorer": {"kind": "state", "checks": [{"check": "event_exists", "fields": {
                "title": "{{title_lower}}", "date": "{{new_date}}", "start": "{{start}}",
                "end": "{{end}}", "attendees": "{{attendee_ids}}"}}]},
            "reference": {"actions": [{"tool": "calendar", "arguments": {
                "action": "create", "title": "{{title}}", "date": "{{new_date}}",
                "start": "{{start}}", "end": "{{end}}", "attendees": "{{attendees}}"}}],
                "answer": "I added the {{title}} on {{new_date}}, {{start}} to {{end}}."}}),
        2: Form(what="the week listed for a meeting's time and attendees, then a copy created",
                binder=_repeat, template={
            "instruction": "Book another \"{{title}}\" meeting on {{new_day}}, at the same time "
                           "of day and with the same attendees as this week's one; keep this "
                           "week's.",
            "tools": ["calendar"],
            "scorer": {"kind": "state", "checks": [
                {"check": "event_exists", "fields": {"title": "{{title_lower}}",
                                                     "date": "{{old_date}}"}},
                {"check": "event_exists", "fields": {
                    "title": "{{title_lower}}", "date": "{{new_date}}", "start": "{{start}}",
                    "end": "{{end}}", "attendees": "{{attendee_ids}}"}}]},
            "reference": {"actions": [_LIST_WEEK, {"tool": "calendar", "arguments": {
                "action": "create", "title": "{{title}}", "date": "{{new_date}}",
                "start": "{{start}}", "end": "{{end}}", "attendees": "{{attendees}}"}}],
                "answer": "I booked another {{title}} on {{new_date}}, {{start}} to {{end}}, "
                          "with {{names}}."}}),
    }),
}
