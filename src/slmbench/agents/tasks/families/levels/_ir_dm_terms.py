"""What the information-retrieval and decision-making ladders share: people as an answer
names them, the chains of managers, the small pickers their binders use, and the binders of
the levels that ask about people (IR-6, IR-7, IR-8; DM-4, DM-6) and free hours (DM-7), kept
here so that each group's module stays short."""

from __future__ import annotations

import datetime as dt
import itertools
import random
from collections import Counter
from collections.abc import Sequence
from typing import Any

from slmbench.agents.tasks.families.terms import (
    as_number,
    date_aliases,
    day_long,
    full_name_aliases,
    sales_totals,
    to_hhmm,
    to_minutes,
    unlike,
)
from slmbench.agents.world import Employee, World

__all__ = ["bonus_ids", "colleagues", "dated", "hour_free", "manager_of", "names",
           "newest_manager", "one_of_three", "others_than", "placed", "rep_total", "salary",
           "sender_joined", "sender_manager", "side", "title_chain", "title_manager",
           "titled_newest", "top_earner", "yes_no"]


def yes_no(yes: bool) -> str:
    return "yes" if yes else "no"


def manager_of(world: World, e: Employee) -> Employee | None:
    return world.person(e.manager) if e.manager else None


def colleagues(world: World) -> list[Employee]:
    """Everyone but the user."""
    return [e for e in world.employees if e.email != world.user]


def others_than(world: World, rng: random.Random, *named: Employee, k: int = 3) -> list[str]:
    """Up to ``k`` other employees' names, as forbidden distractors."""
    keep = {e.id for e in named}
    pool = [e.name for e in world.employees if e.id not in keep]
    return rng.sample(pool, min(k, len(pool)))


def dated(day: dt.date) -> list[str]:
    """A date with its year, as an answer may write it (``2023-10-02``, ``2 October 2023``)."""
    return [day.isoformat(), *(f"{a} {day.year}" for a in date_aliases(day)[1:])]


def side(world: World) -> bool:
    """A two-way answer balanced over seeds: False in seed 0 and on even seeds."""
    return world.seed % 2 == 1


def placed(world: World, rng: random.Random, answer: Any, rest: Sequence[Any]) -> list[Any]:
    """``rest`` shuffled with ``answer`` at place seed % (len + 1): options in an order that
    does not give the answer away."""
    out = list(rest)
    rng.shuffle(out)
    out.insert(world.seed % (len(out) + 1), answer)
    return out


def names(e: Employee) -> list[str]:
    return full_name_aliases(e)


# -- IR-6, IR-7, IR-8: people and their managers -------------------------------------------

def _unique_titles(world: World) -> list[Employee]:
    counts = Counter(e.title for e in world.employees)
    return [e for e in world.employees if counts[e.title] == 1]


def title_manager(world: World, rng: random.Random) -> dict[str, Any]:
    holder = rng.choice([e for e in _unique_titles(world) if e.manager])
    boss = manager_of(world, holder)
    assert boss is not None
    return {"title": holder.title, "boss": names(boss), "boss_name": boss.name,
            "boss_id": boss.id, "forbidden": others_than(world, rng, holder, boss)}


def title_chain(world: World, rng: random.Random) -> dict[str, Any]:
    """A holder two levels below the top, named by a title only they hold (by name in the
    few worlds where no such title sits that deep)."""
    def deep(e: Employee) -> bool:
        m = manager_of(world, e)
        return m is not None and m.manager is not None

    titled_ = [e for e in _unique_titles(world) if deep(e)]
    holder = rng.choice(titled_ or [e for e in world.employees if deep(e)])
    boss = manager_of(world, holder)
    assert boss is not None
    top = manager_of(world, boss)
    assert top is not None
    by_title = holder in titled_
    return {"who": f"Brightline Labs' {holder.title}" if by_title else holder.name,
            "who_short": f"the {holder.title}" if by_title else holder.name,
            "column": "title" if by_title else "name",
            "value": holder.title if by_title else holder.name,
            "boss": names(boss), "boss_name": boss.name,
            "boss_id": boss.id, "top": names(top), "top_name": top.name, "top_id": top.id,
            "forbidden": others_than(world, rng, holder, boss, top)}


def _mailers(world: World) -> list[tuple[Any, Employee]]:
    return [(m, who) for m in world.inbox if (who := world.person(m.sender)) is not None]


def sender_joined(world: World, rng: random.Random) -> dict[str, Any]:
    mail, who = rng.choice(_mailers(world))
    return {"subject": mail.subject, "address": who.email, "sender_name": who.name,
            "joined": dated(who.start_date), "joined_iso": who.start_date.isoformat()}


def sender_manager(world: World, rng: random.Random) -> dict[str, Any]:
    mail, who = rng.choice([(m, e) for m, e in _mailers(world) if e.manager])
    boss = manager_of(world, who)
    assert boss is not None
    return {"subject": mail.subject, "address": who.email, "sender_name": who.name,
            "boss": names(boss), "boss_name": boss.name, "boss_id": boss.id,
            "forbidden": others_than(world, rng, who, boss)}


