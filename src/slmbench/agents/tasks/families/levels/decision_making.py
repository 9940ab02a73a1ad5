"""Decision making's ladders (``docs/tasks.md``, "Levels").

A decision's level 1 reads its answer from one result: the one fact a decision rests on (a
date, a salary, a stock, a price), or a yes/no the result states (in stock; both free). Its
higher levels decide (a choice, with the evidence it rests on) over more calls and options.
A yes/no or before/after choice is balanced over seeds (:func:`._ir_dm_terms.side`), and the
options of a longer choice are placed so that their order gives nothing away.
"""

from __future__ import annotations

import datetime as dt
import random
from typing import Any

from slmbench.agents.tasks.families.levels._ir_dm_terms import (
    bonus_ids,
    hour_free,
    names,
    one_of_three,
    placed,
    rep_total,
    salary,
    side,
    top_earner,
    yes_no,
)
from slmbench.agents.tasks.families.levels.ladder import Form, Ladder
from slmbench.agents.tasks.families.terms import (
    as_number,
    date_aliases,
    titled,
    unlike,
)
from slmbench.agents.world import World

__all__ = ["LADDERS"]

_POLICY = {"tool": "web_search", "arguments": {"query": "Brightline expense policy approval"}}


def _products(name: str = "{{product}}") -> dict[str, Any]:
    return {"tool": "query_table", "arguments": {"table": "products", "filters": {"name": name}}}


# -- DM-1, DM-8: the expense policy --------------------------------------------------------

def _forbidden_approvers(world: World) -> list[str]:
    director = titled(world, "Finance Director")
    return [titled(world, "Chief Executive Officer").name,
            *(e.name for e in world.employees if e.manager == director.id),
            titled(world, "Head of Sales").name]


