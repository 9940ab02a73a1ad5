"""data analysis's ladders (``docs/tasks.md``, "Levels")."""

from __future__ import annotations

import random
from typing import Any

from slmbench.agents.tasks.families.levels._da_mr_terms import (
    big_sales_leader,
    category_stock,
    extremes_sales_gap,
    fresh,
    product_id_total,
    product_rep_total,
    rep_big_sales,
    rep_month_change,
    rep_month_total,
    reps,
    sales_of,
    sold_by,
    total,
    usd,
)
from slmbench.agents.tasks.families.levels.ladder import Form, Ladder
from slmbench.agents.tasks.families.terms import as_number, sales_totals
from slmbench.agents.world import Employee, World

__all__ = ["LADDERS"]

_Q = {"table": "sales", "aggregate": "sum", "aggregate_column": "amount"}
_CSV_SUM = {"operation": "aggregate", "file": "sales_q1.csv", "column": "amount",
            "function": "sum"}


def _who(name: str) -> dict[str, Any]:
    return {"tool": "query_table", "arguments": {"table": "employees", "filters": {"name": name}}}


def _rep_sum(world: World, name: str, **kw: Any) -> int | float | None:
    rep = sold_by(world, name)
    return None if rep is None else total(sales_of(world, rep=rep, **kw))


# -- DA-1: the sales total ------------------------------------------------------------------

def _rep_total(world: World, rng: random.Random) -> dict[str, Any]:
    name = fresh(world, rng, [e.name for e in reps(world)], lambda w: reps(w)[-1].name,
                 _rep_sum)
    rep = world.person(name)
    assert rep is not None
    return {"rep": name, "rep_id": rep.id, "sum": _rep_sum(world, name)}


def _rep_gap(world: World, rng: random.Random) -> dict[str, Any]:
    def gap(w: World, pair: tuple[str, str]) -> object:
        a, b = (_rep_sum(w, n) for n in pair)
        return None if a is None or b is None else as_number(a - b)

    def pairs(w: World) -> list[tuple[str, str]]:
        ranked = sales_totals(w, lambda s: w.person(s.employee_id).name)
        sales = [n for n, _ in ranked if w.person(n).department == "Sales"]
        return [(a, b) for i, a in enumerate(sales) for b in sales[i + 1:]
                if _rep_sum(w, a) != _rep_sum(w, b)]

    a, b = fresh(world, rng, pairs(world), lambda w: pairs(w)[0], gap)
    ida, idb = sold_by(world, a), sold_by(world, b)
    return {"a": a, "b": b, "a_id": ida, "b_id": idb, "a_sum": _rep_sum(world, a),
            "b_sum": _rep_sum(world, b), "gap": gap(world, (a, b))}


# -- DA-2: regional revenue -----------------------------------------------------------------

def _regions(world: World) -> list[tuple[str, str, int]]:
    rows = [r.split(",") for r in world.files["regional_revenue.csv"].splitlines()[1:]]
    return [(r[0], r[1], int(r[2])) for r in rows]


def _quarter_spread(world: World, region: str) -> int:
    figures = [v for r, _, v in _regions(world) if r == region]
    return max(figures) - min(figures)


def _region_spread(world: World, rng: random.Random) -> dict[str, Any]:
    region = fresh(world, rng, ["North", "South", "East", "West"], lambda w: "East",
                   _quarter_spread)
    figures = [v for r, _, v in _regions(world) if r == region]
    return {"region": region, "high": max(figures), "low": min(figures),
            "spread": _quarter_spread(world, region)}


def _quarter_leader(world: World, rng: random.Random) -> dict[str, Any]:
    quarters = [q for q in ("Q1", "Q2", "Q3", "Q4")
                if len({v for _, qq, v in _regions(world) if qq == q}) == 4]
    quarter = "Q2" if world.seed == 0 else rng.choice(quarters)
    rows = sorted((v, r) for r, q, v in _regions(world) if q == quarter)
    region = rows[-1][1]
    return {"quarter": quarter, "region": region, "others": [r for _, r in rows[:-1]],
            "sum": sum(v for r, _, v in _regions(world) if r == region)}