def _members(world: World, dept: str) -> list[Employee]:
    return sorted((e for e in world.employees if e.department == dept),
                  key=lambda e: e.start_date)


def _newest_of(world: World, rng: random.Random, dept: str) -> dict[str, Any]:
    *others, newest = _members(world, dept)
    boss = manager_of(world, newest)
    assert boss is not None
    return {"department": dept, "newest": names(newest), "newest_name": newest.name,
            "start": dated(newest.start_date), "start_iso": newest.start_date.isoformat(),
            "boss": names(boss), "boss_name": boss.name, "boss_id": boss.id,
            "forbidden": [e.name for e in others if e.id != boss.id]}


def _clear_newest(world: World, dept: str) -> bool:
    m = _members(world, dept)
    return len(m) >= 2 and m[-1].start_date != m[-2].start_date and m[-1].manager is not None


def newest_manager(world: World, rng: random.Random) -> dict[str, Any]:
    depts = sorted({e.department for e in world.employees})
    return _newest_of(world, rng, rng.choice([d for d in depts if _clear_newest(world, d)]))


def titled_newest(world: World, rng: random.Random) -> dict[str, Any]:
    holder = rng.choice([e for e in _unique_titles(world) if _clear_newest(world, e.department)
                         and _members(world, e.department)[-1] != e])
    return {"title": holder.title, **_newest_of(world, rng, holder.department)}


# -- DM-4, DM-6: people and their figures --------------------------------------------------

def salary(world: World, rng: random.Random) -> dict[str, Any]:
    who = unlike(world, rng, colleagues(world), world.person("E07"), lambda w, e: e.salary)
    return {"name": who.name, "salary": who.salary}


def top_earner(world: World, rng: random.Random) -> dict[str, Any]:
    trios = [t for t in itertools.combinations(colleagues(world), 3)
             if len({e.salary for e in t}) == 3]
    trio = rng.choice(trios)
    top = max(trio, key=lambda e: e.salary)
    order = placed(world, rng, top, [e for e in trio if e is not top])
    out = {f"p{i}": e.name for i, e in enumerate(order)}
    return {**out, "answer": top.name, "top_salary": top.salary,
            "salaries": [f'"salary": {e.salary}' for e in trio]}


def rep_total(world: World, rng: random.Random) -> dict[str, Any]:
    totals = dict(sales_totals(world, lambda s: s.employee_id))
    rep = unlike(world, rng, sorted(totals), "E09", lambda w, i: round(
        dict(sales_totals(w, lambda s: s.employee_id)).get(i, 0.0), 2))
    return {"rep_id": rep, "total": as_number(totals[rep])}


def bonus_ids(world: World, rng: random.Random) -> dict[str, Any]:
    """Two reps by id; the one with the larger total is named first on even seeds."""
    totals = dict(sales_totals(world, lambda s: s.employee_id))
    win, lose = rng.choice([(a, b) for a in totals for b in totals if totals[a] > totals[b]])
    first, second = (win, lose) if world.seed % 2 == 0 else (lose, win)
    return {"first": first, "second": second, "winner": win,
            "win_total": as_number(totals[win]), "lose_total": as_number(totals[lose]),
            "totals": [as_number(totals[first]), as_number(totals[second])]}


# -- DM-7: free hours ----------------------------------------------------------------------

_STARTS = ("09:00", "09:30", "10:00", "10:30", "11:00", "13:00", "13:30", "14:00", "14:30",
           "15:00", "15:30", "16:00")


def _free(world: World, people: list[str], day: dt.date, start: str) -> bool:
    end = to_hhmm(to_minutes(start) + 60)
    return not any(world.busy(p, day, start, end) for p in people)


def _days(world: World) -> list[dt.date]:
    return [world.today + dt.timedelta(days=n) for n in range(0, 5)]


def hour_free(world: World, rng: random.Random) -> dict[str, Any]:
    """An hour with a colleague: both free on odd seeds, a clash on even ones."""
    yes = side(world)
    options = [(e, d, s) for e in colleagues(world) for d in _days(world) for s in _STARTS
               if _free(world, [world.user, e.email], d, s) == yes]
    who, day, start = rng.choice(options)
    return {"colleague": who.name, "day": day_long(day), "date": day.isoformat(),
            "start": start, "end": to_hhmm(to_minutes(start) + 60), "answer": yes_no(yes)}


def one_of_three(world: World, rng: random.Random) -> dict[str, Any]:
    """Three starts on one day with a colleague, exactly one of them free for both."""
    options = []
    for who in colleagues(world):
        people = [world.user, who.email]
        for day in _days(world)[1:]:
            free = [s for s in _STARTS if _free(world, people, day, s)]
            busy = [s for s in _STARTS if s not in free]
            if free and len(busy) >= 2:
                options.append((who, day, free, busy))
    who, day, free, busy = rng.choice(options)
    answer = rng.choice(free)
    order = sorted([answer, *rng.sample(busy, 2)])
    out = {f"t{i}": t for i, t in enumerate(order)}
    out.update({f"e{i}": to_hhmm(to_minutes(t) + 60) for i, t in enumerate(order)})
    return {**out, "colleague": who.name, "day": day_long(day), "date": day.isoformat(),
            "answer": answer}
