"""Information retrieval's ladders (``docs/tasks.md``, "Levels")."""

from __future__ import annotations

import datetime as dt
import itertools
import random
from typing import Any

from slmbench.agents.tasks.families.levels._ir_dm_terms import (
    dated,
    names,
    newest_manager,
    sender_joined,
    sender_manager,
    title_chain,
    title_manager,
    titled_newest,
)
from slmbench.agents.tasks.families.levels.ladder import Form, Ladder
from slmbench.agents.tasks.families.terms import date_aliases, invoice_figures, titled
from slmbench.agents.world import World

__all__ = ["LADDERS"]


# -- IR-1: heights -------------------------------------------------------------------------

def _peak_over_tower(world: World, rng: random.Random) -> dict[str, Any]:
    s = world.slots
    return {"difference": int(s["peak_height"]) - int(s["tower_height"])}


# -- IR-2: discoveries ---------------------------------------------------------------------

def _discoveries(world: World) -> list[dict[str, Any]]:
    """The world's dated firsts: what it was, a search for it, who, when, and a pair of names
    an answer may give for who."""
    s = world.slots
    rows = [("the discovery of {}".format(s["mineral"]), f"discovery of {s['mineral']}",
             s["mineral_finder"], s["mineral_year"]),
            ("the first isolation of {}".format(s["element"]), f"{s['element']} isolated",
             s["element_finder"], s["element_year"]),
            ("the development of the {} fever vaccine".format(s["fever"]),
             f"{s['fever']} fever vaccine", s["vaccine_maker"], s["vaccine_year"]),
            ("the first release of the {} programming language".format(s["language"]),
             f"{s['language']} programming language", s["language_author"],
             s["language_year"])]
    return [{"what": w, "query": q, "who": str(p), "year": int(y),
             "aliases": [str(p), str(p).split()[-1]]} for w, q, p, y in rows]


def _first_of(world: World, rng: random.Random, k: int) -> dict[str, Any]:
    """``k`` of the world's firsts, the earliest of them unique."""
    options = [c for c in itertools.permutations(_discoveries(world), k)
               if sorted(d["year"] for d in c)[:2] != [min(d["year"] for d in c)] * 2]
    chosen = list(rng.choice(options))
    first = min(chosen, key=lambda d: d["year"])
    out: dict[str, Any] = {"first_who": first["aliases"], "first_name": first["who"],
                           "first_year": str(first["year"]),
                           "first_what": first["what"][0].upper() + first["what"][1:],
                           "forbidden": [d["who"] for d in chosen if d is not first]}
    for i, d in enumerate(chosen):
        out[f"what{i}"], out[f"query{i}"], out[f"year{i}"] = d["what"], d["query"], d["year"]
    return out


def _two_firsts(world: World, rng: random.Random) -> dict[str, Any]:
    return _first_of(world, rng, 2)


def _three_firsts(world: World, rng: random.Random) -> dict[str, Any]:
    return _first_of(world, rng, 3)


# -- IR-3: the chief executive -------------------------------------------------------------

def _ceo_joined(world: World, rng: random.Random) -> dict[str, Any]:
    ceo = titled(world, "Chief Executive Officer")
    return {"ceo_names": names(ceo), "ceo_name": ceo.name, "joined": dated(ceo.start_date),
            "joined_iso": ceo.start_date.isoformat(),
            "forbidden": [world.person(i).name for i in ("E02", "E03", "E04", "E05")]}


def _longest_report(world: World, rng: random.Random) -> dict[str, Any]:
    """The chief executive's longest-serving direct report; the newest where two joined
    first on the same day (a few worlds)."""
    ceo = titled(world, "Chief Executive Officer")
    reports = sorted((e for e in world.employees if e.manager == ceo.id),
                     key=lambda e: e.start_date)
    newest = reports[0].start_date == reports[1].start_date
    if newest:
        reports.reverse()
    assert reports[0].start_date != reports[1].start_date, world.seed
    return {"ceo_name": ceo.name, "ceo_id": ceo.id, "report": names(reports[0]),
            "which": "joined the company most recently" if newest else
                     "has been with the company the longest",
            "descending": newest, "report_name": reports[0].name,
            "report_start": reports[0].start_date.isoformat(),
            "forbidden": [e.name for e in reports[1:]]}


# -- IR-4: facts by key --------------------------------------------------------------------

