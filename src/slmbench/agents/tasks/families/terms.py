"""What the binders share: how the tasks write dates, times and people, how an instance
picks its entities, and the values several families compute from a world.

The binders themselves are in :mod:`.bind_capability` and :mod:`.bind_reliability`, one
registry (``BINDERS``, family id -> :data:`Binder`) per suite.
"""

from __future__ import annotations

import datetime as dt
import random
from collections import defaultdict
from collections.abc import Callable, Sequence
from functools import cache
from typing import Any, TypeVar

from slmbench.agents.world import Employee, Event, World

__all__ = ["FORM_OFFSETS", "Binder", "as_number", "balanced_form", "binds_into", "date_aliases",
           "day_long", "free_starts", "full_name_aliases", "invoice_figures", "my_events",
           "person_aliases", "pick",
           "product_named", "sales_figures", "sales_totals", "seed0", "time_aliases",
           "title_aliases", "titled", "to_hhmm", "to_minutes", "unlike", "week_days"]

Binder = Callable[[World, random.Random], dict[str, Any]]


def binds_into(registry: dict[str, Binder]) -> Callable[..., Callable[[Binder], Binder]]:
    """A decorator factory: ``@binds("IR-2", ...)`` registers a binder for those families."""
    def binds(*families: str) -> Callable[[Binder], Binder]:
        def register(fn: Binder) -> Binder:
            for f in families:
                registry[f] = fn
            return fn
        return register
    return binds


# -- how an instance picks, and how the tasks write dates, times and people ------------------

T = TypeVar("T")


def pick(world: World, rng: random.Random, options: Sequence[T], curated: T) -> T:
    """Seed 0 takes what its curated task asks about; other seeds draw from ``options``."""
    return curated if world.seed == 0 else rng.choice(list(options))


@cache
def seed0() -> World:
    """The curated world, read (never changed) to know what seed 0's tasks answer."""
    return World.create(0)


def unlike(world: World, rng: random.Random, options: Sequence[T], curated: T,
           answer: Callable[[World, T], object]) -> T:
    """``pick``, where the worlds share entities (departments, products, meeting titles) and
    answers are few (a headcount): a drawn instance leaves out the options whose ``answer`` in
    its world is the curated option's in seed 0's (while any remain), so that an answer
    remembered from seed 0 is wrong, not right by coincidence."""
    if world.seed == 0:
        return curated
    remembered = answer(seed0(), curated)
    fresh = [o for o in options if answer(world, o) != remembered]
    return rng.choice(fresh or list(options))


def _ordinal(n: int) -> str:
    return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


def date_aliases(day: dt.date) -> list[str]:
    """The ways an answer may write ``day``: ``2025-03-20``, ``20 March``, ``March 20``, ..."""
    month = day.strftime("%B")
    return [day.isoformat(), f"{day.day} {month}", f"{month} {day.day}",
            f"{_ordinal(day.day)} of {month}", f"{month} {_ordinal(day.day)}"]


def day_long(day: dt.date) -> str:
    """``Wednesday 12 March 2025``."""
    return f"{day.strftime('%A')} {day.day} {day.strftime('%B')} {day.year}"


def time_aliases(hhmm: str) -> list[str]:
    """The ways an answer may write a time: ``10:00``, ``10 am``, ``10am``, ``10.00``, ..."""
    h, m = int(hhmm[:2]), int(hhmm[3:])
    twelve, half = (h % 12 or 12), ("am" if h < 12 else "pm")
    clock = f"{twelve}" if m == 0 else f"{twelve}:{m:02d}"
    out = [hhmm, f"{h}:{m:02d}", f"{clock} {half}", f"{clock}{half}", f"{h:02d}.{m:02d}"]
    return list(dict.fromkeys(out))


def person_aliases(e: Employee) -> list[str]:
    """A colleague by full name, address name or first name."""
    return [e.name, e.email.split("@")[0], e.name.split()[0]]


def full_name_aliases(e: Employee) -> list[str]:
    """A colleague by full name or address name: a first name alone is one of a few dozen, so
    a guessed list of names names it in many worlds (#59)."""
    return [e.name, e.email.split("@")[0]]


def titled(world: World, title: str) -> Employee:
    return next(e for e in world.employees if e.title == title)


def to_minutes(hhmm: str) -> int:
    return int(hhmm[:2]) * 60 + int(hhmm[3:])


