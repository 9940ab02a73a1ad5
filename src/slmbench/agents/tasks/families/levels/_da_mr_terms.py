"""What the data-analysis and multi-step-reasoning ladders share: sums over the world's
sales, the sales reps, and the pieces of a template they repeat."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from slmbench.agents.tasks.families.terms import as_number, seed0
from slmbench.agents.world import Employee, Product, Sale, World

__all__ = ["MONTHS", "big_sales_leader", "category_stock", "extremes_sales_gap", "fresh",
           "product_id_total", "product_rep_total", "rep_big_sales", "rep_month_change",
           "rep_month_total", "reps", "sales_of", "sold_by", "total", "usd"]

T = TypeVar("T")

# the months the sales table covers whole: (name, first day, first day after)
MONTHS = {1: ("January 2025", "2025-01-01", "2025-02-01"),
          2: ("February 2025", "2025-02-01", "2025-03-01")}


def usd(value: str) -> dict[str, Any]:
    """A numeric scorer of a dollar amount (half a dollar either way)."""
    return {"kind": "numeric", "value": value, "tolerance": 0.5, "unit": "USD"}


def sales_of(world: World, *, product: str | None = None, rep: str | None = None,
             month: int | None = None, above: float | None = None) -> list[Sale]:
    """The world's sales of the product (id), by the rep (id), in the month, over the amount
    (each given filter holds)."""
    return [s for s in world.sales
            if (product is None or s.product_id == product)
            and (rep is None or s.employee_id == rep)
            and (month is None or s.date.month == month)
            and (above is None or s.amount > above)]


def total(sales: Sequence[Sale]) -> int | float:
    return as_number(round(sum(s.amount for s in sales), 2))


def reps(world: World) -> list[Employee]:
    """The employees who made a sale, by id."""
    ids = {s.employee_id for s in world.sales}
    return [e for e in world.employees if e.id in ids]


def sold_by(world: World, name: str) -> str | None:
    """The id of the employee called ``name`` in ``world`` (None: nobody there)."""
    e = world.person(name)
    return None if e is None else e.id


def fresh(world: World, rng: random.Random, options: Sequence[T], curated: Callable[[World], T],
          answer: Callable[[World, T], object]) -> T:
    """:func:`terms.unlike` with a curated option computed from seed 0's world (seed 0 takes
    it; a drawn world leaves out the options whose answer is seed 0's, while any remain)."""
    if world.seed == 0:
        return curated(world)
    remembered = answer(seed0(), curated(seed0()))
    kept = [o for o in options if answer(world, o) != remembered]
    return rng.choice(list(kept or options))


# -- the binders of DA-5 .. DA-8's levels (data_analysis.py holds their templates) ----------

def _sum_or_none(sales: Sequence[Sale]) -> int | float | None:
    return total(sales) if sales else None


def product_id_total(world: World, rng: random.Random) -> dict[str, Any]:
    """One product's sales, named by its id."""
    def answer(w: World, pid: str) -> object:
        return _sum_or_none(sales_of(w, product=pid))

    sold = sorted({s.product_id for s in world.sales})
    pid = fresh(world, rng, sold, lambda w: sorted({s.product_id for s in w.sales})[0], answer)
    return {"product_id": pid, "sum": answer(world, pid)}


def _combos(world: World) -> list[tuple[str, str]]:
    names = {p.id: p.name for p in world.products}
    return sorted({(names[s.product_id], _name(world, s.employee_id)) for s in world.sales})


def product_rep_total(world: World, rng: random.Random) -> dict[str, Any]:
    """One rep's sales of one product."""
    def answer(w: World, combo: tuple[str, str]) -> object:
        rep, product = sold_by(w, combo[1]), _product_id(w, combo[0])
        return None if rep is None or product is None else \
            _sum_or_none(sales_of(w, product=product, rep=rep))

    product, rep = fresh(world, rng, _combos(world), lambda w: _combos(w)[-1], answer)
    return {"product": product, "product_id": _product_id(world, product), "rep": rep,
            "rep_id": sold_by(world, rep), "sum": answer(world, (product, rep))}


def _product_id(world: World, name: str) -> str | None:
    return next((p.id for p in world.products if p.name == name), None)


def _name(world: World, employee_id: str) -> str:
    e = world.person(employee_id)
    assert e is not None
    return e.name


def rep_month_total(world: World, rng: random.Random) -> dict[str, Any]:
    """One rep's sales in one month."""
    def answer(w: World, combo: tuple[int, str]) -> object:
        rep = sold_by(w, combo[1])
        return None if rep is None else _sum_or_none(sales_of(w, rep=rep, month=combo[0]))

    def combos(w: World) -> list[tuple[int, str]]:
        return sorted({(s.date.month, _name(w, s.employee_id)) for s in w.sales
                       if s.date.month in MONTHS})

    month, rep = fresh(world, rng, combos(world), lambda w: combos(w)[0], answer)
    name, first, after = MONTHS[month]
    return {"month": name, "first": first, "after": after, "rep": rep,
            "rep_id": sold_by(world, rep), "sum": answer(world, (month, rep))}


