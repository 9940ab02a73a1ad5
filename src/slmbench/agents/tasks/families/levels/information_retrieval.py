"""Information retrieval's ladders (``docs/tasks.md``, "Levels")."""

from __future__ import annotations

import random
from typing import Any

from slmbench.agents.tasks.families.levels.ladder import Form, Ladder
from slmbench.agents.world import World

__all__ = ["LADDERS"]


def _peak_over_tower(world: World, rng: random.Random) -> dict[str, Any]:
    s = world.slots
    return {"difference": int(s["peak_height"]) - int(s["tower_height"])}


LADDERS: dict[str, Ladder] = {
    "IR-1": Ladder(base=1, why_base="one search, the height read from its result", forms={
        2: Form(what="two searches and a subtraction", binder=_peak_over_tower, template={
            "instruction": "How many metres higher is the summit of Mount {{peak}} than the "
                           "top of the {{tower}} Tower?",
            "scorer": {"kind": "numeric", "value": "{{difference}}"},
            "evidence": ["{{peak_height}}", "{{tower_height}}"],
            "reference": {
                "actions": [{"tool": "web_search", "arguments": {"query": "Mount {{peak}} height"}},
                            {"tool": "web_search",
                             "arguments": {"query": "{{tower}} Tower height"}}],
                "answer": "Mount {{peak}} rises {{peak_height}} metres and the {{tower}} Tower "
                          "is {{tower_height}} metres tall, so the summit is {{difference}} "
                          "metres higher."}}),
    }),
}
