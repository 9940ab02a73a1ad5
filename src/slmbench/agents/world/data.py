"""The curated world (seed 0) and the templates every world shares, read from ``world.yaml``.

The constants below say when and for whom every world runs. Seed 0's people, products,
calendar, drawn slots and regional figures are the hand-written rows of ``world.yaml``; the
fact, inbox and ``notes.txt`` templates are filled from a world's slots
(:mod:`slmbench.agents.world.slots`). Other seeds draw their records in
:mod:`slmbench.agents.world.generate`; the sales table of every seed is drawn in
:mod:`slmbench.agents.world.core`.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from importlib import resources
from typing import Any

import yaml

from slmbench.agents.world.records import Email, Employee, Event, Fact, Product
from slmbench.agents.world.slots import Slot, render

COMPANY = "Brightline Labs"
DOMAIN = "brightline.example"
TODAY = dt.date(2025, 3, 10)  # a Monday; the world never reads the real clock
WEEK = tuple(TODAY + dt.timedelta(days=i) for i in range(5))  # Mon 10 .. Fri 14 March 2025
WORK_START, WORK_END = "09:00", "17:00"
USER_ID = "E05"  # the agent acts for the Operations Manager (Alex Morgan in seed 0)
SALES_REPS = ("E03", "E09", "E09", "E10", "E10", "E11")  # seed 0's reps, drawn with these weights


def email_of(name: str) -> str:
    """A colleague's address from their full name."""
    return name.lower().replace(" ", ".") + "@" + DOMAIN


def address(who: str) -> str:
    """A colleague's address from their full name; an address as it is."""
    return who if "@" in who else email_of(who)


_TABLES: dict[str, Any] = yaml.safe_load(
    resources.files("slmbench.agents.world").joinpath("world.yaml").read_text(encoding="utf-8"))

SLOTS: dict[str, Slot] = {k: v if isinstance(v, int) else str(v)
                          for k, v in _TABLES["slots"].items()}
EMPLOYEES = [
    Employee(id=i, name=n, email=email_of(n), department=d, title=t, salary=s, start_date=sd,
             manager=m)
    for i, n, d, t, s, sd, m in _TABLES["employees"]
]
PRODUCTS = [Product(id=i, name=n, category=c, price=p, stock=s)
            for i, n, c, p, s in _TABLES["products"]]
EVENTS = [
    Event(id=i, title=t, date=WEEK[d], start=s, end=e, attendees=[address(w) for w in who],
          location=loc)
    for i, t, d, s, e, who, loc in _TABLES["events"]
]
# seed 0's date and read flag of each message, by id
INBOX_DATES: dict[str, tuple[dt.date, bool]] = {i: (d, r) for i, _, _, _, d, r in
                                                _TABLES["inbox"]}
REGIONAL_REVENUE_CSV: str = _TABLES["files"]["regional_revenue.csv"]
_NOTES_TXT: str = _TABLES["files"]["notes.txt"]


def facts(slots: Mapping[str, Slot]) -> list[Fact]:
    """The fact table, its templates filled from ``slots``."""
    return [Fact(key=render(k, slots), title=render(t, slots), text=render(x, slots))
            for k, t, x in _TABLES["facts"]]


def inbox(slots: Mapping[str, Slot], user: str,
          dates: Mapping[str, tuple[dt.date, bool]]) -> list[Email]:
    """The inbox, its templates filled from ``slots``; ``dates``: each id's date and read flag."""
    return [Email(id=i, sender=address(render(f, slots)), to=user, subject=render(s, slots),
                  body=render(b, slots), date=dates[i][0], read=dates[i][1])
            for i, f, s, b, _, _ in _TABLES["inbox"]]


def notes_txt(slots: Mapping[str, Slot]) -> str:
    """``notes.txt``, filled from ``slots``."""
    return render(_NOTES_TXT, slots)
