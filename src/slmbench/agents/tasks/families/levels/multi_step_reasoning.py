"""multi step reasoning's ladders (``docs/tasks.md``, "Levels")."""

from __future__ import annotations

import datetime as dt
import random
from typing import Any

from slmbench.agents.tasks.families.levels._da_mr_terms import fresh, sales_of, total, usd
from slmbench.agents.tasks.families.levels.ladder import Form, Ladder
from slmbench.agents.tasks.families.terms import (
    as_number,
    date_aliases,
    full_name_aliases,
    my_events,
    product_named,
    sales_figures,
    sales_totals,
    titled,
)
from slmbench.agents.world import World

__all__ = ["LADDERS"]


def _table(table: str, **arguments: Any) -> dict[str, Any]:
    return {"tool": "query_table", "arguments": {"table": table, **arguments}}


# -- MR-1: the CEO's figure, e-mailed ---------------------------------------------------------

def _ceo_figure(world: World, rng: random.Random) -> dict[str, Any]:
    return {**sales_figures(world), "ceo_name": titled(world, "Chief Executive Officer").name}


_SEND_TOTAL = {"tool": "email", "arguments": {
    "action": "send", "to": ["{{ceo_address}}"], "subject": "Q1 sales total",
    "body": "Hi {{ceo_first}}, total Q1 sales are ${{total:,}}. Best, {{user_first}}"}}
_TOTAL_SENT = {"kind": "state", "checks": [
    {"check": "email_sent", "to": "{{ceo_id}}", "body_contains": ["{{total_digits}}"]}]}
_SALES_SUM = _table("sales", aggregate="sum", aggregate_column="amount")


# -- MR-2: stock after an order ----------------------------------------------------------------

def _order_stock(world: World, rng: random.Random) -> dict[str, Any]:
    product = product_named(world, str(world.slots["order_product"]))
    qty = int(world.slots["order_qty"])
    return {"product": product.name, "stock": product.stock, "qty": qty,
            "left": product.stock - qty}


_PRODUCT_ROW = _table("products", filters={"name": "{{product}}"})


# -- MR-4: sales_q1.csv by product -------------------------------------------------------------

def _names(world: World) -> dict[str, str]:
    return {p.id: p.name for p in world.products}


def _product_sum(world: World, name: str) -> object:
    pid = next((p.id for p in world.products if p.name == name), None)
    sold = sales_of(world, product=pid) if pid else []
    return total(sold) if sold else None


def _csv_product(world: World, rng: random.Random) -> dict[str, Any]:
    sold = sorted({_names(world)[s.product_id] for s in world.sales})
    name = fresh(world, rng, sold, lambda w: "27-inch Monitor", _product_sum)
    return {"product": name, "sum": _product_sum(world, name)}


def _csv_top(world: World, rng: random.Random) -> dict[str, Any]:
    ranked = sales_totals(world, lambda s: _names(world)[s.product_id])
    return {"product": ranked[0][0], "sum": as_number(ranked[0][1]),
            "forbidden": [n for n, _ in ranked[1:]]}


_CSV = {"operation": "aggregate", "file": "sales_q1.csv", "column": "amount", "function": "sum"}


# -- MR-5: who holds a title; a manager and their reports --------------------------------------

def _title_holder(world: World, rng: random.Random) -> dict[str, Any]:
    titles = [e.title for e in world.employees]
    unique = sorted({t for t in titles if titles.count(t) == 1})
    title = "VP Engineering" if world.seed == 0 else rng.choice(unique)
    who = titled(world, title)
    return {"title": title, "name": who.name, "aliases": full_name_aliases(who)}


def _manager_reports(world: World, rng: random.Random) -> dict[str, Any]:
    staff = [e for e in world.employees if e.manager is not None]
    who = world.person("E12") if world.seed == 0 else rng.choice(staff)
    assert who is not None and who.manager is not None
    boss = world.person(who.manager)
    assert boss is not None
    skip = {who.id, boss.id, boss.manager}
    others = [e.name for e in world.employees if e.id not in skip]
    return {"name": who.name, "manager": boss.name, "manager_id": boss.id,
            "reports": sum(e.manager == boss.id for e in world.employees),
            "forbidden": rng.sample(others, 2)}


# -- MR-6: a meeting's attendees; who started first --------------------------------------------