# -- DA-3: sales_q1.csv by rep --------------------------------------------------------------

def _csv_rep(world: World, rng: random.Random) -> dict[str, Any]:
    name = fresh(world, rng, [e.name for e in reps(world)], lambda w: reps(w)[1].name,
                 _rep_sum)
    return {"rep": name, "sum": _rep_sum(world, name)}


def _top_rep_count(world: World, rng: random.Random) -> dict[str, Any]:
    ranked = sales_totals(world, lambda s: world.person(s.employee_id).name)
    rep = sold_by(world, ranked[0][0])
    return {"rep": ranked[0][0], "sum": as_number(ranked[0][1]),
            "count": len(sales_of(world, rep=rep)), "forbidden": [n for n, _ in ranked[1:]]}


# -- DA-4: salaries by department -----------------------------------------------------------

_DEPARTMENTS = ("Engineering", "Sales", "Finance", "Marketing")


def _pay(world: World, dept: str) -> list[int]:
    return [e.salary for e in world.employees if e.department == dept]


def _mean(world: World, dept: str) -> int | float:
    pay = _pay(world, dept)
    return as_number(round(sum(pay) / len(pay), 2))


def _ends(world: World, dept: str) -> tuple[Employee, Employee] | None:
    """The department's best and worst paid, where both are unique."""
    staff = sorted((e for e in world.employees if e.department == dept), key=lambda e: e.salary)
    if len(staff) < 2 or staff[0].salary == staff[1].salary or \
            staff[-1].salary == staff[-2].salary:
        return None
    return staff[-1], staff[0]


def _salary_spread(world: World, rng: random.Random) -> dict[str, Any]:
    def spread(w: World, dept: str) -> object:
        ends = _ends(w, dept)
        return None if ends is None else ends[0].salary - ends[1].salary

    depts = [d for d in _DEPARTMENTS if _ends(world, d)]
    dept = fresh(world, rng, depts, lambda w: "Sales", spread)
    ends = _ends(world, dept)
    assert ends is not None
    high, low = ends
    return {"department": dept, "high": high.salary, "low": low.salary,
            "spread": spread(world, dept), "high_name": high.name, "low_name": low.name,
            "others": [e.name for e in world.employees if e.department == dept
                       and e.id not in (high.id, low.id)]}


def _mean_gap(world: World, rng: random.Random) -> dict[str, Any]:
    def gap(w: World, pair: tuple[str, str]) -> object:
        return as_number(round(_mean(w, pair[0]) - _mean(w, pair[1]), 2))

    def pairs(w: World) -> list[tuple[str, str]]:
        return [(a, b) for a in _DEPARTMENTS for b in _DEPARTMENTS if _mean(w, a) > _mean(w, b)]

    a, b = fresh(world, rng, pairs(world), lambda w: ("Engineering", "Sales"), gap)
    return {"a": a, "b": b, "a_mean": _mean(world, a), "b_mean": _mean(world, b),
            "gap": gap(world, (a, b))}


def _sum(filters: Any) -> dict[str, Any]:
    return {"tool": "query_table", "arguments": {**_Q, "filters": filters}}


def _eq(column: str, value: str) -> dict[str, Any]:
    return {"column": column, "op": "=", "value": value}


def _over(amount: str) -> dict[str, Any]:
    return {"column": "amount", "op": ">", "value": amount}


def _month(first: str, after: str) -> list[dict[str, Any]]:
    return [{"column": "date", "op": ">=", "value": first},
            {"column": "date", "op": "<", "value": after}]


_JAN_FEB = (("2025-01-01", "2025-02-01"), ("2025-02-01", "2025-03-01"))
_ONE_DEPT = {"tool": "query_table", "arguments": {"table": "employees",
                                                   "filters": {"department": "{{department}}"}}}


def _dept_mean(dept: str) -> dict[str, Any]:
    return {"tool": "query_table",
            "arguments": {"table": "employees", "filters": {"department": dept},
                          "aggregate": "mean", "aggregate_column": "salary"}}