def _expense(world: World, rng: random.Random) -> dict[str, Any]:
    """An amount above the limit on odd seeds, at most the limit on even ones."""
    limit = int(world.slots["expense_limit"])
    above = side(world)
    amount = limit + 5 * rng.randint(1, 60) if above else \
        limit - 5 * rng.randint(1, max(1, limit // 10))
    return {"amount": amount, "limit": limit, "answer": yes_no(above),
            "relation": "above" if above else "within"}


_ITEMS = ("desk chair", "bookshelf", "projector")


def _three_expenses(world: World, rng: random.Random) -> dict[str, Any]:
    """Three purchases, one above the expense limit (its place drawn per seed)."""
    limit = int(world.slots["expense_limit"])
    director = titled(world, "Finance Director")
    dear = rng.choice(_ITEMS)
    cheap = [i for i in _ITEMS if i != dear]
    order = placed(world, rng, dear, cheap)
    price = {dear: limit + 5 * rng.randint(1, 60)}
    for item in cheap:
        price[item] = limit - 5 * rng.randint(1, max(1, limit // 10))
    out = {f"item{i}": item for i, item in enumerate(order)}
    out.update({f"price{i}": price[item] for i, item in enumerate(order)})
    return {**out, "dear": dear, "dear_price": price[dear], "limit": limit,
            "director": names(director), "director_name": director.name,
            "forbidden": _forbidden_approvers(world)}


def _plain(world: World) -> list[Any]:
    """Products whose name has no number (a "27-inch Monitor" would hedge a numeric
    answer)."""
    return [p for p in world.products if not any(c.isdigit() for c in p.name)]


def _unit_price(world: World, rng: random.Random) -> dict[str, Any]:
    product = unlike(world, rng, _plain(world), world.products[3], lambda w, p: p.price)
    return {"product": product.name, "price": as_number(product.price)}


def _one_unit(world: World, rng: random.Random) -> dict[str, Any]:
    """One unit of a product priced above the limit on odd seeds, below it on even ones."""
    limit = int(world.slots["expense_limit"])
    above = side(world)
    product = rng.choice([p for p in world.products
                          if p.price != limit and (p.price > limit) == above])
    return {"product": product.name, "price": as_number(product.price), "limit": limit,
            "price_shown": f'"price": {product.price}', "answer": yes_no(above),
            "relation": "above" if above else "within"}


# -- DM-2, DM-5: stock ---------------------------------------------------------------------

def _in_stock(world: World, rng: random.Random) -> dict[str, Any]:
    """A product in stock on odd seeds; the one out of stock on even ones."""
    yes = side(world)
    product = rng.choice([p for p in world.products if (p.stock > 0) == yes])
    return {"product": product.name, "stock": product.stock, "answer": yes_no(yes),
            "stock_shown": f'"stock": {product.stock}'}


def _two_lines(world: World, rng: random.Random) -> dict[str, Any]:
    """An order of two products in stock: both lines fit on odd seeds; on even seeds one of
    them (drawn) asks for more than there is."""
    fits = side(world)
    a, b = rng.sample([p for p in world.products if p.stock > 0], 2)
    short = rng.choice([a, b]) if not fits else None
    qty = {p.id: p.stock + rng.randint(1, 40) if p is short else rng.randint(1, p.stock)
           for p in (a, b)}
    return {"pa": a.name, "pb": b.name, "qa": qty[a.id], "qb": qty[b.id],
            "stock_a": a.stock, "stock_b": b.stock, "answer": yes_no(fits),
            "shown": [f'"stock": {a.stock}', f'"stock": {b.stock}']}


def _stock_of(world: World, rng: random.Random) -> dict[str, Any]:
    product = unlike(world, rng, [p for p in _plain(world) if p.stock > 0],
                     world.products[6], lambda w, p: p.stock)
    return {"product": product.name, "stock": product.stock}


def _sellers_reorder(world: World, rng: random.Random) -> dict[str, Any]:
    """A rep who sold three or more products still in stock, the one with the fewest units
    unique (the product out of stock left out: it would be the answer wherever it sold). Not
    "Cloud Backup (1 year)" as the answer (a choice has no aliases), nor two products only,
    unless a world has no other."""
    options: dict[tuple[bool, bool], list[Any]] = {}
    for e in world.employees:
        ids = {s.product_id for s in world.sales if s.employee_id == e.id}
        sold = sorted((p for p in world.products if p.id in ids and p.stock > 0),
                      key=lambda p: p.stock)
        if len(sold) >= 2 and sold[0].stock != sold[1].stock:
            options.setdefault((len(sold) >= 3, "(" not in sold[0].name), []).append((e, sold))
    rep, sold = rng.choice(options.get((True, True)) or options.get((False, True))
                           or [o for v in options.values() for o in v])
    return {"rep": rep.name, "rep_id": rep.id, "answer": sold[0].name,
            "options": [p.name for p in sold], "stock": sold[0].stock,
            "stocks": [f'"stock": {p.stock}' for p in sold]}


# -- DM-3: the vendor contract -------------------------------------------------------------

def _renewal(world: World, rng: random.Random) -> dict[str, Any]:
    """A date the renewal falls after on odd seeds, before on even ones."""
    renewal = dt.date.fromisoformat(str(world.slots["vendor_renewal"]))
    after = side(world)
    day = renewal + dt.timedelta(days=rng.randint(3, 60) * (-1 if after else 1))
    return {"renewal": date_aliases(renewal), "day": f"{day.day} {day:%B} {day.year}",
            "answer": "after" if after else "before"}


def _check(start: str, end: str, who: str = "{{colleague}}") -> dict[str, Any]:
    return {"tool": "calendar", "arguments": {"action": "check_availability", "date": "{{date}}",
                                              "start": start, "end": end, "attendees": [who]}}


def _sales_of(rep: str) -> dict[str, Any]:
    return {"tool": "query_table", "arguments": {"table": "sales", "filters": {"employee_id": rep},
                                                 "aggregate": "sum", "aggregate_column": "amount"}}


def _employee(name: str) -> dict[str, Any]:
    return {"tool": "query_table", "arguments": {"table": "employees", "filters": {"name": name}}}


_YES_NO = ["yes", "no"]


LADDERS: dict[str, Ladder] = {
    "DM-1": Ladder(base=1, why_base="one search, the approver read from the policy", forms={
        2: Form(what="one search and a comparison: is the amount above the policy's limit",
                binder=_expense, template={
            "instruction": "I want to expense ${{amount:,}} for conference travel. Does that "
                           "need approval under our expense policy? Answer yes or no.",
            "scorer": {"kind": "choice", "answer": "{{answer}}", "options": _YES_NO},
            "evidence": ["{{limit}}"],
            "reference": {
                "actions": [_POLICY],
                "answer": "{{answer}}: ${{amount:,}} is {{relation}} the ${{limit:,}} limit."}}),
        3: Form(what="one search, three amounts against the limit, and the approver of the "
                     "one above it", binder=_three_expenses, template={
            "instruction": "I want to expense three purchases: a {{item0}} for "
                           "${{price0:,}}, a {{item1}} for ${{price1:,}} and a {{item2}} for "
                           "${{price2:,}}. Which one needs approval under our expense policy, "
                           "and who has to approve it? Give their full name.",
            "scorer": {"kind": "all", "scorers": [
                {"kind": "choice", "answer": "{{dear}}",
                 "options": ["{{item0}}", "{{item1}}", "{{item2}}"]},
                {"kind": "entities", "required": ["{{director}}"],
                 "forbidden": "{{forbidden}}"}]},
            "evidence": ["{{limit}}"],
            "reference": {
                "actions": [_POLICY],
                "answer": "The {{dear}} (${{dear_price:,}}) is above the ${{limit:,}} limit; "
                          "{{director_name}} has to approve it."}}),
    }),
    "DM-2": Ladder(base=2, why_base="one query, and the order's quantity against the stock",
                   forms={
        1: Form(what="one query, in stock or not read from its row", binder=_in_stock,
                template={
            "instruction": "Do we have any {{product}} units in stock right now? Answer yes "
                           "or no.",
            "scorer": {"kind": "choice", "answer": "{{answer}}", "options": _YES_NO},
            "evidence": ["{{product}}", "{{stock_shown}}"],
            "reference": {"actions": [_products()],
                          "answer": "{{answer}}: {{stock}} {{product}} units are in stock."}}),
        3: Form(what="an order of two products: two rows, each line against its stock",
                binder=_two_lines, template={
            "instruction": "A customer wants {{qa}} units of the {{pa}} and {{qb}} units of "
                           "the {{pb}} shipped this week. Can we fill the whole order from "
                           "current stock? Answer yes or no.",
            "scorer": {"kind": "choice", "answer": "{{answer}}", "options": _YES_NO},
            "evidence": "{{shown}}",
            "reference": {
                "actions": [_products("{{pa}}"), _products("{{pb}}")],
                "answer": "{{answer}}: {{stock_a}} {{pa}} and {{stock_b}} {{pb}} units are in "
                          "stock."}}),
    }),
    "DM-3": Ladder(base=3, why_base="a search and an inbox search and read: two dates from "
                                    "two tools compared", forms={
        1: Form(what="one search, the renewal date the decision rests on read from it",
                binder=_renewal, template={
            "instruction": "On what date does our {{vendor}} contract renew?",
            "tools": ["web_search"],
            "scorer": {"kind": "entities", "required": ["{{renewal}}"]},
            "evidence": [],
            "reference": {"actions": [{"tool": "web_search", "arguments": {
                              "query": "{{vendor}} contract renewal"}}],
                          "answer": "The {{vendor}} contract renews on {{vendor_renewal}}."}}),
        2: Form(what="one search and a comparison of its date with a given one",
                binder=_renewal, template={
            "instruction": "Does our {{vendor}} contract renew before or after {{day}}? "
                           "Answer \"before\" or \"after\".",
            "tools": ["web_search"],
            "scorer": {"kind": "choice", "answer": "{{answer}}", "options": ["before", "after"]},
            "evidence": ["{{vendor_renewal}}"],
            "reference": {"actions": [{"tool": "web_search", "arguments": {
                              "query": "{{vendor}} contract renewal"}}],
                          "answer": "{{answer}}: it renews on {{vendor_renewal}}."}}),
    }),
    "DM-4": Ladder(base=2, why_base="two rows, and their salaries compared", forms={
        1: Form(what="one row, the salary the comparison rests on read from it",
                binder=salary, template={
            "instruction": "What is {{name}}'s yearly salary, in US dollars?",
            "scorer": {"kind": "numeric", "value": "{{salary}}", "unit": "USD"},
            "reference": {"actions": [_employee("{{name}}")],
                          "answer": "{{name}} earns ${{salary:,}} a year."}}),
        3: Form(what="three rows, the highest of three salaries", binder=top_earner,
                template={
            "instruction": "Of {{p0}}, {{p1}} and {{p2}}, who earns the highest salary? Give "
                           "the full name.",
            "scorer": {"kind": "choice", "answer": "{{answer}}",
                       "options": ["{{p0}}", "{{p1}}", "{{p2}}"]},
            "evidence": "{{salaries}}",
            "reference": {
                "actions": [_employee("{{p0}}"), _employee("{{p1}}"), _employee("{{p2}}")],
                "answer": "{{answer}} earns the most, ${{top_salary:,}} a year."}}),
    }),
    "DM-5": Ladder(base=2, why_base="one query of every product's stock, the lowest of three",
                   forms={
        1: Form(what="one row, the stock the reorder rests on read from it", binder=_stock_of,
                template={
            "instruction": "How many {{product}} units do we have in stock?",
            "scorer": {"kind": "numeric", "value": "{{stock}}"},
            "reference": {"actions": [_products()],
                          "answer": "We have {{stock}} {{product}} units in stock."}}),
        3: Form(what="a rep's row, their sales, then the products' stock: the lowest among "
                     "the products they sold", binder=_sellers_reorder, template={
            "instruction": "We reorder first whichever product has the fewest units in stock. "
                           "Of the products that {{rep}} sold this quarter and that we still "
                           "have in stock, which should we reorder first?",
            "scorer": {"kind": "choice", "answer": "{{answer}}", "options": "{{options}}"},
            "evidence": "{{stocks}}",
            "reference": {
                "actions": [_employee("{{rep}}"),
                            {"tool": "query_table", "arguments": {
                                "table": "sales", "filters": {"employee_id": "{{rep_id}}"},
                                "columns": ["product_id"]}},
                            {"tool": "query_table", "arguments": {
                                "table": "products", "columns": ["id", "name", "stock"]}}],
                "answer": "Reorder the {{answer}} first; it has {{stock}} units in stock."}}),
    }),
    "DM-6": Ladder(base=3, why_base="two names to ids, two sums, and the sums compared",
                   forms={
        1: Form(what="one aggregate query, the total the bonus rests on read from it",
                binder=rep_total, template={
            "instruction": "What is the total sales amount recorded for employee {{rep_id}} "
                           "in the sales table, in US dollars?",
            "scorer": {"kind": "numeric", "value": "{{total}}", "tolerance": 0.5,
                       "unit": "USD"},
            "reference": {"actions": [_sales_of("{{rep_id}}")],
                          "answer": "Employee {{rep_id}}'s sales total ${{total:,}}."}}),
        2: Form(what="two aggregate queries by id and the sums compared", binder=bonus_ids,
                template={
            "instruction": "This quarter's sales bonus goes to whichever of employees "
                           "{{first}} and {{second}} has the larger total sales amount in the "
                           "sales table. Which of them gets it? Give the employee id.",
            "scorer": {"kind": "choice", "answer": "{{winner}}",
                       "options": ["{{first}}", "{{second}}"]},
            "evidence": "{{totals}}",
            "reference": {"actions": [_sales_of("{{first}}"), _sales_of("{{second}}")],
                          "answer": "{{winner}} gets the bonus, with ${{win_total:,}} in sales "
                                    "against ${{lose_total:,}}."}}),
    }),
    "DM-7": Ladder(base=2, why_base="two availability checks, and the free one chosen",
                   forms={
        1: Form(what="one availability check, free or not read from it", binder=hour_free,
                template={
            "instruction": "Are {{colleague}} and I both free on {{day}} from {{start}} to "
                           "{{end}}? Answer yes or no.",
            "scorer": {"kind": "choice", "answer": "{{answer}}", "options": _YES_NO},
            "evidence": ["\"all_free\": "],
            "reference": {"actions": [_check("{{start}}", "{{end}}")],
                          "answer": "{{answer}}: the check of {{start}} to {{end}} on "
                                    "{{date}} with {{colleague}} says so."}}),
        3: Form(what="three availability checks, the one free start of three",
                binder=one_of_three, template={
            "instruction": "I want to meet {{colleague}} for an hour on {{day}}, starting at "
                           "{{t0}}, {{t1}} or {{t2}}. Which start time are we both free for?",
            "scorer": {"kind": "choice", "answer": "{{answer}}",
                       "options": ["{{t0}}", "{{t1}}", "{{t2}}"]},
            "evidence": ["\"start\": \"{{answer}}\""],
            "reference": {"actions": [_check("{{t0}}", "{{e0}}"), _check("{{t1}}", "{{e1}}"),
                                      _check("{{t2}}", "{{e2}}")],
                          "answer": "We are both free at {{answer}}."}}),
    }),
    "DM-8": Ladder(base=3, why_base="a search and a query, a product of quantity and price "
                                    "against the limit", forms={
        1: Form(what="one query, the unit price the decision rests on read from it",
                binder=_unit_price, template={
            "instruction": "What does one {{product}} cost in our products table, in US "
                           "dollars?",
            "scorer": {"kind": "numeric", "value": "{{price}}", "unit": "USD"},
            "evidence": [],
            "reference": {"actions": [_products()],
                          "answer": "One {{product}} costs ${{price:,}}."}}),
        2: Form(what="a search and a query: one unit's price against the limit",
                binder=_one_unit, template={
            "instruction": "I want to buy one {{product}} at the price in our products table "
                           "and expense it. Under our expense policy, does this purchase need "
                           "the Finance Director's approval? Answer yes or no.",
            "scorer": {"kind": "choice", "answer": "{{answer}}", "options": _YES_NO},
            "evidence": ["{{limit}}", "{{price_shown}}"],
            "reference": {"actions": [_POLICY, _products()],
                          "answer": "{{answer}}: ${{price:,}} is {{relation}} the ${{limit:,}} "
                                    "limit."}}),
    }),
}