def _meeting_attendees(world: World, rng: random.Random) -> dict[str, Any]:
    mine = my_events(world)
    titles = [e.title for e in mine]
    meetings = [e for e in mine if titles.count(e.title) == 1 and len(e.attendees) >= 3]
    event = next(e for e in meetings if e.title == "Team social") if world.seed == 0 \
        else rng.choice(meetings)
    people = [e for e in world.employees if e.email in event.attendees and e.email != world.user]
    absent = [e.name for e in world.employees if e.email not in event.attendees]
    return {"title": event.title, "required": [full_name_aliases(e) for e in people],
            "names": ", ".join(e.name for e in people), "forbidden": rng.sample(absent, 2)}


def _earliest_of_three(world: World, rng: random.Random) -> dict[str, Any]:
    colleagues = [e for e in world.employees if e.email != world.user]
    while True:
        three = rng.sample(colleagues, 3)
        if len({e.start_date for e in three}) == 3:
            break
    first = min(three, key=lambda e: e.start_date)
    return {"a": three[0].name, "b": three[1].name, "c": three[2].name, "name": first.name,
            "start": first.start_date.isoformat(),
            "forbidden": [e.name for e in three if e is not first]}


# -- MR-7: the campaign e-mail -----------------------------------------------------------------

def _campaign(world: World, rng: random.Random) -> dict[str, Any]:
    product = product_named(world, str(world.slots["campaign_product"]))
    mail = next(m for m in world.inbox if m.subject == f"{product.name} campaign")
    launch = dt.date.fromisoformat(str(world.slots["campaign_launch"]))
    return {"email": mail.id, "product": product.name, "stock": product.stock,
            "price": as_number(product.price),
            "launch": f"{launch.day} {launch:%B}", "launch_aliases": date_aliases(launch),
            "lead_first": titled(world, "Marketing Lead").name.split()[0]}


# -- MR-8: a product's largest sale ------------------------------------------------------------

def _largest(world: World, pid: str) -> object:
    sold = sales_of(world, product=pid)
    return as_number(max(s.amount for s in sold)) if sold else None


def _largest_sale(world: World, rng: random.Random) -> dict[str, Any]:
    sold = sorted({s.product_id for s in world.sales})
    pid = fresh(world, rng, sold, lambda w: "P05", _largest)
    return {"product_id": pid, "amount": _largest(world, pid)}


def _largest_seller(world: World, rng: random.Random) -> dict[str, Any]:
    def top(w: World, pid: str) -> str | None:
        sold = sorted(sales_of(w, product=pid), key=lambda s: s.amount, reverse=True)
        if len(sold) < 2 or sold[0].amount == sold[1].amount:
            return None
        who = w.person(sold[0].employee_id)
        return None if who is None else who.name

    def options(w: World) -> list[str]:
        return [p.id for p in w.products if top(w, p.id)]

    pid = fresh(world, rng, options(world), lambda w: options(w)[-1], top)
    name = top(world, pid)
    rep = world.person(str(name))
    assert rep is not None
    others = {world.person(s.employee_id).name for s in sales_of(world, product=pid)}
    return {"product_id": pid, "rep": rep.name, "rep_id": rep.id,
            "amount": _largest(world, pid), "forbidden": sorted(others - {rep.name})}


