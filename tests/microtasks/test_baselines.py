"""Baselines reproduce known answers on a tiny hand-made corpus."""

from __future__ import annotations

from slmbench.microtasks import tasks
from slmbench.microtasks.baselines import (
    bm25_ranking,
    bm25_tools,
    fit_none_threshold,
    majority,
    memory_cues,
    random_reference,
    rule_memory,
)
from slmbench.microtasks.datasets.records import FunctionDoc, MemoryItem, RankItem, ToolItem

FUNCS = (FunctionDoc(name="get_weather_forecast", description="Weather forecast for a city."),
         FunctionDoc(name="send_email", description="Send an email message to a recipient."),
         FunctionDoc(name="stock.price", description="Current share price of a stock ticker."))


def _tool(i: str, request: str, label: str) -> ToolItem:
    return ToolItem(id=i, split="eval", provenance=(), request=request, functions=FUNCS,
                    label=label)


def test_bm25_ranks_the_matching_turn_first() -> None:
    item = RankItem(id="r", split="eval", provenance=(),
                    query="Which city do I live in, and what is the weather?",
                    turns=("I had pasta for lunch today.", "I live in the city of Bergen.",
                           "The weather is grey."), gold=1)
    assert bm25_ranking([item]).rankings["r"] == ["2", "3", "1"]


def test_bm25_tools_picks_the_function_and_says_none_below_the_threshold() -> None:
    items = [_tool("a", "What is the weather forecast for Oslo?", "get_weather_forecast"),
             _tool("b", "Please send an email to Kari.", "send_email"),
             _tool("c", "Who wrote Peer Gynt?", "none")]
    threshold = fit_none_threshold(items)
    assert threshold > 0
    got = bm25_tools(items, threshold).rankings
    assert got["a"][0] == "get_weather_forecast"
    assert got["b"][0] == "send_email"
    assert got["c"][0] == "none"
    assert bm25_tools(items, 0.0).rankings["c"][0] != "none"  # no threshold, no "none"


def test_memory_rule_needs_two_cue_families() -> None:
    fact = "My name is Ingrid and I moved here in March 2021."
    chatter = "ok thanks, that helps a lot"
    assert set(memory_cues(fact)) >= {"identity", "date"}
    items = [MemoryItem(id=k, split="eval", provenance=(), turn=t, label="save")
             for k, t in (("f", fact), ("c", chatter))]
    got = rule_memory(items).rankings
    assert got["f"][0] == "save"
    assert got["c"][0] == "skip"


def test_majority_follows_the_fit_split_and_random_is_seeded() -> None:
    fit = [_tool("f1", "x", "none"), _tool("f2", "y", "none"), _tool("f3", "z", "send_email")]
    items = [_tool("e1", "q", "send_email")]
    options = tasks.get("tools").options_for
    assert majority("tools", [f.label for f in fit], items, options).rankings["e1"][0] == "none"
    first = random_reference("tools", items, options).rankings["e1"]
    assert first == random_reference("tools", items, options).rankings["e1"]
    assert sorted(first) == sorted([f.name for f in FUNCS] + ["none"])
