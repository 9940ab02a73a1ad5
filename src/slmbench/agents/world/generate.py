"""Worlds of seed >= 1: every record drawn from the seed, consistent by construction.

Seed 0 is the curated world of ``world.yaml``; any other seed draws a whole new company
week with the same shape: the same company, user role, week and office hours, and the same
templates (:mod:`slmbench.agents.world.data`), but new people (names, department sizes,
salaries, start dates), product prices and stock, a new calendar, new inbox dates and read
flags, new regional figures, and new invented facts (:func:`draw`). Draws use their own
``random.Random`` stream, so the same seed always gives the same world.

By construction: names (first and last) are unique within a world and never one of seed 0's,
so an answer remembered from seed 0 names nobody; every e-mail's sender is an employee or a
fixed outside address; events fall inside the week and office hours and never overlap for
any attendee; exactly one product is out of stock and one low (1-9 units); the customer
order in the inbox is for fewer units than are in stock; the most recent e-mail is unread;
the file server maintenance falls on a weekend other than seed 0's;
amounts are quantity x price (the sales draw is shared with seed 0, in ``core``).
"""

from __future__ import annotations

import datetime as dt
import random
from dataclasses import dataclass

from slmbench.agents.world import data
from slmbench.agents.world.records import Employee, Event, Product
from slmbench.agents.world.slots import Slot

__all__ = ["GENERATOR_VERSION", "TRADES", "Drawn", "draw"]

#: bump it with any change to what a seed >= 1 draws: this module's records and slots, and the
#: task families' templates and binders that fill an instance from them
#: (``slmbench.agents.tasks.families``). It is in the harness fingerprint
#: (``slmbench.agents.harness``), so a run never mixes instances drawn before and after.
GENERATOR_VERSION = 2  # 2: #59 rebound CD-2, CD-3, RC-1, RR-3, RF-3; balanced forms

_FIRST = ("Aisha", "Bruno", "Carla", "Dmitri", "Elena", "Farid", "Greta", "Hugo", "Ines",
          "Jonas", "Kira", "Leon", "Maya", "Nils", "Omar", "Paula", "Quentin", "Rosa", "Sven",
          "Tara", "Umar", "Vera", "Wade", "Xenia", "Yusuf", "Zara", "Amir", "Beatriz", "Cyril",
          "Delia", "Emil", "Freya", "Gideon", "Helga", "Idris", "Julia", "Kofi", "Lena", "Mateo",
          "Nadia", "Oscar", "Petra", "Rafael", "Selma", "Theo", "Ursula", "Viktor", "Wanda")
_LAST = ("Abara", "Bishop", "Castell", "Dorsey", "Eklund", "Fairley", "Garnett", "Holloway",
         "Ibarra", "Jessup", "Kowalski", "Lindgren", "Maddox", "Nakamura", "Oyelaran", "Pryce",
         "Quinlan", "Rasmussen", "Sandoval", "Thorne", "Underhill", "Vasquez", "Whitlock",
         "Yamada", "Zeller", "Ashdown", "Brennan", "Calloway", "Demir", "Eastwood", "Fenwick",
         "Gallo", "Hargrove", "Iverson", "Jaramillo", "Kearney", "Lachance", "Mercer",
         "Northcott", "Osei", "Pemberton", "Rourke", "Stroud", "Tanaka", "Vance", "Wexler")
_ONSET = ("b", "br", "c", "d", "dr", "f", "g", "gr", "h", "k", "l", "m", "n", "p", "r", "s",
          "st", "t", "tr", "v", "w", "z")
_VOWEL = ("a", "e", "i", "o", "u", "ae", "ei", "ou")
_MIDDLE = ("l", "ll", "m", "n", "nd", "r", "rr", "s", "st", "th", "v", "x")
_END = ("ick", "en", "or", "an", "is", "el", "ow", "ar", "et", "im")
# a trade (as a fact writes it) and the shorter words that also name it
TRADES: dict[str, list[str]] = {
    "rope works": ["rope works", "rope"], "tannery": ["tannery", "tanner"],
    "brewery": ["brewery", "brew"], "sawmill": ["sawmill", "saw mill"],
    "shipyard": ["shipyard", "ship"], "print shop": ["print shop", "print"],
    "glassworks": ["glassworks", "glass"], "flour mill": ["flour mill", "flour"],
}

