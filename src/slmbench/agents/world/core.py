"""The :class:`World`: all state one trial's tools read and change.

Built by :meth:`World.create`: seed 0 from the curated data in
:mod:`slmbench.agents.world.data`, any other seed drawn by
:mod:`slmbench.agents.world.generate`, each with a sales table drawn from
``random.Random(seed)``; the same seed always gives the same world. Tools mutate it
(events, sent mail, notifications, scratch files, read flags); :meth:`World.snapshot` is
its JSON state for scorers and audits.
"""

from __future__ import annotations

import csv
import datetime as dt
import functools
import io
import random
from typing import Any

from pydantic import BaseModel, Field

from slmbench.agents.world import data, generate, records
from slmbench.agents.world.slots import Slot, derive

N_SALES = 40
_SALES_START = dt.date(2025, 1, 6)
_SALES_DAYS = 60  # sales dates fall in 2025-01-06 .. 2025-03-06 (weekdays only)


def _draw_sales(seed: int, products: list[records.Product],
                reps: tuple[str, ...]) -> list[records.Sale]:
    rng = random.Random(seed)
    prices = {p.id: p.price for p in products}
    dates = (_SALES_START + dt.timedelta(days=i) for i in range(_SALES_DAYS))
    days = [d for d in dates if d.weekday() < 5]
    rows = []
    for _ in range(N_SALES):
        product = rng.choice(products).id
        qty = rng.randint(1, 8)
        rows.append((rng.choice(days), product, rng.choice(reps), qty))
    rows.sort(key=lambda r: (r[0], r[1], r[2], r[3]))
    return [
        records.Sale(id=f"S{i:03d}", product_id=p, employee_id=e, date=d, quantity=q,
                     amount=round(q * prices[p], 2))
        for i, (d, p, e, q) in enumerate(rows, start=1)
    ]


def _curated() -> generate.Drawn:
    return generate.Drawn(
        employees=[e.model_copy(deep=True) for e in data.EMPLOYEES],
        products=[p.model_copy(deep=True) for p in data.PRODUCTS],
        events=[e.model_copy(deep=True) for e in data.EVENTS], slots=dict(data.SLOTS),
        inbox_dates=dict(data.INBOX_DATES), regional_revenue_csv=data.REGIONAL_REVENUE_CSV,
        sales_reps=data.SALES_REPS)


def _target(seed: int, sales: list[records.Sale]) -> int:
    """A drawn world's Q1 target: a round thousand between 60% and 95% of its sales total."""
    share = random.Random(f"slmbench-target-{seed}").uniform(0.6, 0.95)
    return int(sum(s.amount for s in sales) * share) // 1000 * 1000


def sales_csv(sales: list[records.Sale], products: list[records.Product],
              employees: list[records.Employee]) -> str:
    """The ``sales_q1.csv`` export: one line per sale, with product and rep names."""
    prod = {p.id: p for p in products}
    emp = {e.id: e for e in employees}
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(["sale_id", "date", "product", "category", "rep", "quantity", "amount"])
    for s in sales:
        p = prod[s.product_id]
        w.writerow([s.id, s.date.isoformat(), p.name, p.category, emp[s.employee_id].name,
                    s.quantity, f"{s.amount:.2f}"])
    return out.getvalue()


def _to_minutes(hhmm: str) -> int:
    h, m = hhmm.split(":")
    return int(h) * 60 + int(m)


