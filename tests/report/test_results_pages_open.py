"""No interval on a committed results page under ``docs/results`` is zero-width (issue #16).

``test_stats_never_zero_width`` shows no ``core.stats`` function returns a point, and
``test_no_zero_width`` that a freshly rendered study page prints none; neither sees the pages
that are committed, which are written by many commands and at many code versions. This reads
every one of them: each bracket ``[low, high]`` of a Markdown or HTML page, and each estimate
(``low``/``high`` beside ``n``) of a JSON page. The one exemption is a table column whose
header says ``superseded``: ``partb-intervals-v2.md`` keeps the old method's zero-width
intervals beside the new ones on purpose, to document the defect.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

RESULTS = Path(__file__).resolve().parents[2] / "docs" / "results"
NUMBER = r"-?\d+(?:\.\d+)?%?"
BRACKET = re.compile(rf"\[({NUMBER}), ({NUMBER})\]")
TAG = re.compile(r"<[^>]+>")


def _value(text: str) -> float:
    return float(text.rstrip("%"))


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def text_brackets(text: str) -> Iterator[tuple[str, str]]:
    """Every printed interval of a Markdown or HTML text, outside ``superseded`` columns."""
    header: list[str] = []
    for line in TAG.sub(" ", text).splitlines():
        if not line.lstrip().startswith("|"):
            header = []
            yield from BRACKET.findall(line)
            continue
        cells = _cells(line)
        if not header:
            header = cells
        elif set("".join(cells)) <= set("-: "):
            continue  # the header's rule
        keep = [c for i, c in enumerate(cells)
                if i >= len(header) or "superseded" not in header[i]]
        yield from (b for c in keep for b in BRACKET.findall(c))


def json_estimates(data: Any) -> Iterator[dict[str, Any]]:
    """Every estimate (a mapping with numeric ``low`` and ``high``) anywhere in ``data``."""
    if isinstance(data, dict):
        if all(isinstance(data.get(k), int | float) for k in ("low", "high")):
            yield data
        for value in data.values():
            yield from json_estimates(value)
    elif isinstance(data, list):
        for value in data:
            yield from json_estimates(value)


PAGES = sorted(p for p in RESULTS.rglob("*") if p.suffix in {".md", ".html", ".json"})


def test_every_page_is_read() -> None:
    kinds = {p.suffix for p in PAGES}
    assert kinds == {".md", ".html", ".json"}, kinds
    found = sum(1 for p in PAGES if p.suffix != ".json"
                for _ in text_brackets(p.read_text(encoding="utf-8")))
    assert found > 500  # the pages print their intervals in this form


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(RESULTS)))
def test_no_interval_on_the_page_is_zero_width(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    if page.suffix == ".json":
        points = [e for e in json_estimates(json.loads(text))
                  if e["low"] >= e["high"] and (e.get("n") is None or e["n"] < 30)]
    else:
        points = [b for b in text_brackets(text) if _value(b[0]) >= _value(b[1])]
    assert not points, f"{page.name}: zero-width intervals {points[:5]}"


def test_a_zero_width_interval_is_found_and_a_superseded_column_is_not() -> None:
    page = ("Score 0.0 [0.0, 0.0] in prose.\n\n| cell | old (`abc`, superseded) | new |\n"
            "|---|---|---|\n| a | [0.000, 0.000] | [0.000, 0.369] |\n| b | [0.1, 0.5] | "
            "<td>[0.20, 0.20]</td> |\n")
    assert list(text_brackets(page)) == [("0.0", "0.0"), ("0.000", "0.369"), ("0.20", "0.20")]
    estimates = list(json_estimates({"cells": [{"score": {"low": 0.0, "high": 0.0, "n": 3}},
                                               {"low": None, "high": 1.0}]}))
    assert estimates == [{"low": 0.0, "high": 0.0, "n": 3}]
