"""communication's ladders (``docs/tasks.md``, "Levels")."""

from __future__ import annotations

import datetime as dt
import random
import re
from typing import Any

from slmbench.agents.tasks.families.levels._sc_cm_terms import (
    F,
    choose,
    colleagues,
    mailed,
    meeting_values,
    notify,
    person_values,
    posted,
    query,
    roles,
    send,
    unique_events,
)
from slmbench.agents.tasks.families.levels.ladder import Ladder
from slmbench.agents.tasks.families.terms import (
    and_list,
    as_number,
    clock_aliases,
    date_aliases,
    product_named,
)
from slmbench.agents.world import Employee, Product, World

__all__ = ["LADDERS"]


def _in_stock(world: World) -> list[Product]:
    return [p for p in world.products if p.stock > 0]


def _named_in(number: int, name: str) -> bool:
    """Whether ``number`` is written in a product's name (a post naming the product would
    show it without the count)."""
    return re.search(rf"(?<!\d){number}(?!\d)", name) is not None


def _product_values(p: Product) -> dict[str, Any]:
    return {"product": p.name, "product_id": p.id, "stock": str(p.stock)}


# -- CM-1, CM-5: stock by e-mail or Slack ----------------------------------------------------

def _stock_given(world: World, rng: random.Random) -> dict[str, Any]:
    who = rng.choice(colleagues(world))
    product = choose(world, rng, _in_stock, lambda w, p: (p.name, p.stock))
    return {**person_values(world, who), **_product_values(product)}


def _stock_role(world: World, rng: random.Random) -> dict[str, Any]:
    role = choose(world, rng, lambda w: sorted(roles(w)), lambda w, r: roles(w)[r].name)
    product = rng.choice(_in_stock(world))
    return {"role": role, **person_values(world, roles(world)[role]), **_product_values(product)}


_CHANNELS = ("#sales", "#ops", "#warehouse", "#general", "#inventory", "#support")


def _post_given(world: World, rng: random.Random) -> dict[str, Any]:
    product = choose(world, rng, _in_stock, lambda w, p: (p.name, p.stock))
    channel = _CHANNELS[0] if world.seed == 0 else rng.choice(_CHANNELS[1:])
    return {"channel": channel, **_product_values(product)}


def _order_stock(world: World, rng: random.Random) -> dict[str, Any]:
    product = product_named(world, str(world.slots["order_product"]))
    order = next(m for m in world.inbox if m.subject.endswith(" order"))
    return {"customer": world.slots["customer"], "email": order.id, **_product_values(product)}


# -- CM-2: a stock post to #ops --------------------------------------------------------------

def _fewest(world: World, rng: random.Random) -> dict[str, Any]:
    def lowest(w: World, category: str) -> Product:
        return min((p for p in w.products if p.category == category), key=lambda p: p.stock)

    def options(w: World) -> list[str]:
        out = []
        for c in sorted({p.category for p in w.products}):
            stocks = sorted(p.stock for p in w.products if p.category == c)
            low = lowest(w, c)
            if len(stocks) > 1 and stocks[0] != stocks[1] and not _named_in(low.stock, low.name):
                out.append(c)
        return out

    category = choose(world, rng, options, lambda w, c: (lowest(w, c).name, lowest(w, c).stock))
    return {"category": category, **_product_values(lowest(world, category))}


def _oos_revenue(world: World, rng: random.Random) -> dict[str, Any]:
    product = next(p for p in world.products if p.stock == 0)
    revenue = as_number(round(sum(s.amount for s in world.sales
                                  if s.product_id == product.id), 2))
    return {**_product_values(product), "revenue": str(revenue)}


# -- CM-3: who wrote to me -------------------------------------------------------------------

def _from_colleagues(world: World, managed: bool = False) -> list[tuple[str, Employee]]:
    out = []
    for m in world.inbox:
        e = world.person(m.sender)
        if e is not None and e.email != world.user and (not managed or e.manager):
            out.append((m.subject, e))
    return out


def _sender(world: World, rng: random.Random) -> dict[str, Any]:
    subject, who = choose(world, rng, _from_colleagues, lambda w, o: o[1].name)
    others = [e.name for _, e in _from_colleagues(world) if e != who]
    return {"subject": subject, **person_values(world, who),
            "forbidden": rng.sample(others, min(2, len(others)))}


def _sender_manager(world: World, rng: random.Random) -> dict[str, Any]:
    subject, who = choose(world, rng, lambda w: _from_colleagues(w, managed=True),
                          lambda w, o: o[1].name)
    boss = world.person(str(who.manager))
    assert boss is not None
    others = [e.name for e in colleagues(world) if e not in (who, boss)]
    return {"subject": subject, **person_values(world, who), "job": who.title,
            "manager_id": boss.id, **person_values(world, boss, "boss_"),
            "forbidden": rng.sample(others, min(2, len(others)))}