def rep_month_change(world: World, rng: random.Random) -> dict[str, Any]:
    """One rep's January and February sales, and how far apart they are."""
    def months(w: World, name: str) -> tuple[object, object]:
        rep = sold_by(w, name)
        return (None, None) if rep is None else \
            tuple(_sum_or_none(sales_of(w, rep=rep, month=m)) for m in (1, 2))  # type: ignore

    def answer(w: World, name: str) -> object:
        jan, feb = months(w, name)
        return None if jan is None or feb is None else as_number(abs(feb - jan))  # type: ignore

    def both(w: World) -> list[str]:
        return [e.name for e in reps(w) if None not in months(w, e.name)
                and len(set(months(w, e.name))) == 2]

    name = fresh(world, rng, both(world), lambda w: both(w)[0], answer)
    jan, feb = months(world, name)
    return {"rep": name, "rep_id": sold_by(world, name), "jan": jan, "feb": feb,
            "change": answer(world, name)}


_THRESHOLDS = range(250, 3001, 250)


def _thresholds(world: World) -> list[int]:
    """Round amounts no sale equals, so that "more than" and "at least" agree."""
    return [t for t in _THRESHOLDS if all(s.amount != t for s in world.sales)]


def rep_big_sales(world: World, rng: random.Random) -> dict[str, Any]:
    """One rep's sales of more than an amount, summed."""
    def answer(w: World, combo: tuple[int, str]) -> object:
        rep = sold_by(w, combo[1])
        return None if rep is None else _sum_or_none(sales_of(w, rep=rep, above=combo[0]))

    def combos(w: World) -> list[tuple[int, str]]:
        return [(t, e.name) for t in _thresholds(w) for e in reps(w)
                if sales_of(w, rep=e.id, above=t)]

    amount, rep = fresh(world, rng, combos(world), lambda w: combos(w)[len(combos(w)) // 2],
                        answer)
    return {"amount": amount, "rep": rep, "rep_id": sold_by(world, rep),
            "sum": answer(world, (amount, rep))}


def _big_leader(world: World, amount: int) -> Employee | None:
    """The rep who made the most sales of more than ``amount`` (None: a tie, or none)."""
    counts = Counter(s.employee_id for s in sales_of(world, above=amount))
    ranked = counts.most_common()
    if not ranked or (len(ranked) > 1 and ranked[0][1] == ranked[1][1]):
        return None
    return world.person(ranked[0][0])


def big_sales_leader(world: World, rng: random.Random) -> dict[str, Any]:
    """Who made the most sales of more than an amount, and what those sales total."""
    def answer(w: World, amount: int) -> object:
        e = _big_leader(w, amount)
        return None if e is None else total(sales_of(w, rep=e.id, above=amount))

    options = [t for t in _thresholds(world) if _big_leader(world, t) is not None]
    amount = fresh(world, rng, options,
                   lambda w: next(t for t in _thresholds(w) if _big_leader(w, t)), answer)
    leader = _big_leader(world, amount)
    assert leader is not None
    others = sorted({_name(world, s.employee_id) for s in world.sales} - {leader.name})
    return {"amount": amount, "rep": leader.name, "rep_id": leader.id, "others": others,
            "sum": answer(world, amount)}


_CATEGORIES = ("Hardware", "Accessories", "Software")


def category_stock(world: World, rng: random.Random) -> dict[str, Any]:
    """The units in stock of one category's products."""
    def answer(w: World, category: str) -> object:
        return sum(p.stock for p in w.products if p.category == category)

    category = fresh(world, rng, _CATEGORIES, lambda w: "Accessories", answer)
    return {"category": category, "stock": answer(world, category)}


def _extremes(world: World, category: str) -> tuple[Product, Product] | None:
    """The category's dearest and cheapest products, where both are unique and both sold."""
    ranked = sorted((p for p in world.products if p.category == category), key=lambda p: p.price)
    if len(ranked) < 2 or ranked[0].price == ranked[1].price or \
            ranked[-1].price == ranked[-2].price:
        return None
    if not (sales_of(world, product=ranked[0].id) and sales_of(world, product=ranked[-1].id)):
        return None
    return ranked[-1], ranked[0]


def extremes_sales_gap(world: World, rng: random.Random) -> dict[str, Any]:
    """The sales of a category's dearest and cheapest products, and how far apart they are."""
    def answer(w: World, category: str) -> object:
        pair = _extremes(w, category)
        if pair is None:
            return None
        hi, lo = (total(sales_of(w, product=p.id)) for p in pair)
        return as_number(round(abs(hi - lo), 2))

    options = [c for c in _CATEGORIES if _extremes(world, c)]
    category = fresh(world, rng, options, lambda w: "Hardware", answer)
    pair = _extremes(world, category)
    assert pair is not None
    hi, lo = pair
    return {"category": category, "high": hi.name, "high_id": hi.id, "low": lo.name,
            "low_id": lo.id, "high_sum": total(sales_of(world, product=hi.id)),
            "low_sum": total(sales_of(world, product=lo.id)), "gap": answer(world, category)}