# (title, department, yearly salary range in thousands of USD, manager's role)
_HEADS = (("Chief Executive Officer", "Executive", (170, 200), None),
          ("VP Engineering", "Engineering", (150, 170), "E01"),
          ("Head of Sales", "Sales", (125, 145), "E01"),
          ("Finance Director", "Finance", (120, 140), "E01"),
          ("Operations Manager", "Operations", (85, 105), "E01"))
_STAFF = (  # department, head's id, how many (range), titles with salary ranges
    ("Engineering", "E02", (2, 5), (("Senior Engineer", (115, 130)),
                                    ("Software Engineer", (95, 115)),
                                    ("Data Scientist", (105, 120)),
                                    ("DevOps Engineer", (100, 120)))),
    ("Sales", "E03", (2, 4), (("Account Executive", (78, 92)), ("Sales Associate", (55, 68)))),
    ("Finance", "E04", (1, 2), (("Financial Analyst", (72, 85)), ("Accountant", (65, 78)))),
)
_MARKETING_STAFF = (("Content Specialist", (60, 72)), ("Designer", (62, 75)))


@dataclass(frozen=True)
class Drawn:
    """Everything a seed draws besides the sales table."""

    employees: list[Employee]
    products: list[Product]
    events: list[Event]
    slots: dict[str, Slot]
    inbox_dates: dict[str, tuple[dt.date, bool]]
    regional_revenue_csv: str
    sales_reps: tuple[str, ...]