def to_hhmm(minutes: int) -> str:
    return f"{minutes // 60:02d}:{minutes % 60:02d}"


def free_starts(world: World, people: list[str], day: dt.date, minutes: int) -> list[str]:
    lo, hi = (to_minutes(t) for t in world.work_hours)
    return [to_hhmm(s) for s in range(lo, hi - minutes + 1, 30)
            if not any(world.busy(p, day, to_hhmm(s), to_hhmm(s + minutes)) for p in people)]


def my_events(world: World, day: dt.date | None = None) -> list[Event]:
    return [e for e in world.events if world.user in e.attendees
            and (day is None or e.date == day)]


def title_aliases(title: str) -> str | list[str]:
    """``Vendor call: CloudNest`` may be written as either half; other titles whole (the
    colon of ``1:1 with Dana`` splits nothing: a lone "1" must not name a meeting)."""
    return [p.strip() for p in title.split(": ", 1)] if ": " in title else title


def as_number(x: float) -> int | float:
    return int(x) if float(x).is_integer() else round(x, 2)


def week_days(world: World) -> list[dt.date]:
    return sorted({e.date for e in world.events})


def sales_totals(world: World, key: Callable[[Any], str]) -> list[tuple[str, float]]:
    sums: dict[str, float] = defaultdict(float)
    for s in world.sales:
        sums[key(s)] += s.amount
    return sorted(sums.items(), key=lambda kv: (-kv[1], kv[0]))


def product_named(world: World, name: str) -> Any:
    return next(p for p in world.products if p.name == name)


# -- values several families share -----------------------------------------------------------

def sales_figures(world: World) -> dict[str, Any]:
    """The sales total, the Q1 target and the CEO who asked for the figure."""
    total = as_number(sum(s.amount for s in world.sales))
    target = int(world.slots["q1_target"])
    ceo = titled(world, "Chief Executive Officer")
    request = next(m for m in world.inbox if m.sender == ceo.email)
    return {"total": total, "total_digits": str(total), "target": target,
            "excess": as_number(total - target),
            "ceo_first": ceo.name.split()[0], "ceo_address": ceo.email,
            "ceo_id": ceo.email.split("@")[0], "request": request.id}


def invoice_figures(world: World) -> dict[str, Any]:
    """The vendor invoice's due date (as an answer may write it), e-mail and renewal order."""
    due = dt.date.fromisoformat(str(world.slots["invoice_due"]))
    renewal = dt.date.fromisoformat(str(world.slots["vendor_renewal"]))
    invoice = next(m for m in world.inbox if m.subject.startswith("Invoice "))
    return {"due_aliases": date_aliases(due), "invoice_email": invoice.id,
            "renews": "before" if renewal < due else "after"}


# A two-form family draws its form as (seed + offset) mod 2; the offsets split each group's
# odd instance evenly across forms, so that over the three worlds a study draws (1..3) a
# constant "Yes." or a refusal is right on about half of a group's instances, not two thirds
# (certify.certify_groups checks it). A family not listed has offset 0.
FORM_OFFSETS: dict[str, int] = {"DM-4": 1, "SF-2": 1, "SF-5": 1, "SF-7": 1, "RS-2": 1}


def balanced_form(world: World, family: str) -> int:
    """A two-form family's form: 0 (the curated one, harmful or "no") in seed 0, else
    ``(seed + FORM_OFFSETS[family]) % 2``: balanced over seeds, and across a group's
    families over the first three."""
    return 0 if world.seed == 0 else (world.seed + FORM_OFFSETS.get(family, 0)) % 2


def clock_aliases(hhmm: str) -> list[str]:
    """:func:`time_aliases`, and the 12-hour forms that keep the minutes or write "p.m."
    (``2:00 pm``, ``2:00pm``, ``2 p.m.``, ``2:00 p.m.``) for the families added later."""
    h, m = int(hhmm[:2]), int(hhmm[3:])
    twelve, half = (h % 12 or 12), ("am" if h < 12 else "pm")
    dotted = f"{half[0]}.m."
    extra = [f"{twelve}:{m:02d} {half}", f"{twelve}:{m:02d}{half}",
             *([f"{twelve} {dotted}"] if m == 0 else []), f"{twelve}:{m:02d} {dotted}"]
    return list(dict.fromkeys([*time_aliases(hhmm), *extra]))


def and_list(names: Sequence[str]) -> str:
    """``A``, ``A and B``, ``A, B and C``: names as an answer lists them."""
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
