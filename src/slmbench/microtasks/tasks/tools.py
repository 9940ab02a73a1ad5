"""Tool selection: which of the listed functions (or none) serves the request?"""

from collections.abc import Mapping

from slmbench.core.sources import SourceArchive
from slmbench.microtasks.baselines import (
    BM25Functions,
    always,
    bm25_tools,
    fit_none_threshold,
    in_order,
)
from slmbench.microtasks.datasets import bfcl
from slmbench.microtasks.datasets.records import Item, ToolItem
from slmbench.microtasks.prompts import PROMPT_DIR
from slmbench.microtasks.spec import Built, MicroTask


def _build(archives: Mapping[str, SourceArchive]) -> Built:
    return Built(bfcl.build_tools(archives["bfcl-eval"]), (
        "gold = the function named by the ground-truth call; irrelevance items: none",))


def _fields(item: Item) -> dict[str, str]:
    assert isinstance(item, ToolItem)
    lines = [f"- {f.name}: {' '.join(f.description.split())}" for f in item.functions]
    return {"functions": "\n".join(lines), "request": item.request}


def _options(item: Item) -> list[str]:
    assert isinstance(item, ToolItem)
    return [f.name for f in item.functions] + ["none"]


def _stratum(item: Item) -> str:
    assert isinstance(item, ToolItem)
    return "none" if item.label == "none" else "function"


def _restrict(item: Item, kept: list[str]) -> tuple[Item, list[str]]:
    """The item listing only the ``kept`` functions (and ``none``); the item itself when the
    shortlist is only ``none``: nothing for the model to choose."""
    assert isinstance(item, ToolItem)
    funcs = tuple(f for f in item.functions if f.name in set(kept))
    if not funcs:
        return item, _options(item)
    sub = item.model_copy(update={"functions": funcs})
    return sub, _options(sub)


TASK = MicroTask(
    name="tools", item_type=ToolItem, prompts=PROMPT_DIR / "tools.yaml", fields=_fields,
    metrics=("accuracy",), shape="choice", options=_options, stratum=_stratum,
    baseline=lambda fit, items: bm25_tools(items, fit_none_threshold(fit)),  # type: ignore[arg-type]
    build=_build, needs=("bfcl-eval",),
    constants=(always("none"), in_order()),
    graded=BM25Functions.fit, restrict=_restrict)
