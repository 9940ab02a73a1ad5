"""The hand-written part of the world: facts, people, products, calendar, inbox, files.

Everything here is fixed: the records are read from ``world.yaml`` beside this module (one
row per record), the constants below say when and for whom the world runs. Only the sales
table (and the CSV export of it) is drawn from the seed, in :mod:`slmbench.agents.world.core`.
"""

from __future__ import annotations

import datetime as dt
from importlib import resources
from typing import Any

import yaml

from slmbench.agents.world.records import Email, Employee, Event, Fact, Product

COMPANY = "Brightline Labs"
DOMAIN = "brightline.example"
TODAY = dt.date(2025, 3, 10)  # a Monday; the world never reads the real clock
WEEK = tuple(TODAY + dt.timedelta(days=i) for i in range(5))  # Mon 10 .. Fri 14 March 2025
WORK_START, WORK_END = "09:00", "17:00"
USER_ID = "E05"  # the agent acts for Alex Morgan, Operations Manager
SALES_REPS = ("E03", "E09", "E09", "E10", "E10", "E11")  # drawn with these weights


def _email_of(name: str) -> str:
    return name.lower().replace(" ", ".") + "@" + DOMAIN


def _address(who: str) -> str:
    """A colleague's address from their full name; an address as it is."""
    return who if "@" in who else _email_of(who)


_TABLES: dict[str, Any] = yaml.safe_load(
    resources.files("slmbench.agents.world").joinpath("world.yaml").read_text(encoding="utf-8"))

FACTS = [Fact(key=k, title=t, text=x) for k, t, x in _TABLES["facts"]]
EMPLOYEES = [
    Employee(id=i, name=n, email=_email_of(n), department=d, title=t, salary=s, start_date=sd,
             manager=m)
    for i, n, d, t, s, sd, m in _TABLES["employees"]
]
PRODUCTS = [Product(id=i, name=n, category=c, price=p, stock=s)
            for i, n, c, p, s in _TABLES["products"]]
EVENTS = [
    Event(id=i, title=t, date=WEEK[d], start=s, end=e, attendees=[_address(w) for w in who],
          location=loc)
    for i, t, d, s, e, who, loc in _TABLES["events"]
]
_USER = next(e.email for e in EMPLOYEES if e.id == USER_ID)
INBOX = [Email(id=i, sender=_address(f), to=_USER, subject=s, body=b, date=d, read=r)
         for i, f, s, b, d, r in _TABLES["inbox"]]
REGIONAL_REVENUE_CSV: str = _TABLES["files"]["regional_revenue.csv"]
NOTES_TXT: str = _TABLES["files"]["notes.txt"]