LADDERS: dict[str, Ladder] = {
    "MR-1": Ladder(base=3, why_base="four calls: search and read the request, sum the sales, "
                                    "send the e-mail", forms={
        1: Form(what="state: one e-mail send, recipient and figure given", binder=_ceo_figure,
                template={
            "instruction": "E-mail {{ceo_name}} with the subject \"Q1 sales total\" and tell "
                           "them that total Q1 sales were ${{total:,}}.",
            "tools": ["email"],
            "scorer": _TOTAL_SENT,
            "reference": {"actions": [_SEND_TOTAL],
                          "answer": "I e-mailed {{ceo_first}} the Q1 sales total, "
                                    "${{total:,}}."}}),
        2: Form(what="state: sum the sales table, then e-mail the figure to a named colleague",
                binder=_ceo_figure, template={
            "instruction": "Work out the total amount of all sales in the sales table and e-mail "
                           "it to {{ceo_name}}.",
            "tools": ["email", "query_table"],
            "scorer": _TOTAL_SENT,
            "reference": {"actions": [_SALES_SUM, _SEND_TOTAL],
                          "answer": "I e-mailed {{ceo_first}} the sales total, ${{total:,}}."}}),
    }),
    "MR-2": Ladder(base=3, why_base="three calls: search and read the order, look up the stock; "
                                    "then a subtraction", forms={
        1: Form(what="a product's stock, read from one lookup", binder=_order_stock, template={
            "instruction": "How many {{product}} units do we have in stock right now?",
            "tools": ["query_table"],
            "scorer": {"kind": "numeric", "value": "{{stock}}"},
            "reference": {"actions": [_PRODUCT_ROW],
                          "answer": "The {{product}} has {{stock}} units in stock."}}),
        2: Form(what="a product's stock, less an order's quantity given", binder=_order_stock,
                template={
            "instruction": "If we ship {{qty}} {{product}} units from current stock, how many "
                           "will we have left?",
            "tools": ["query_table"],
            "scorer": {"kind": "numeric", "value": "{{left}}"},
            "evidence": ["{{stock}}"],
            "reference": {"actions": [_PRODUCT_ROW],
                          "answer": "{{stock}} in stock minus {{qty}} shipped leaves {{left}} "
                                    "units."}}),
    }),
    "MR-3": Ladder(base=3, why_base="two calls (the target, the sales total) and a subtraction",
                   forms={
        1: Form(what="the sales target, read from one search", binder=_ceo_figure, template={
            "instruction": "What is Brightline's sales target for the first quarter of 2025, in "
                           "US dollars?",
            "tools": ["web_search", "fact_lookup"],
            "scorer": usd("{{target}}"),
            "reference": {"actions": [{"tool": "web_search",
                                       "arguments": {"query": "Q1 2025 sales target"}}],
                          "answer": "The Q1 2025 sales target is ${{target:,}}."}}),
        2: Form(what="the sales total, less a target given", binder=_ceo_figure, template={
            "instruction": "Our Q1 2025 sales target was ${{target:,}}. By how many US dollars "
                           "did our total sales in the sales table exceed it?",
            "tools": ["query_table"],
            "scorer": usd("{{excess}}"),
            "evidence": ["{{total}}"],
            "reference": {"actions": [_SALES_SUM],
                          "answer": "Sales of ${{total:,}} beat the ${{target:,}} target by "
                                    "${{excess:,}}."}}),
    }),
    "MR-4": Ladder(base=3, why_base="a grouped sum, the top product picked among the others, "
                                    "then its stock looked up", forms={
        1: Form(what="one product's total in sales_q1.csv, read from one sum",
                binder=_csv_product, template={
            "instruction": "In sales_q1.csv, what is the total sales amount of the {{product}}, "
                           "in US dollars?",
            "tools": ["csv_processor"],
            "scorer": usd("{{sum}}"),
            "reference": {"actions": [{"tool": "csv_processor", "arguments": {
                **_CSV, "filters": {"product": "{{product}}"}}}],
                "answer": "Sales of the {{product}} total ${{sum:,}}."}}),
        2: Form(what="one grouped sum, the top product picked among the others",
                binder=_csv_top, template={
            "instruction": "Which product brought in the most sales revenue in sales_q1.csv, and "
                           "how much, in US dollars?",
            "tools": ["csv_processor"],
            "scorer": {"kind": "all", "scorers": [
                {"kind": "entities", "required": ["{{product}}"], "forbidden": "{{forbidden}}"},
                usd("{{sum}}")]},
            "reference": {"actions": [{"tool": "csv_processor",
                                       "arguments": {**_CSV, "group_by": "product"}}],
                          "answer": "The {{product}} earned the most, ${{sum:,}}."}}),
    }),
    "MR-5": Ladder(base=2, why_base="two lookups: the colleague's row, then their manager's",
                   forms={
        1: Form(what="who holds a title, read from one lookup", binder=_title_holder, template={
            "instruction": "Who is our {{title}}? Give their full name.",
            "scorer": {"kind": "entities", "required": ["{{aliases}}"]},
            "reference": {"actions": [_table("employees", filters={"title": "{{title}}"})],
                          "answer": "Our {{title}} is {{name}}."}}),
        3: Form(what="the colleague's row, the manager's, then the manager's reports counted",
                binder=_manager_reports, template={
            "instruction": "Who is {{name}}'s manager, and how many people report directly to "
                           "that manager?",
            "scorer": {"kind": "all", "scorers": [
                {"kind": "entities", "required": ["{{manager}}"], "forbidden": "{{forbidden}}"},
                {"kind": "numeric", "value": "{{reports}}"}]},
            "reference": {"actions": [
                _table("employees", filters={"name": "{{name}}"}),
                _table("employees", filters={"id": "{{manager_id}}"}),
                _table("employees", filters={"manager": "{{manager_id}}"}, aggregate="count")],
                "answer": "{{name}}'s manager is {{manager}}; the number of people who report "
                          "directly to {{manager}} is {{reports}}."}}),
    }),
    "MR-6": Ladder(base=3, why_base="the calendar, then every attendee's start date, the "
                                    "earliest picked among the others", forms={
        1: Form(what="a meeting's attendees, read from one calendar list",
                binder=_meeting_attendees, template={
            "instruction": "Apart from me, who attends my {{title}} meeting this week? Give "
                           "their full names.",
            "tools": ["calendar"],
            "scorer": {"kind": "entities", "required": "{{required}}",
                       "forbidden": "{{forbidden}}"},
            "reference": {"actions": [{"tool": "calendar", "arguments": {"action": "list"}}],
                          "answer": "The {{title}} attendees besides you: {{names}}."}}),
        2: Form(what="three named colleagues' start dates, the earliest picked",
                binder=_earliest_of_three, template={
            "instruction": "Of {{a}}, {{b}} and {{c}}, who has worked at Brightline Labs the "
                           "longest? Give their full name.",
            "tools": ["query_table"],
            "scorer": {"kind": "entities", "required": ["{{name}}"],
                       "forbidden": "{{forbidden}}"},
            "reference": {"actions": [_table("employees", columns=["name", "start_date"],
                                             order_by="start_date")],
                          "answer": "{{name}}, who started on {{start}}, has been there the "
                                    "longest."}}),
    }),
    "MR-7": Ladder(base=3, why_base="four calls: search and read the e-mail, the product's id, "
                                    "its sales summed", forms={
        1: Form(what="the launch date, read from one e-mail whose id is given",
                binder=_campaign, template={
            "instruction": "When does the campaign in e-mail {{email}} of my inbox launch?",
            "tools": ["email"],
            "scorer": {"kind": "entities", "required": ["{{launch_aliases}}"]},
            "reference": {"actions": [{"tool": "email",
                                       "arguments": {"action": "read", "email_id": "{{email}}"}}],
                          "answer": "The campaign launches on {{launch}}."}}),
        2: Form(what="the campaign's product from an inbox search, then its stock and price",
                binder=_campaign, template={
            "instruction": "{{lead_first}} e-mailed me about a campaign for one of our products. "
                           "How many units of that product do we have in stock, and what is its "
                           "unit price in US dollars?",
            "scorer": {"kind": "all", "scorers": [
                {"kind": "entities", "required": ["{{product}}"]},
                {"kind": "numeric", "value": "{{stock}}"}, usd("{{price}}")]},
            "reference": {"actions": [
                {"tool": "email", "arguments": {"action": "search", "query": "campaign"}},
                _PRODUCT_ROW],
                "answer": "{{lead_first}}'s e-mail is about the {{product}}; we have {{stock}} "
                          "units in stock, at ${{price:,}} each."}}),
    }),
    "MR-8": Ladder(base=3, why_base="three lookups: the product's id, its largest sale, the "
                                    "seller's row", forms={
        1: Form(what="a product's largest sale, its id given: one max", binder=_largest_sale,
                template={
            "instruction": "What is the amount of the largest single sale of product "
                           "{{product_id}} in the sales table, in US dollars?",
            "scorer": usd("{{amount}}"),
            "reference": {"actions": [_table("sales", filters={"product_id": "{{product_id}}"},
                                             aggregate="max", aggregate_column="amount")],
                          "answer": "The largest sale of product {{product_id}} is "
                                    "${{amount:,}}."}}),
        2: Form(what="a product's largest sale, its id given, then the seller's row",
                binder=_largest_seller, template={
            "instruction": "Who made the largest single sale of product {{product_id}} in the "
                           "sales table? Give their full name.",
            "scorer": {"kind": "entities", "required": ["{{rep}}"], "forbidden": "{{forbidden}}"},
            "reference": {"actions": [
                _table("sales", filters={"product_id": "{{product_id}}"}, order_by="amount",
                       descending=True, limit=1),
                _table("employees", filters={"id": "{{rep_id}}"})],
                "answer": "{{rep}} made the largest sale of product {{product_id}} "
                          "(${{amount:,}})."}}),
    }),
}