LADDERS: dict[str, Ladder] = {
    "DA-1": Ladder(base=1, why_base="one query_table sum, the total read from its result", forms={
        2: Form(what="a rep's sales total: their id, then a sum", binder=_rep_total, template={
            "instruction": "What is the total amount of all sales made by {{rep}} in the sales "
                           "table, in US dollars?",
            "scorer": usd("{{sum}}"),
            "reference": {"actions": [_who("{{rep}}"), _sum({"employee_id": "{{rep_id}}"})],
                "answer": "{{rep}}'s sales total ${{sum:,}}."}}),
        3: Form(what="two reps' totals among the Sales team, and their difference",
                binder=_rep_gap, template={
            "instruction": "By how many US dollars did {{a}}'s total sales in the sales table "
                           "exceed {{b}}'s?",
            "scorer": usd("{{gap}}"),
            "evidence": ["{{a_sum}}", "{{b_sum}}"],
            "reference": {"actions": [
                {"tool": "query_table", "arguments": {"table": "employees",
                                                      "filters": {"department": "Sales"},
                                                      "columns": ["id", "name"]}},
                _sum({"employee_id": "{{a_id}}"}), _sum({"employee_id": "{{b_id}}"})],
                "answer": "{{a}} sold ${{a_sum:,}} and {{b}} ${{b_sum:,}}, so {{a}} sold "
                          "${{gap:,}} more."}}),
    }),
    "DA-2": Ladder(base=1, why_base="one csv_processor sum, read from its result", forms={
        2: Form(what="a region's four quarters, and its best less its worst",
                binder=_region_spread, template={
            "instruction": "Using regional_revenue.csv in the scratch folder, what is the "
                           "difference between the {{region}} region's highest and lowest "
                           "quarterly revenue?",
            "scorer": {"kind": "numeric", "value": "{{spread}}", "tolerance": 0.5},
            "evidence": ["{{high}}", "{{low}}"],
            "reference": {"actions": [{"tool": "csv_processor", "arguments": {
                "operation": "filter", "file": "regional_revenue.csv",
                "filters": {"region": "{{region}}"}}}],
                "answer": "The {{region}} region's quarters run from {{low:,}} to {{high:,}}, "
                          "a difference of {{spread:,}}."}}),
        3: Form(what="the quarter's leading region among four, then its yearly total",
                binder=_quarter_leader, template={
            "instruction": "Using regional_revenue.csv in the scratch folder, which region had "
                           "the highest revenue in {{quarter}}, and what was that region's total "
                           "revenue over all four quarters?",
            "scorer": {"kind": "all", "scorers": [
                {"kind": "entities", "required": ["{{region}}"], "forbidden": "{{others}}"},
                {"kind": "numeric", "value": "{{sum}}", "tolerance": 0.5}]},
            "reference": {"actions": [
                {"tool": "csv_processor", "arguments": {
                    "operation": "filter", "file": "regional_revenue.csv",
                    "filters": {"quarter": "{{quarter}}"}}},
                {"tool": "csv_processor", "arguments": {
                    "operation": "aggregate", "file": "regional_revenue.csv", "column": "revenue",
                    "function": "sum", "filters": {"region": "{{region}}"}}}],
                "answer": "The {{region}} region led {{quarter}}; its revenue over the four "
                          "quarters totals {{sum:,}}."}}),
    }),
    "DA-3": Ladder(base=2, why_base="one grouped csv_processor sum, then the top rep picked "
                                    "among the others", forms={
        1: Form(what="one rep's total in sales_q1.csv, read from one sum", binder=_csv_rep,
                template={
            "instruction": "In sales_q1.csv, what is the total sales amount of {{rep}}, in US "
                           "dollars?",
            "scorer": usd("{{sum}}"),
            "reference": {"actions": [{"tool": "csv_processor", "arguments": {
                **_CSV_SUM, "filters": {"rep": "{{rep}}"}}}],
                "answer": "{{rep}}'s sales total ${{sum:,}}."}}),
        3: Form(what="the top rep among the others, then how many sales they made",
                binder=_top_rep_count, template={
            "instruction": "In sales_q1.csv, which sales rep has the highest total sales amount, "
                           "what is that total in US dollars, and how many sales did they make?",
            "scorer": {"kind": "all", "scorers": [
                {"kind": "entities", "required": ["{{rep}}"], "forbidden": "{{forbidden}}"},
                usd("{{sum}}"), {"kind": "numeric", "value": "{{count}}"}]},
            "reference": {"actions": [
                {"tool": "csv_processor", "arguments": {**_CSV_SUM, "group_by": "rep"}},
                {"tool": "csv_processor", "arguments": {
                    **_CSV_SUM, "function": "count", "filters": {"rep": "{{rep}}"}}}],
                "answer": "{{rep}} has the highest total, ${{sum:,}}, from {{count}} sales."}}),
    }),
    "DA-4": Ladder(base=1, why_base="one query_table mean, read from its result", forms={
        2: Form(what="a department's salaries: the best and worst paid, and the difference",
                binder=_salary_spread, template={
            "instruction": "Who earns the highest and who the lowest yearly salary in the "
                           "{{department}} department, and what is the difference between the "
                           "two salaries, in US dollars?",
            "scorer": {"kind": "all", "scorers": [
                {"kind": "entities", "required": ["{{high_name}}", "{{low_name}}"],
                 "forbidden": "{{others}}"}, usd("{{spread}}")]},
            "evidence": ["{{high_name}}", "{{low_name}}", "{{high}}", "{{low}}"],
            "reference": {"actions": [_ONE_DEPT],
                          "answer": "{{high_name}} earns the most, ${{high:,}}, and {{low_name}} "
                                    "the least, ${{low:,}}; the difference is ${{spread:,}}."}}),
        3: Form(what="two departments' mean salaries, and their difference", binder=_mean_gap,
                template={
            "instruction": "How much higher is the average yearly salary in the {{a}} department "
                           "than in the {{b}} department, in US dollars?",
            "scorer": {"kind": "numeric", "value": "{{gap}}", "tolerance": 1, "unit": "USD"},
            "evidence": ["{{a_mean}}", "{{b_mean}}"],
            "reference": {"actions": [_dept_mean("{{a}}"), _dept_mean("{{b}}")],
                          "answer": "The {{a}} average is ${{a_mean:,}} and the {{b}} average "
                                    "${{b_mean:,}}, so {{a}} is ${{gap:,}} higher."}}),
    }),
    "DA-5": Ladder(base=2, why_base="the product's id, then a sum of its sales", forms={
        1: Form(what="a product's sales total, its id given: one sum", binder=product_id_total,
                template={
            "instruction": "What is the total amount of all sales of product {{product_id}} in "
                           "the sales table, in US dollars?",
            "scorer": usd("{{sum}}"),
            "reference": {"actions": [_sum({"product_id": "{{product_id}}"})],
                          "answer": "Sales of product {{product_id}} total ${{sum:,}}."}}),
        3: Form(what="one rep's sales of one product: two ids, then a sum among distractor "
                     "rows", binder=product_rep_total, template={
            "instruction": "What is the total amount of the sales of the {{product}} made by "
                           "{{rep}}, according to the sales table, in US dollars?",
            "scorer": usd("{{sum}}"),
            "reference": {"actions": [
                {"tool": "query_table", "arguments": {"table": "products",
                                                      "filters": {"name": "{{product}}"}}},
                _who("{{rep}}"),
                _sum({"product_id": "{{product_id}}", "employee_id": "{{rep_id}}"})],
                "answer": "{{rep}}'s sales of the {{product}} total ${{sum:,}}."}}),
    }),
    "DA-6": Ladder(base=1, why_base="one query_table sum over a month's dates, read from its "
                                    "result", forms={
        2: Form(what="a rep's sales in a month: their id, then a sum", binder=rep_month_total,
                template={
            "instruction": "What was the total amount of the sales {{rep}} made in {{month}}, "
                           "according to the sales table, in US dollars?",
            "scorer": usd("{{sum}}"),
            "reference": {"actions": [_who("{{rep}}"), _sum(
                [_eq("employee_id", "{{rep_id}}"), *_month("{{first}}", "{{after}}")])],
                "answer": "{{rep}}'s sales in {{month}} total ${{sum:,}}."}}),
        3: Form(what="a rep's January and February sums, and their difference",
                binder=rep_month_change, template={
            "instruction": "By how many US dollars did {{rep}}'s sales in the sales table differ "
                           "between January 2025 and February 2025?",
            "scorer": usd("{{change}}"),
            "evidence": ["{{jan}}", "{{feb}}"],
            "reference": {"actions": [_who("{{rep}}"), *(_sum(
                [_eq("employee_id", "{{rep_id}}"), *_month(a, b)]) for a, b in _JAN_FEB)],
                "answer": "{{rep}} sold ${{jan:,}} in January and ${{feb:,}} in February, a "
                          "difference of ${{change:,}}."}}),
    }),
    "DA-7": Ladder(base=1, why_base="one query_table count (or sum) over a filter, read from "
                                    "its result", forms={
        2: Form(what="a rep's sales above an amount: their id, then a sum", binder=rep_big_sales,
                template={
            "instruction": "What is the total amount of the sales of more than ${{amount:,}} "
                           "each that {{rep}} made, according to the sales table, in US dollars?",
            "scorer": usd("{{sum}}"),
            "reference": {"actions": [_who("{{rep}}"), _sum(
                [_eq("employee_id", "{{rep_id}}"), _over("{{amount}}")])],
                "answer": "{{rep}}'s sales of more than ${{amount:,}} each total ${{sum:,}}."}}),
        3: Form(what="the sales above an amount counted by rep, the leader's name, then a sum",
                binder=big_sales_leader, template={
            "instruction": "Which employee made the most sales of more than ${{amount:,}} each "
                           "in the sales table, and what do those sales of theirs total, in US "
                           "dollars?",
            "scorer": {"kind": "all", "scorers": [
                {"kind": "entities", "required": ["{{rep}}"], "forbidden": "{{others}}"},
                usd("{{sum}}")]},
            "reference": {"actions": [
                {"tool": "query_table", "arguments": {"table": "sales",
                                                      "filters": [_over("{{amount}}")]}},
                {"tool": "query_table", "arguments": {"table": "employees",
                                                      "filters": {"id": "{{rep_id}}"}}},
                _sum([_eq("employee_id", "{{rep_id}}"), _over("{{amount}}")])],
                "answer": "{{rep}} made the most sales of more than ${{amount:,}}; they total "
                          "${{sum:,}}."}}),
    }),
    "DA-8": Ladder(base=2, why_base="one query_table of a category, then the highest price "
                                    "less the lowest", forms={
        1: Form(what="a category's units in stock, read from one sum", binder=category_stock,
                template={
            "instruction": "How many units of {{category}} products do we have in stock in "
                           "total, according to the products table?",
            "scorer": {"kind": "numeric", "value": "{{stock}}"},
            "reference": {"actions": [{"tool": "query_table", "arguments": {
                "table": "products", "filters": {"category": "{{category}}"},
                "aggregate": "sum", "aggregate_column": "stock"}}],
                "answer": "We have {{stock}} units of {{category}} products in stock."}}),
        3: Form(what="a category's dearest and cheapest products, each one's sales summed, "
                     "and the difference", binder=extremes_sales_gap, template={
            "instruction": "Take the most expensive and the cheapest {{category}} product in the "
                           "products table: what is the difference between their total sales "
                           "amounts in the sales table, in US dollars?",
            "scorer": usd("{{gap}}"),
            "evidence": ["{{high_sum}}", "{{low_sum}}"],
            "reference": {"actions": [
                {"tool": "query_table", "arguments": {"table": "products",
                                                      "filters": {"category": "{{category}}"}}},
                _sum({"product_id": "{{high_id}}"}), _sum({"product_id": "{{low_id}}"})],
                "answer": "The {{high}} sold ${{high_sum:,}} and the {{low}} ${{low_sum:,}}, a "
                          "difference of ${{gap:,}}."}}),
    }),
}
