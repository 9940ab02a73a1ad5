"""``query_table`` over the employees / products / sales tables; ``csv_processor`` over CSV."""

from __future__ import annotations

import csv
import io
from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from slmbench.agents.tools import rows
from slmbench.agents.tools.base import ToolError
from slmbench.agents.tools.common import StrictParams, WorldTool
from slmbench.agents.tools.rows import Agg, Condition
from slmbench.agents.world import World

MAX_ROWS = 50  # rows shown to the model at most; the count is always exact


def _conditions(value: Any) -> Any:
    """Accept ``{"department": "Sales"}`` as shorthand for equality conditions."""
    if isinstance(value, dict) and "column" not in value:
        return [{"column": k, "op": "=", "value": v} for k, v in value.items()]
    if isinstance(value, dict):
        return [value]
    return value


def _page(found: list[dict[str, Any]], limit: int | None) -> dict[str, Any]:
    shown = found[: min(limit or MAX_ROWS, MAX_ROWS)]
    out: dict[str, Any] = {"row_count": len(found), "rows": shown}
    if len(shown) < len(found):
        out["note"] = f"showing {len(shown)} of {len(found)} rows"
    return out


class QueryTable(WorldTool, name="query_table"):
    """Query the company database. Tables: employees (id, name, email, department, title, salary,
    start_date, manager), products (id, name, category, price, stock), sales (id, product_id,
    employee_id, date, quantity, amount). Optional filters, columns, order_by, limit, and an
    aggregate (count/sum/mean/min/max) of aggregate_column."""

    class Params(StrictParams):
        table: Literal["employees", "products", "sales"]
        filters: list[Condition] = Field(default_factory=list,
                                         description="conditions that must all hold")
        columns: list[str] | None = Field(default=None, description="columns to return")
        order_by: str | None = None
        descending: bool = False
        limit: int | None = Field(default=None, ge=1, le=MAX_ROWS)
        aggregate: Agg | None = None
        aggregate_column: str | None = None

        _filters = field_validator("filters", mode="before")(_conditions)

    def run(self, world: World, params: Params) -> dict[str, Any]:
        table = world.table(params.table)
        columns = list(table[0])
        found = rows.apply(table, params.filters)
        if params.aggregate:
            value = rows.aggregate(found, params.aggregate_column, params.aggregate)
            return {"table": params.table, "row_count": len(found),
                    "aggregate": params.aggregate, "column": params.aggregate_column,
                    "value": value}
        if params.order_by:
            found = rows.sort(found, params.order_by, params.descending)
        if params.columns:
            rows.check_columns(params.columns, columns, "columns")
            found = [{c: r[c] for c in params.columns} for r in found]
        return {"table": params.table, **_page(found, params.limit)}


class CsvProcessor(WorldTool, name="csv_processor"):
    """Process CSV data from a scratch-folder file (file) or given inline (csv). operation=filter
    (filters), aggregate (function of column, optional group_by), sort (column, descending, limit)
    or summary (columns and numeric statistics)."""

    class Params(StrictParams):
        operation: Literal["filter", "aggregate", "sort", "summary"]
        file: str | None = Field(default=None, description="a file in the scratch folder")
        csv: str | None = Field(default=None, description="inline CSV text with a header row")
        filters: list[Condition] = Field(default_factory=list)
        column: str | None = None
        function: Agg = "sum"
        group_by: str | None = None
        descending: bool = False
        limit: int | None = Field(default=None, ge=1, le=MAX_ROWS)

        _filters = field_validator("filters", mode="before")(_conditions)

        @model_validator(mode="after")
        def _one_source(self) -> CsvProcessor.Params:
            if (self.file is None) == (self.csv is None):
                raise ValueError("give exactly one of file or csv")
            return self

    def _load(self, world: World, p: Params) -> list[dict[str, Any]]:
        if p.file is not None:
            name = p.file.strip().removeprefix("./").removeprefix("scratch/")
            if name not in world.files:
                raise ToolError(f"no file {p.file!r} in the scratch folder; files: "
                                f"{', '.join(sorted(world.files))}")
            text = world.files[name]
        else:
            text = p.csv or ""
        table = list(csv.DictReader(io.StringIO(text.strip())))
        if not table:
            raise ToolError("the CSV has no data rows")
        return table

    def run(self, world: World, params: Params) -> dict[str, Any]:
        p = params
        table = self._load(world, p)
        found = rows.apply(table, p.filters)
        if p.operation == "filter":
            return _page(found, p.limit)
        if p.operation == "sort":
            if not p.column:
                raise ToolError("sort needs column")
            return _page(rows.sort(found, p.column, p.descending), p.limit)
        if p.operation == "aggregate":
            if p.group_by is None:
                return {"function": p.function, "column": p.column, "row_count": len(found),
                        "value": rows.aggregate(found, p.column, p.function)}
            rows.check_columns([p.group_by], list(table[0]), "group_by")
            groups: dict[str, list[dict[str, Any]]] = {}
            for r in found:
                groups.setdefault(r[p.group_by], []).append(r)
            return {"function": p.function, "column": p.column, "group_by": p.group_by,
                    "groups": {k: rows.aggregate(g, p.column, p.function)
                               for k, g in groups.items()}}
        return _summary(found)


def _summary(table: list[dict[str, Any]]) -> dict[str, Any]:
    columns = list(table[0]) if table else []
    numeric: dict[str, dict[str, float]] = {}
    for c in columns:
        vals = [rows.as_number(r[c]) for r in table]
        if vals and all(v is not None for v in vals) and c != "id" and not c.endswith("_id"):
            nums = [v for v in vals if v is not None]
            numeric[c] = {"sum": round(sum(nums), 4), "mean": round(sum(nums) / len(nums), 4),
                          "min": min(nums), "max": max(nums)}
    return {"row_count": len(table), "columns": columns, "numeric": numeric}
