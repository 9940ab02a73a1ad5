"""``web_search`` and ``fact_lookup``: read-only access to the world's fact table."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import bm25s
from pydantic import Field

from slmbench.agents.tools.base import ToolError
from slmbench.agents.tools.common import StrictParams, WorldTool
from slmbench.agents.world import Fact, World


@lru_cache(maxsize=8)
def _index(texts: tuple[str, ...]) -> bm25s.BM25:
    retriever = bm25s.BM25()
    retriever.index(bm25s.tokenize(list(texts), stopwords="en", show_progress=False),
                    show_progress=False)
    return retriever


def search_facts(facts: list[Fact], query: str, k: int) -> list[tuple[Fact, float]]:
    """The top-``k`` facts for ``query`` by BM25 over title and text (no shared word: no hit)."""
    texts = tuple(f"{f.title} {f.text}" for f in facts)
    tokens = bm25s.tokenize([query], stopwords="en", return_ids=False, show_progress=False)
    if not tokens or not tokens[0]:
        return []
    docs, scores = _index(texts).retrieve(tokens, k=min(k, len(facts)), show_progress=False)
    return [(facts[int(d)], float(s)) for d, s in zip(docs[0], scores[0], strict=True) if s > 0]


class WebSearch(WorldTool, name="web_search"):
    """Search the web for facts. Returns the best matching results (key, title, text) ranked by
    keyword overlap with the query."""

    class Params(StrictParams):
        query: str = Field(min_length=1, description="keywords to search for")
        max_results: int = Field(default=3, ge=1, le=10)

    def run(self, world: World, params: Params) -> dict[str, Any]:
        hits = search_facts(world.facts, params.query, params.max_results)
        return {"query": params.query, "results": [
            {"key": f.key, "title": f.title, "text": f.text} for f, _ in hits]}


class FactLookup(WorldTool, name="fact_lookup"):
    """Look up one fact by its exact key (as returned by web_search, e.g. 'speed_of_light')."""

    class Params(StrictParams):
        key: str = Field(min_length=1, description="the fact's key")

    def run(self, world: World, params: Params) -> dict[str, Any]:
        key = params.key.strip().lower().replace(" ", "_")
        for f in world.facts:
            if f.key == key:
                return {"key": f.key, "title": f.title, "text": f.text}
        near = [f.key for f, _ in search_facts(world.facts, params.key.replace("_", " "), 3)]
        hint = f"; similar keys: {', '.join(near)}" if near else "; try web_search first"
        raise ToolError(f"no fact with key {params.key!r}{hint}")