# -- CM-4, CM-7: a meeting's time by Teams or e-mail -----------------------------------------

def _meeting_and_person(world: World, rng: random.Random, attendee: bool) -> dict[str, Any]:
    def options(w: World) -> list[tuple[Any, Employee]]:
        return [(ev, p) for ev in unique_events(w) for p in colleagues(w)
                if not attendee or p.email in ev.attendees]

    ev, who = choose(world, rng, options, lambda w, o: (o[0].title, o[1].name))
    return {**meeting_values(world, ev), **person_values(world, who)}


def _teams_given(world: World, rng: random.Random) -> dict[str, Any]:
    return _meeting_and_person(world, rng, attendee=False)


def _with_attendee(world: World, rng: random.Random) -> dict[str, Any]:
    return _meeting_and_person(world, rng, attendee=True)


def _teams_role(world: World, rng: random.Random) -> dict[str, Any]:
    ev = rng.choice(unique_events(world))
    role = choose(world, rng, lambda w: sorted(roles(w)), lambda w, r: roles(w)[r].name)
    return {"role": role, **meeting_values(world, ev), **person_values(world, roles(world)[role])}


# -- CM-8: an office-closure e-mail ----------------------------------------------------------

_CLOSING = ("14:00", "14:30", "15:30", "16:00", "16:30", "13:30")


def _closure_checks(people: list[Employee], time: str) -> list[dict[str, Any]]:
    return [{"check": "email_sent", "to": p.email.split("@")[0],
             "subject_contains": ["office closure"], "body_contains": [clock_aliases(time)]}
            for p in people]


def _closure_given(world: World, rng: random.Random) -> dict[str, Any]:
    people = rng.sample(colleagues(world), 2)
    time = _CLOSING[0] if world.seed == 0 else rng.choice(_CLOSING[1:])
    return {"names": and_list([p.name for p in people]), "time": time,
            "addresses": [p.email for p in people], "checks": _closure_checks(people, time)}


def _closure_reports(world: World, rng: random.Random) -> dict[str, Any]:
    def reports(w: World, role: str) -> list[Employee]:
        return [e for e in w.employees if e.manager == roles(w)[role].id]

    def options(w: World) -> list[str]:
        return [r for r in sorted(roles(w)) if 2 <= len(reports(w, r)) <= 6
                and all(e.email != w.user for e in reports(w, r))]

    role = choose(world, rng, options, lambda w, r: tuple(e.name for e in reports(w, r)))
    people = reports(world, role)
    return {"role": role, **person_values(world, roles(world)[role], "boss_"),
            "names": and_list([p.name for p in people]), "time": "15:00",
            "addresses": [p.email for p in people], "checks": _closure_checks(people, "15:00")}


# -- CM-6: the campaign ----------------------------------------------------------------------

def _launch(world: World, rng: random.Random) -> dict[str, Any]:
    launch = dt.date.fromisoformat(str(world.slots["campaign_launch"]))
    mail = next(m for m in world.inbox if m.subject.endswith(" campaign"))
    lead = world.person(mail.sender)
    assert lead is not None
    return {"launch_aliases": date_aliases(launch), "email": mail.id,
            "launch_day": f"{launch:%A} {launch.day} {launch:%B}",
            **person_values(world, lead)}


_ROLE_ROW = query("employees", title="{{role}}")
_STOCK_ROW = query("products", name="{{product}}")
_STOCK_MAIL = mailed("{{id}}", ["{{stock}}"], ["{{product}}"])
_LIST_WEEK = {"tool": "calendar", "arguments": {"action": "list"}}
_WHEN = ["{{title_aliases}}", "{{start_aliases}}", "{{date_words}}"]