class World(BaseModel):
    """One trial's synthetic environment. See ``docs/world.md`` for its full contents."""

    seed: int = 0
    company: str = data.COMPANY
    today: dt.date = data.TODAY
    user: str = Field(description="the e-mail address the agent acts for")
    work_hours: tuple[str, str] = (data.WORK_START, data.WORK_END)
    facts: list[records.Fact]
    events: list[records.Event]
    employees: list[records.Employee]
    products: list[records.Product]
    sales: list[records.Sale]
    inbox: list[records.Email]
    files: dict[str, str]  # the scratch folder: file name -> text
    slots: dict[str, Slot] = Field(default_factory=dict, exclude=True)  # see world.slots
    sent: list[records.SentEmail] = Field(default_factory=list)
    notifications: list[records.Notification] = Field(default_factory=list)
    next_event_number: int = 100  # created events get ids EV100, EV101, ...

    @classmethod
    def create(cls, seed: int = 0) -> World:
        """A fresh world; equal seeds give equal worlds. Seed 0 is the curated world of
        ``world.yaml`` (today's tasks are written against it); any other seed is drawn whole
        (:mod:`slmbench.agents.world.generate`)."""
        if seed < 0:
            raise ValueError(f"a world seed is 0 or more, not {seed}")
        return _pristine(seed).model_copy(deep=True)

    @classmethod
    def _build(cls, seed: int) -> World:
        parts = _curated() if seed == 0 else generate.draw(seed)
        sales = _draw_sales(seed, parts.products, parts.sales_reps)
        drawn = (dict(parts.slots) if seed == 0
                 else {**parts.slots, "q1_target": _target(seed, sales)})
        slots = derive(drawn, user_id=data.USER_ID, employees=parts.employees,
                       products=parts.products, events=parts.events)
        user = next(e.email for e in parts.employees if e.id == data.USER_ID)
        return cls(
            seed=seed,
            user=user,
            slots=slots,
            facts=data.facts(slots),
            events=parts.events,
            employees=parts.employees,
            products=parts.products,
            sales=sales,
            inbox=data.inbox(slots, user, parts.inbox_dates),
            files={
                "sales_q1.csv": sales_csv(sales, parts.products, parts.employees),
                "regional_revenue.csv": parts.regional_revenue_csv,
                "notes.txt": data.notes_txt(slots),
            },
        )

    def snapshot(self) -> dict[str, Any]:
        """The whole state as plain JSON types (dates as ISO strings, e-mail sender as "from")."""
        return self.model_dump(mode="json", by_alias=True)

    # ---- people ---------------------------------------------------------------------------

    def person(self, who: str) -> records.Employee | None:
        """The employee named by ``who``: id, e-mail, full name or unique first name (any case)."""
        w = who.strip().lower()
        for e in self.employees:
            if w in (e.id.lower(), e.email.lower(), e.name.lower()):
                return e
        first = [e for e in self.employees if e.name.lower().split()[0] == w]
        return first[0] if len(first) == 1 else None

    def address(self, who: str) -> str:
        """The address of the employee ``who`` names, else ``who`` itself."""
        e = self.person(who)
        if e is not None:
            return e.email
        return who.strip().lower() if "@" in who else who.strip()

    # ---- calendar -------------------------------------------------------------------------

    def find_events(self, *, title: str | None = None, date: dt.date | None = None,
                    attendee: str | None = None) -> list[records.Event]:
        """Events matching every given filter: title substring (any case), date, attendee."""
        addr = self.address(attendee) if attendee else None
        return [
            e for e in self.events
            if (title is None or title.lower() in e.title.lower())
            and (date is None or e.date == date)
            and (addr is None or addr in e.attendees)
        ]

    def event(self, event_id: str) -> records.Event | None:
        return next((e for e in self.events if e.id.lower() == event_id.strip().lower()), None)

    def busy(self, attendee: str, date: dt.date, start: str, end: str) -> list[records.Event]:
        """Events of ``attendee`` on ``date`` overlapping [start, end)."""
        s, t = _to_minutes(start), _to_minutes(end)
        return [
            e for e in self.find_events(date=date, attendee=attendee)
            if _to_minutes(e.start) < t and s < _to_minutes(e.end)
        ]

    def new_event_id(self) -> str:
        eid = f"EV{self.next_event_number}"
        self.next_event_number += 1
        return eid

    # ---- mail and notifications -----------------------------------------------------------

    def sent_to(self, address: str) -> list[records.SentEmail]:
        """Messages sent to ``address`` (or to the employee it names), as ``to`` or ``cc``."""
        addr = self.address(address)
        return [m for m in self.sent if addr in m.to or addr in m.cc]

    def notifications_to(self, recipient: str,
                         channel: str | None = None) -> list[records.Notification]:
        """Notifications whose recipient matches (any case), optionally on one channel."""
        r = recipient.strip().lower()
        return [n for n in self.notifications
                if n.recipient.lower() == r and (channel is None or n.channel == channel)]

    def email(self, email_id: str) -> records.Email | None:
        return next((m for m in self.inbox if m.id.lower() == email_id.strip().lower()), None)

    # ---- tables ---------------------------------------------------------------------------

    def table(self, name: str) -> list[dict[str, Any]]:
        """Rows of ``employees``, ``products`` or ``sales`` as JSON dicts; KeyError otherwise."""
        rows: list[BaseModel] = {"employees": self.employees, "products": self.products,
                                 "sales": self.sales}[name]
        return [r.model_dump(mode="json") for r in rows]


@functools.lru_cache(maxsize=64)
def _pristine(seed: int) -> World:
    """The world of ``seed`` as built, never handed out: :meth:`World.create` returns a deep
    copy (a copy costs about two thirds of a build, and a trial asks its world several times:
    to run in, to score against, to diff)."""
    return World._build(seed)


@functools.lru_cache(maxsize=64)
def fresh_snapshot(seed: int) -> dict[str, Any]:
    """``World.create(seed).snapshot()``, kept per seed and shared: read it, never change it
    (a trial diffs its world against it)."""
    return _pristine(seed).snapshot()