class _Names:
    """Unique names within one world, never one of seed 0's."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        taken = [e.name for e in data.EMPLOYEES] + [str(data.SLOTS[k]) for k in (
            "mineral_finder", "element_finder", "element_partner", "vaccine_maker",
            "language_author")]
        self.firsts = {n.split()[0] for n in taken}
        self.lasts = {n.split()[-1] for n in taken}
        self.words = {str(v).lower() for v in data.SLOTS.values() if isinstance(v, str)}

    def person(self) -> str:
        first = self.rng.choice([n for n in _FIRST if n not in self.firsts])
        last = self.rng.choice([n for n in _LAST if n not in self.lasts])
        self.firsts.add(first)
        self.lasts.add(last)
        return f"{first} {last}"

    def word(self, suffix: str = "") -> str:
        while True:
            w = (self.rng.choice(_ONSET) + self.rng.choice(_VOWEL) + self.rng.choice(_MIDDLE)
                 + (suffix or self.rng.choice(_END)))
            if w.lower() not in self.words:
                self.words.add(w.lower())
                return w.capitalize()


def _salary(rng: random.Random, band: tuple[int, int]) -> int:
    return rng.randint(*band) * 1000


def _start(rng: random.Random, first: int, last: int) -> dt.date:
    day = dt.date(first, 1, 1) + dt.timedelta(days=rng.randrange((last - first + 1) * 365))
    return day - dt.timedelta(days=day.weekday())  # people start on a Monday


def _employees(rng: random.Random, names: _Names) -> list[Employee]:
    rows: list[tuple[str, str, int, dt.date, str | None]] = []
    for i, (title, dept, band, manager) in enumerate(_HEADS):
        rows.append((title, dept, _salary(rng, band),
                     _start(rng, 2015, 2015) if i == 0 else _start(rng, 2015, 2019), manager))
    for dept, head, (lo, hi), titles in _STAFF:
        for _ in range(rng.randint(lo, hi)):
            title, band = rng.choice(titles)
            rows.append((title, dept, _salary(rng, band), _start(rng, 2016, 2024), head))
    lead = f"E{len(rows) + 1:02d}"
    rows.append(("Marketing Lead", "Marketing", _salary(rng, (95, 110)), _start(rng, 2016, 2021),
                 "E01"))
    for _ in range(rng.randint(1, 2)):
        title, band = rng.choice(_MARKETING_STAFF)
        rows.append((title, "Marketing", _salary(rng, band), _start(rng, 2018, 2024), lead))
    out = []
    for i, (title, dept, salary, start, manager) in enumerate(rows, start=1):
        name = names.person()
        out.append(Employee(id=f"E{i:02d}", name=name, email=data.email_of(name), department=dept,
                            title=title, salary=salary, start_date=start, manager=manager))
    return out


# numbers in product names ("Laptop Air 13"): never a stock level, so that a name is not a count
_NAMED = {int(w) for p in data.PRODUCTS for w in p.name.replace("-", " ").split() if w.isdigit()}


def _products(rng: random.Random) -> list[Product]:
    out = []
    for p in data.PRODUCTS:
        price = round(p.price * rng.uniform(0.75, 1.3))
        price = max(9, price - price % 10 + 9) if price >= 20 else price  # "...9" price points
        stock = rng.choice([n for n in range(12, 401) if n not in _NAMED])
        out.append(Product(id=p.id, name=p.name, category=p.category, price=float(price),
                           stock=stock))
    empty, low = rng.sample(range(len(out)), 2)
    out[empty] = out[empty].model_copy(update={"stock": 0})
    out[low] = out[low].model_copy(update={"stock": rng.randint(1, 9)})
    return out


def _minutes(hhmm: str) -> int:
    h, m = hhmm.split(":")
    return int(h) * 60 + int(m)


def _hhmm(minutes: int) -> str:
    return f"{minutes // 60:02d}:{minutes % 60:02d}"


def _events(rng: random.Random, people: list[Employee], vendor: str) -> list[Event]:
    by_title = {e.title: e for e in people}
    user, ceo = people[4], by_title["Chief Executive Officer"]
    eng = [e for e in people if e.department == "Engineering" and e.manager == "E02"]
    sales = [e for e in people if e.department == "Sales" and e.manager == "E03"]
    finance = [e for e in people if e.department == "Finance" and e.manager == "E04"]
    market = [e for e in people if e.department == "Marketing"]
    heads = [by_title[t] for t in ("VP Engineering", "Head of Sales", "Finance Director")]
    sales_head, lead = by_title["Head of Sales"], by_title["Marketing Lead"]
    kinds = [  # title, attendees, minutes, fixed start or None, location
        ("Weekly team standup", [user, *eng[:3]], 30, None, "Room Cedar"),
        ("Budget review", [user, heads[2], finance[0]], 60, None, "Room Maple"),
        ("Product roadmap sync", [user, heads[0], lead], 90, None, "Room Cedar"),
        (f"Lunch with {sales_head.name.split()[0]}", [user, sales_head], 60, "12:00",
         "Cafe Lumen"),
        ("Hiring panel", [heads[0], *eng[:2]], 90, None, "Room Birch"),
        (f"Vendor call: {vendor}", [user, eng[0]], 60, None, "Video call"),
        ("Quarterly planning", [user, ceo, *heads, lead], 180, None, "Boardroom"),
        (f"1:1 with {ceo.name.split()[0]}", [user, ceo], 30, None,
         f"{ceo.name.split()[0]}'s office"),
        ("Sales pipeline review", [sales_head, *sales], 60, None, "Room Maple"),
        ("Engineering demo", [user, heads[0], *eng], 60, None, "Room Cedar"),
        ("Team social", [user, *market, sales[-1]], 60, None, "Rooftop"),
    ]
    placed: list[tuple[int, int, int, set[str], str, str, list[str]]] = []
    lo, hi = _minutes(data.WORK_START), _minutes(data.WORK_END)
    for title, who, length, fixed, location in kinds:
        emails = [e.email for e in who]
        for _ in range(500):
            day = rng.randrange(len(data.WEEK))
            start = _minutes(fixed) if fixed else rng.randrange(lo, hi - length + 1, 30)
            if not any(d == day and s < start + length and start < t and busy & set(emails)
                       for d, s, t, busy, *_ in placed):
                placed.append((day, start, start + length, set(emails), title, location, emails))
                break
        else:  # pragma: no cover - the week always has room for eleven events
            raise RuntimeError(f"no room for {title!r} in the week")
    placed.sort(key=lambda p: (p[0], p[1], p[4]))
    return [Event(id=f"EV{i:02d}", title=title, date=data.WEEK[day], start=_hhmm(s),
                  end=_hhmm(t), attendees=emails, location=location)
            for i, (day, s, t, _, title, location, emails) in enumerate(placed, start=1)]


def _regional(rng: random.Random) -> str:
    lines = ["region,quarter,revenue,units"]
    for region in ("North", "South", "East", "West"):
        for q in range(1, 5):
            revenue = rng.randrange(250, 600) * 100
            lines.append(f"{region},Q{q},{revenue},{round(revenue / rng.uniform(125, 145))}")
    return "\n".join(lines) + "\n"


def _date(rng: random.Random, first: dt.date, last: dt.date) -> dt.date:
    return first + dt.timedelta(days=rng.randrange((last - first).days + 1))


def _slots(rng: random.Random, names: _Names, products: list[Product]) -> dict[str, Slot]:
    invoice_due = _date(rng, dt.date(2025, 3, 14), dt.date(2025, 4, 30))
    renewal = (_date(rng, dt.date(2025, 3, 11), invoice_due - dt.timedelta(days=1))
               if rng.random() < 0.5 else
               _date(rng, invoice_due + dt.timedelta(days=1), dt.date(2025, 9, 30)))
    # a weekend for the file server maintenance, never seed 0's (Saturday 15 March), so that
    # a maintenance date remembered from seed 0 is wrong; 29 March takes 15 March's place, so
    # the draw consumes the stream as before and every other draw is unchanged
    weekend = rng.choice((dt.date(2025, 3, 29), dt.date(2025, 3, 16), dt.date(2025, 3, 22),
                          dt.date(2025, 3, 23)))
    start = rng.choice((6, 7, 8, 9, 10))
    empty = next(p.name for p in products if p.stock == 0)
    hardware = [p.name for p in products if p.category == "Hardware"]
    stocked = [p for p in products if p.category == "Hardware" and p.stock >= 12]
    order = rng.choice(stocked) if stocked else max(products, key=lambda p: p.stock)
    return {
        "tower": names.word(), "tower_height": rng.randint(150, 450),
        "peak": names.word(), "peak_range": names.word(), "peak_height": rng.randint(2500, 7900),
        "network": names.word(), "network_speed": rng.randrange(1500, 2500) * 100,
        "copper": names.word(), "copper_speed": rng.randrange(1200, 2000) * 100,
        "mineral": names.word("ite").lower(), "mineral_year": rng.randint(1890, 1990),
        "mineral_finder": names.person(),
        "element": names.word("ium").lower(), "element_year": rng.randint(1890, 1990),
        "element_finder": names.person(), "element_partner": names.person(),
        "fever": names.word(), "vaccine_year": rng.randint(1920, 1995),
        "vaccine_maker": names.person(),
        "founded": names.word("wood"), "founded_year": rng.randint(1840, 1950),
        "founded_trade": rng.choice(sorted(TRADES)),
        "language": names.word("script"), "language_year": rng.randint(1995, 2020),
        "language_author": names.person(),
        "expense_limit": rng.choice((250, 300, 400, 600, 750, 1000)),
        "vendor": names.word("nest"), "vendor_monthly": rng.randrange(20, 90) * 100,
        "vendor_renewal": renewal.isoformat(),
        "invoice": f"INV-{rng.randrange(1000, 10000)}", "invoice_due": invoice_due.isoformat(),
        "customer": f"{names.word()} {rng.choice(('Logistics', 'Freight', 'Shipping'))}",
        "q1_target": 0,  # set from the sales total in core (a target below it)
        "maintenance_date": weekend.isoformat(),
        "maintenance_start": f"{start:02d}:00", "maintenance_end": f"{start + 4:02d}:00",
        "campaign_product": rng.choice(hardware),
        "campaign_launch": _date(rng, dt.date(2025, 3, 24), dt.date(2025, 5, 30)).isoformat(),
        "firmware_engineer": "",  # set from the employees below
        "order_qty": rng.randint(5, min(30, order.stock - 1)), "order_product": order.name,
        "out_of_stock_note": f"{empty} is out of stock; reorder soon.",
    }


def _inbox_dates(rng: random.Random) -> dict[str, tuple[dt.date, bool]]:
    days = rng.sample([data.TODAY - dt.timedelta(days=i) for i in range(10)], len(data.INBOX_DATES))
    flags = [rng.random() < 0.4 for _ in days]
    while not 2 <= flags.count(False) <= len(flags) - 1:
        flags = [rng.random() < 0.4 for _ in days]
    flags[days.index(max(days))] = False  # the most recent message is unread, as in seed 0
    return {i: (d, r) for i, d, r in zip(sorted(data.INBOX_DATES), days, flags, strict=True)}


def draw(seed: int) -> Drawn:
    """Seed ``seed``'s world, less its sales table (seed 0 is the curated world, not drawn)."""
    if seed == 0:
        raise ValueError("seed 0 is the curated world; it is read, not drawn")
    rng = random.Random(f"slmbench-world-{seed}")
    names = _Names(rng)
    employees = _employees(rng, names)
    products = _products(rng)
    slots = _slots(rng, names, products)
    engineers = [e.name for e in employees if e.manager == "E02"]
    slots["firmware_engineer"] = rng.choice(engineers)
    events = _events(rng, employees, str(slots["vendor"]))
    reps = tuple(e.id for e in employees if e.department == "Sales"
                 for _ in range(1 if e.manager == "E01" else 2))
    return Drawn(employees=employees, products=products, events=events, slots=slots,
                 inbox_dates=_inbox_dates(rng), regional_revenue_csv=_regional(rng),
                 sales_reps=reps)