def _speed_gap(world: World, rng: random.Random) -> dict[str, Any]:
    s = world.slots
    return {"gap": abs(int(s["network_speed"]) - int(s["copper_speed"]))}


def _contract(world: World, rng: random.Random) -> dict[str, Any]:
    renewal = dt.date.fromisoformat(str(world.slots["vendor_renewal"]))
    return {"renewal": date_aliases(renewal)}


# -- IR-5: the vendor's invoice ------------------------------------------------------------

def _invoice_dates(world: World, rng: random.Random) -> dict[str, Any]:
    return {**_contract(world, rng), **invoice_figures(world)}


def _search(query: str) -> dict[str, Any]:
    return {"tool": "web_search", "arguments": {"query": query}}


def _employee(**filters: str) -> dict[str, Any]:
    return {"tool": "query_table", "arguments": {"table": "employees", "filters": filters}}


_NEWEST = {"tool": "query_table", "arguments": {
    "table": "employees", "filters": {"department": "{{department}}"},
    "order_by": "start_date", "descending": True}}
_MAIL = {"tool": "email", "arguments": {"action": "search", "query": "{{subject}}"}}


LADDERS: dict[str, Ladder] = {
    "IR-1": Ladder(base=1, why_base="one search, the height read from its result", forms={
        2: Form(what="two searches and a subtraction", binder=_peak_over_tower, template={
            "instruction": "How many metres higher is the summit of Mount {{peak}} than the "
                           "top of the {{tower}} Tower?",
            "scorer": {"kind": "numeric", "value": "{{difference}}"},
            "evidence": ["{{peak_height}}", "{{tower_height}}"],
            "reference": {
                "actions": [_search("Mount {{peak}} height"), _search("{{tower}} Tower height")],
                "answer": "Mount {{peak}} rises {{peak_height}} metres and the {{tower}} Tower "
                          "is {{tower_height}} metres tall, so the summit is {{difference}} "
                          "metres higher."}}),
        3: Form(what="the peak and the tower named by where they are: two searches that "
                     "must identify them, and a subtraction", binder=_peak_over_tower,
                template={
            "instruction": "How many metres higher is the highest peak of the {{peak_range}} "
                           "Range than the tower that stands in Quillhaven?",
            "scorer": {"kind": "numeric", "value": "{{difference}}"},
            "evidence": ["{{peak_height}}", "{{tower_height}}"],
            "reference": {
                "actions": [_search("highest peak {{peak_range}} Range"),
                            _search("tower Quillhaven height")],
                "answer": "The highest peak of the {{peak_range}} Range, Mount {{peak}}, rises "
                          "{{peak_height}} metres; the {{tower}} Tower in Quillhaven is "
                          "{{tower_height}} metres tall, so the summit is {{difference}} "
                          "metres higher."}}),
    }),
    "IR-2": Ladder(base=1, why_base="one search, the finder and year read from its result",
                   forms={
        2: Form(what="two searches, and which of two firsts came earlier",
                binder=_two_firsts, template={
            "instruction": "Which came first: {{what0}} or {{what1}}? Name the person behind "
                           "the earlier one.",
            "scorer": {"kind": "entities", "required": ["{{first_who}}"],
                       "forbidden": "{{forbidden}}"},
            "evidence": ["{{year0}}", "{{year1}}"],
            "reference": {
                "actions": [_search("{{query0}}"), _search("{{query1}}")],
                "answer": "{{first_what}} came first, in {{first_year}}; {{first_name}} was "
                          "behind it."}}),
        3: Form(what="three searches, the earliest of three firsts, its person and year",
                binder=_three_firsts, template={
            "instruction": "Of {{what0}}, {{what1}} and {{what2}}, which came first? Name the "
                           "person behind it and the year.",
            "scorer": {"kind": "entities", "required": ["{{first_who}}", "{{first_year}}"],
                       "forbidden": "{{forbidden}}"},
            "evidence": ["{{year0}}", "{{year1}}", "{{year2}}"],
            "reference": {
                "actions": [_search("{{query0}}"), _search("{{query1}}"),
                            _search("{{query2}}")],
                "answer": "{{first_what}} came first, in {{first_year}}; {{first_name}} was "
                          "behind it."}}),
    }),
    "IR-3": Ladder(base=1, why_base="one search, the chief executive read from its result",
                   forms={
        2: Form(what="a search for the chief executive, then their row for the start date",
                binder=_ceo_joined, template={
            "instruction": "Who is the chief executive of Brightline Labs, and on what date "
                           "did they join the company?",
            "scorer": {"kind": "entities", "required": ["{{ceo_names}}", "{{joined}}"],
                       "forbidden": "{{forbidden}}"},
            "reference": {
                "actions": [_search("Brightline Labs CEO"), _employee(name="{{ceo_name}}")],
                "answer": "{{ceo_name}} is the CEO; they joined on {{joined_iso}}."}}),
        3: Form(what="the chief executive found by search, then their direct reports, the "
                     "longest-serving (or newest) of them", binder=_longest_report, template={
            "instruction": "Of the people who report directly to the chief executive of "
                           "Brightline Labs, who {{which}}? Give their full name.",
            "scorer": {"kind": "entities", "required": ["{{report}}"],
                       "forbidden": "{{forbidden}}"},
            "reference": {
                "actions": [_search("Brightline Labs CEO"), _employee(name="{{ceo_name}}"),
                            {"tool": "query_table", "arguments": {
                                "table": "employees", "filters": {"manager": "{{ceo_id}}"},
                                "order_by": "start_date", "descending": "{{descending}}"}}],
                "answer": "Of {{ceo_name}}'s direct reports, {{report_name}} {{which}}; they "
                          "joined on {{report_start}}."}}),
    }),
    "IR-4": Ladder(base=1, why_base="one fact lookup by a given key, the speed read from it",
                   forms={
        2: Form(what="two fact lookups by given keys and a subtraction", binder=_speed_gap,
                template={
            "instruction": "Use fact_lookup with the keys {{network_key}}_cable_speed and "
                           "{{copper_key}}_cable_speed: how many kilometres per second apart "
                           "are the signal speeds of the {{network}} fibre network and the "
                           "{{copper}} copper lines?",
            "scorer": {"kind": "numeric", "value": "{{gap}}"},
            "evidence": ["{{network_speed}}", "{{copper_speed}}"],
            "reference": {
                "actions": [{"tool": "fact_lookup",
                             "arguments": {"key": "{{network_key}}_cable_speed"}},
                            {"tool": "fact_lookup",
                             "arguments": {"key": "{{copper_key}}_cable_speed"}}],
                "answer": "{{network}}: {{network_speed}} km/s; {{copper}}: {{copper_speed}} "
                          "km/s; they are {{gap}} km/s apart."}}),
        3: Form(what="the key found through the inbox: an invoice's sender names the vendor "
                     "whose contract fact is then looked up", binder=_contract, template={
            "instruction": "One of our vendors sent me an invoice. Use fact_lookup with the "
                           "key made of that vendor's name in lower case and _contract to "
                           "find out when their contract renews and what it costs per month.",
            "tools": ["email", "fact_lookup"],
            "scorer": {"kind": "all", "scorers": [
                {"kind": "entities", "required": ["{{renewal}}"]},
                {"kind": "numeric", "value": "{{vendor_monthly}}"}]},
            "reference": {
                "actions": [{"tool": "email", "arguments": {"action": "search",
                                                            "query": "invoice"}},
                            {"tool": "fact_lookup",
                             "arguments": {"key": "{{vendor_key}}_contract"}}],
                "answer": "The {{vendor}} contract costs ${{vendor_monthly:,}} per month and "
                          "renews on {{vendor_renewal}}."}}),
    }),
    "IR-5": Ladder(base=2, why_base="an inbox search, then reading the invoice for its due date",
                   forms={
        1: Form(what="one inbox search, the invoice number read from its subject", template={
            "instruction": "What is the number of the invoice {{vendor}} sent me?",
            "scorer": {"kind": "entities", "required": ["{{invoice}}"]},
            "reference": {
                "actions": [{"tool": "email", "arguments": {"action": "search",
                                                            "query": "{{vendor}}"}}],
                "answer": "{{vendor}} sent invoice {{invoice}}."}}),
        3: Form(what="the invoice found and read, then the contract searched: two dates from "
                     "two tools", binder=_invoice_dates, template={
            "instruction": "There is an invoice from {{vendor}} in my inbox. When is it due, "
                           "and on what date does our contract with {{vendor}} renew?",
            "tools": ["email", "web_search"],
            "scorer": {"kind": "entities", "required": ["{{due_aliases}}", "{{renewal}}"]},
            "reference": {
                "actions": [{"tool": "email", "arguments": {"action": "search",
                                                            "query": "invoice"}},
                            {"tool": "email", "arguments": {"action": "read",
                                                            "email_id": "{{invoice_email}}"}},
                            _search("{{vendor}} contract renewal")],
                "answer": "Invoice {{invoice}} is due on {{invoice_due}}; the {{vendor}} "
                          "contract renews on {{vendor_renewal}}."}}),
    }),
    "IR-6": Ladder(base=1, why_base="one query by title, the name read from its row", forms={
        2: Form(what="the title's holder, then their manager's row", binder=title_manager,
                template={
            "instruction": "Who is the manager of Brightline Labs' {{title}}? Give their full "
                           "name.",
            "scorer": {"kind": "entities", "required": ["{{boss}}"],
                       "forbidden": "{{forbidden}}"},
            "reference": {
                "actions": [_employee(title="{{title}}"), _employee(id="{{boss_id}}")],
                "answer": "{{boss_name}} manages the {{title}}."}}),
        3: Form(what="a chain of three rows: the title's holder, their manager, and that "
                     "manager's manager", binder=title_chain, template={
            "instruction": "Who is the manager of {{who}}, and who does that manager "
                           "report to? Give both full names.",
            "scorer": {"kind": "entities", "required": ["{{boss}}", "{{top}}"],
                       "forbidden": "{{forbidden}}"},
            "reference": {
                "actions": [{"tool": "query_table", "arguments": {
                                "table": "employees", "filters": [
                                    {"column": "{{column}}", "op": "=", "value": "{{value}}"}]}},
                            _employee(id="{{boss_id}}"), _employee(id="{{top_id}}")],
                "answer": "{{boss_name}} manages {{who_short}}, and reports to "
                          "{{top_name}}."}}),
    }),
    "IR-7": Ladder(base=1, why_base="one inbox search, the sender read from its result",
                   forms={
        2: Form(what="the e-mail's sender, then their row for the start date",
                binder=sender_joined, template={
            "instruction": "On what date did the person who sent me the e-mail with the "
                           "subject \"{{subject}}\" join Brightline Labs?",
            "tools": ["email", "query_table"],
            "scorer": {"kind": "entities", "required": ["{{joined}}"]},
            "reference": {
                "actions": [_MAIL, _employee(email="{{address}}")],
                "answer": "{{sender_name}} sent it; they joined on {{joined_iso}}."}}),
        3: Form(what="the e-mail's sender, their row, then their manager's row",
                binder=sender_manager, template={
            "instruction": "Who manages the person who sent me the e-mail with the subject "
                           "\"{{subject}}\"? Give the manager's full name.",
            "tools": ["email", "query_table"],
            "scorer": {"kind": "entities", "required": ["{{boss}}"],
                       "forbidden": "{{forbidden}}"},
            "reference": {
                "actions": [_MAIL, _employee(email="{{address}}"), _employee(id="{{boss_id}}")],
                "answer": "{{sender_name}} sent it; their manager is {{boss_name}}."}}),
    }),
    "IR-8": Ladder(base=1, why_base="one ordered query, the newest member read from its top row",
                   forms={
        2: Form(what="the department's newest member, then their manager's row",
                binder=newest_manager, template={
            "instruction": "Who joined the {{department}} department most recently, and who "
                           "is their manager?",
            "scorer": {"kind": "entities", "required": ["{{newest}}", "{{boss}}"],
                       "forbidden": "{{forbidden}}"},
            "reference": {
                "actions": [_NEWEST, _employee(id="{{boss_id}}")],
                "answer": "{{newest_name}} joined {{department}} most recently; their manager "
                          "is {{boss_name}}."}}),
        3: Form(what="the department found from a title, its newest member, then their "
                     "manager: three rows in a chain", binder=titled_newest, template={
            "instruction": "Who is the newest member of the department that Brightline Labs' "
                           "{{title}} works in? Give their start date and their manager.",
            "scorer": {"kind": "entities", "required": ["{{newest}}", "{{start}}", "{{boss}}"],
                       "forbidden": "{{forbidden}}"},
            "reference": {
                "actions": [_employee(title="{{title}}"), _NEWEST, _employee(id="{{boss_id}}")],
                "answer": "{{newest_name}} joined {{department}} most recently, on "
                          "{{start_iso}}; their manager is {{boss_name}}."}}),
    }),
}
