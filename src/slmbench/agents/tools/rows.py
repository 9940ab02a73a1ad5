"""Row filtering shared by ``query_table`` and ``csv_processor``.

Rows are dicts of JSON values (CSV cells are strings). A :class:`Condition`
compares one column with a value: numbers compare as numbers when both sides
parse as numbers, everything else compares as case-insensitive text (ISO
dates therefore order correctly).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from slmbench.agents.tools.base import ToolError

Op = Literal["=", "!=", ">", ">=", "<", "<=", "contains"]


class Condition(BaseModel):
    """``column op value``, e.g. ``{"column": "price", "op": ">", "value": 100}``."""

    model_config = ConfigDict(extra="forbid")

    column: str
    op: Op = "="
    value: str | float | int | bool | None


def as_number(v: Any) -> float | None:
    """``v`` as a float when it is (or spells) a number, else None."""
    if isinstance(v, bool) or v is None:
        return None
    if isinstance(v, int | float):
        return float(v)
    try:
        return float(str(v).replace(",", "").strip())
    except ValueError:
        return None


def _matches(cell: Any, op: Op, value: Any) -> bool:
    if op == "contains":
        return str(value).lower() in str(cell).lower()
    a, b = as_number(cell), as_number(value)
    left: Any
    right: Any
    if a is not None and b is not None:
        left, right = a, b
    else:
        left, right = str(cell).strip().lower(), str(value).strip().lower()
    return {
        "=": left == right, "!=": left != right, ">": left > right,
        ">=": left >= right, "<": left < right, "<=": left <= right,
    }[op]


def check_columns(names: list[str], columns: list[str], what: str) -> None:
    """Raise a ToolError naming the valid columns when any of ``names`` is not one."""
    bad = [n for n in names if n not in columns]
    if bad:
        raise ToolError(f"unknown column {bad[0]!r} in {what}; columns are: {', '.join(columns)}")


def apply(rows: list[dict[str, Any]], conditions: list[Condition]) -> list[dict[str, Any]]:
    """The rows satisfying every condition."""
    if rows:
        check_columns([c.column for c in conditions], list(rows[0]), "filters")
    return [r for r in rows if all(_matches(r[c.column], c.op, c.value) for c in conditions)]


def sort(rows: list[dict[str, Any]], column: str, descending: bool) -> list[dict[str, Any]]:
    """Rows ordered by ``column``: numerically when every value is a number, else as text."""
    if rows:
        check_columns([column], list(rows[0]), "order_by")
    nums = [as_number(r[column]) for r in rows]
    if all(n is not None for n in nums):
        order = sorted(range(len(rows)), key=lambda i: nums[i] or 0.0, reverse=descending)
    else:
        order = sorted(range(len(rows)), key=lambda i: str(rows[i][column]).lower(),
                       reverse=descending)
    return [rows[i] for i in order]


Agg = Literal["count", "sum", "mean", "min", "max"]


def aggregate(rows: list[dict[str, Any]], column: str | None, function: Agg) -> float | int:
    """One aggregate of ``column`` over ``rows`` (``count`` needs no column)."""
    if function == "count":
        return len(rows)
    if column is None:
        raise ToolError(f"aggregate {function!r} needs a column")
    if rows:
        check_columns([column], list(rows[0]), "aggregate")
    values = [as_number(r[column]) for r in rows]
    if any(v is None for v in values):
        raise ToolError(f"column {column!r} is not numeric; {function} needs numbers")
    nums = [v for v in values if v is not None]
    if not nums:
        raise ToolError(f"no rows to compute {function} of {column!r}")
    result = {"sum": sum(nums), "mean": sum(nums) / len(nums), "min": min(nums),
              "max": max(nums)}[function]
    return round(result, 4)
