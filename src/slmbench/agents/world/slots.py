"""A world's slots: the named values its templates (facts, inbox, ``notes.txt``) are filled from.

Two kinds: the *drawn* slots (seed 0's are in ``world.yaml``; other seeds draw theirs in
:mod:`slmbench.agents.world.generate`), and the slots every world *derives* from its own
records and drawn slots (:func:`derive`), so that, for example, the CEO a fact names is the
employee whose title says so. Task families read both (``World.slots``).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence

from slmbench.agents.world.records import Employee, Event, Product

__all__ = ["Slot", "day_text", "derive", "key_of", "render"]

Slot = str | int

# the name slots whose fact keys are derived from them (``<slot>_key``: lower case, "_" for spaces)
_KEYED = ("tower", "peak", "network", "copper", "fever", "founded", "language", "vendor",
          "customer")


def key_of(name: str) -> str:
    """A fact key from a name: ``"Harbor Logistics"`` -> ``"harbor_logistics"``."""
    return "_".join(name.lower().replace("-", " ").split())


def day_text(day: dt.date) -> str:
    """``Saturday 15 March``: how the world's texts write a date with its weekday."""
    return f"{day.strftime('%A')} {day.day} {day.strftime('%B')}"


def _titled(employees: Sequence[Employee], title: str) -> Employee:
    found = [e for e in employees if e.title == title]
    if len(found) != 1:
        raise ValueError(f"a world needs exactly one {title}, not {len(found)}")
    return found[0]


def _departments(employees: Sequence[Employee]) -> list[str]:
    seen: list[str] = []
    for e in employees:
        if e.department not in seen:
            seen.append(e.department)
    return seen


def derive(drawn: Mapping[str, Slot], *, user_id: str, employees: Sequence[Employee],
           products: Sequence[Product], events: Sequence[Event]) -> dict[str, Slot]:
    """The drawn slots plus those derived from the records (see the module docstring)."""
    user = next(e for e in employees if e.id == user_id)
    ceo = _titled(employees, "Chief Executive Officer")
    departments = _departments(employees)
    low = min((p for p in products if p.stock > 0), key=lambda p: (p.stock, p.id))
    budget = next(e for e in events if e.title == "Budget review")
    maintenance = dt.date.fromisoformat(str(drawn["maintenance_date"]))
    out: dict[str, Slot] = dict(drawn)
    out.update({
        "user_first": user.name.split()[0],
        "ceo": ceo.name,
        "ceo_first": ceo.name.split()[0],
        "finance_director": _titled(employees, "Finance Director").name,
        "marketing_lead": _titled(employees, "Marketing Lead").name,
        "sales_head": _titled(employees, "Head of Sales").name,
        "headcount": len(employees),
        "department_count": len(departments),
        "department_list": ", ".join(departments[:-1]) + " and " + departments[-1],
        "budget_review_day": budget.date.strftime("%A"),
        "low_stock": low.name,
        "low_stock_units": low.stock,
        "maintenance_day": day_text(maintenance),
        "maintenance_weekday": maintenance.strftime("%A"),
        "mineral_title": str(drawn["mineral"]).capitalize(),
        "element_title": str(drawn["element"]).capitalize(),
    })
    out.update({f"{k}_key": key_of(str(drawn[k])) for k in _KEYED})
    return out


def render(template: str, slots: Mapping[str, Slot]) -> str:
    """``template`` with its ``{slot}`` fields filled; a missing slot is a KeyError."""
    return template.format_map(slots)