LADDERS: dict[str, Ladder] = {
    "CM-1": Ladder(base=2, why_base="two calls: the product's stock read, then the e-mail sent",
                   forms={
        1: F("one e-mail, recipient, subject and figure given", _stock_given, ["email"],
              "E-mail {{name}} with the subject \"{{product}} stock\" and tell {{first}} that "
              "we have {{stock}} {{product}} units in stock.", _STOCK_MAIL,
              [send(["{{address}}"], "{{product}} stock",
                     "Hi {{first}}, we have {{stock}} {{product}} units in stock.")],
              "I e-mailed {{first}} that we have {{stock}} {{product}} units in stock.").form(),
        3: F("a role's holder and a product's stock read, then the e-mail sent", _stock_role,
              ["query_table", "email"],
              "E-mail our {{role}} with the subject \"{{product}} stock\" and tell them how "
              "many {{product}} units we currently have in stock.", _STOCK_MAIL,
              [_ROLE_ROW, _STOCK_ROW,
               send(["{{address}}"], "{{product}} stock",
                     "Hi {{first}}, we have {{stock}} {{product}} units in stock.")],
              "I e-mailed {{name}}, our {{role}}, that we have {{stock}} {{product}} units in "
              "stock.").form(),
    }),
    "CM-2": Ladder(base=1, why_base="one Slack post, its text given in the instruction", forms={
        2: F("a category's products read, the one with the fewest units posted", _fewest,
              ["query_table", "notify"],
              "Post a Slack message to the #ops channel saying which {{category}} product has "
              "the fewest units in stock, and how many it has.",
              posted("slack", "#ops", ["{{product}}", "{{stock}}"]),
              [{"tool": "query_table", "arguments": {
                  "table": "products", "filters": {"category": "{{category}}"},
                  "order_by": "stock"}},
               notify("slack", "#ops", "Of our {{category}} products, the {{product}} has "
                                        "the fewest units in stock: {{stock}}.")],
              "I posted to #ops that the {{product}} has the fewest {{category}} units in stock "
              "({{stock}}).").form(),
        3: F("the product out of stock found, its sales summed, then posted", _oos_revenue,
              ["query_table", "notify"],
              "Post a Slack message to the #ops channel saying which product is out of stock "
              "and how much revenue its sales in the sales table brought in, in US dollars.",
              posted("slack", "#ops", ["{{product}}", "{{revenue}}"]),
              [query("products", stock=0),
               query("sales", product_id="{{product_id}}"),
               notify("slack", "#ops", "Heads-up: the {{product}} is out of stock; its sales "
                                        "brought in {{revenue}} US dollars.")],
              "I posted to #ops that the {{product}} is out of stock and its sales brought in "
              "{{revenue}} US dollars.").form(),
    }),
    "CM-3": Ladder(base=2, why_base="one inbox list, the unread counted and the newest found",
                   forms={
        1: F("one inbox search, the sender read from it", _sender, ["email"],
              "Who sent me the e-mail with the subject \"{{subject}}\"? Give their full name.",
              {"kind": "entities", "required": ["{{aliases}}"], "forbidden": "{{forbidden}}"},
              [{"tool": "email", "arguments": {"action": "search", "query": "{{subject}}"}}],
              "\"{{subject}}\" came from {{name}}.").form(),
        3: F("the sender found, then their row and their manager's", _sender_manager,
              ["email", "query_table"],
              "What is the job title of the person who sent me the e-mail with the subject "
              "\"{{subject}}\", and who is their manager? Give the manager's full name.",
              {"kind": "all", "scorers": [
                  {"kind": "entities", "required": ["{{job}}"]},
                  {"kind": "entities", "required": ["{{boss_aliases}}"],
                   "forbidden": "{{forbidden}}"}]},
              [{"tool": "email", "arguments": {"action": "search", "query": "{{subject}}"}},
               query("employees", email="{{address}}"),
               query("employees", id="{{manager_id}}")],
              "{{name}} sent it; they are our {{job}}, and their manager is "
              "{{boss_name}}.").form(),
    }),
    "CM-4": Ladder(base=2, why_base="two calls: the vendor call's time read, then the Teams "
                                    "notification sent", forms={
        1: F("one Teams notification, recipient and text given", _teams_given, ["notify"],
              "Send {{name}} a Teams notification saying that the {{title}} meeting is on "
              "{{day}} at {{start}}.", posted("teams", "{{handle}}", _WHEN),
              [notify("teams", "{{name}}", "Reminder: the {{title}} meeting is on {{date}} at "
                                            "{{start}}.")],
              "I told {{first}} on Teams that the {{title}} is on {{date}} at {{start}}.").form(),
        3: F("a role's holder looked up, a meeting's time read, then notified", _teams_role,
              ["query_table", "calendar", "notify"],
              "Send our {{role}} a Teams notification with the date and start time of my "
              "\"{{title}}\" meeting this week.", posted("teams", "{{handle}}", _WHEN),
              [_ROLE_ROW, _LIST_WEEK,
               notify("teams", "{{name}}", "Reminder: the {{title}} meeting is on {{date}} at "
                                            "{{start}}.")],
              "I told {{name}}, our {{role}}, on Teams that the {{title}} is on {{date}} at "
              "{{start}}.").form(),
    }),
    "CM-5": Ladder(base=2, why_base="two calls: the product's stock read, then the Slack post",
                   forms={
        1: F("one Slack post, channel and text given", _post_given, ["notify"],
              "Post a Slack message to the {{channel}} channel saying that we have {{stock}} "
              "{{product}} units in stock.",
              posted("slack", "{{channel}}", ["{{product}}", "{{stock}}"]),
              [notify("slack", "{{channel}}", "We have {{stock}} {{product}} units in stock.")],
              "I posted to {{channel}} that we have {{stock}} {{product}} units in "
              "stock.").form(),
        3: F("the order e-mail found and read, the product's stock read, then posted",
              _order_stock, ["email", "query_table", "notify"],
              "Post a Slack message to the #sales channel saying how many units we have in "
              "stock of the product that {{customer}} ordered (their order is in my inbox).",
              posted("slack", "#sales", ["{{product}}", "{{stock}}"]),
              [{"tool": "email", "arguments": {"action": "search",
                                               "query": "{{customer}} order"}},
               {"tool": "email", "arguments": {"action": "read", "email_id": "{{email}}"}},
               _STOCK_ROW,
               notify("slack", "#sales", "We have {{stock}} {{product}} units in stock for "
                                          "the {{customer}} order.")],
              "I posted to #sales that we have {{stock}} {{product}} units in stock.").form(),
    }),
    "CM-6": Ladder(base=3, why_base="three calls: the inbox searched, the campaign e-mail "
                                    "read, then the Slack post", forms={
        1: F("one Slack post, its text given", _launch, ["notify"],
              "Post a Slack message to the #marketing channel saying that the "
              "{{campaign_product}} spring campaign launches on {{launch_day}}.",
              posted("slack", "#marketing", ["{{campaign_product}}", "{{launch_aliases}}"]),
              [notify("slack", "#marketing", "The {{campaign_product}} spring campaign "
                                              "launches on {{launch_day}}.")],
              "I posted to #marketing that the {{campaign_product}} spring campaign launches "
              "on {{launch_day}}.").form(),
        2: F("one inbox search for the campaign e-mail's sender, then the Slack post",
              _launch, ["email", "notify"],
              "Post a Slack message to the #marketing channel saying who e-mailed me about the "
              "{{campaign_product}} spring campaign (their full name).",
              posted("slack", "#marketing", ["{{aliases}}"]),
              [{"tool": "email", "arguments": {"action": "search",
                                               "query": "{{campaign_product}} campaign"}},
               notify("slack", "#marketing", "{{name}} e-mailed about the "
                                              "{{campaign_product}} spring campaign.")],
              "I posted to #marketing that {{name}} e-mailed about the {{campaign_product}} "
              "spring campaign.").form(),
    }),
    "CM-7": Ladder(base=3, why_base="the week's calendar searched for the one meeting shared "
                                    "with a colleague, then three of its fields e-mailed",
                   forms={
        1: F("one e-mail, recipient and text given", _with_attendee, ["email"],
              "E-mail {{name}} to tell {{first}} that our {{title}} is on {{day}} at {{start}} "
              "(location: {{location}}).",
              mailed("{{id}}", ["{{date_words}}", "{{start_aliases}}", "{{place}}"]),
              [send(["{{address}}"], "{{title}}", "Hi {{first}}, our {{title}} is on {{day}} "
                                                   "at {{start}} (location: {{location}}).")],
              "I e-mailed {{first}} that our {{title}} is on {{day}} at {{start}}.").form(),
        2: F("the week's calendar read for a named meeting, then its time and place e-mailed",
              _with_attendee, ["calendar", "email"],
              "E-mail {{name}} the day, start time and location of our \"{{title}}\" meeting "
              "this week.",
              mailed("{{id}}", ["{{date_words}}", "{{start_aliases}}", "{{place}}"]),
              [_LIST_WEEK,
               send(["{{address}}"], "{{title}}", "Hi {{first}}, our {{title}} is on {{day}} "
                                                   "at {{start}} (location: {{location}}).")],
              "I e-mailed {{first}} that our {{title}} is on {{day}} at {{start}} (location: "
              "{{location}}).").form(),
    }),
    "CM-8": Ladder(base=2, why_base="two calls: the department's members read, then one e-mail "
                                    "to them all", forms={
        1: F("one e-mail to two named colleagues, its text given", _closure_given, ["email"],
              "E-mail {{names}} with the subject \"Office closure\" to tell them that the "
              "office closes at {{time}} on Friday.", {"kind": "state", "checks": "{{checks}}"},
              [send("{{addresses}}", "Office closure",
                     "Hi all, the office closes at {{time}} on Friday.")],
              "I e-mailed {{names}} that the office closes at {{time}} on Friday.").form(),
        3: F("a role's holder looked up, their direct reports read, then all e-mailed",
              _closure_reports, ["query_table", "email"],
              "E-mail everyone who reports directly to our {{role}} with the subject \"Office "
              "closure\" to tell them that the office closes at 15:00 on Friday.",
              {"kind": "state", "checks": "{{checks}}"},
              [_ROLE_ROW, query("employees", manager="{{boss_id}}"),
               send("{{addresses}}", "Office closure",
                     "Hi all, the office closes at 15:00 on Friday.")],
              "I e-mailed {{names}}, who report to {{boss_name}}, that the office closes at "
              "15:00 on Friday.").form(),
    }),
}
