"""A tiny in-memory toolbox for the agent-loop tests (the real one: agents.tools)."""

from __future__ import annotations

from collections import Counter
from typing import Any

from slmbench.agents.records import FaultPlan
from slmbench.agents.tools.base import ToolResult, ToolSpec

FACTS = {"capital_of_france": "Paris", "ceo": "Dana Reyes"}


class FakeToolbox:
    """``fact_lookup(key)`` over :data:`FACTS`, with an optional injected fault.

    ``broken=True`` makes ``call`` raise, as a toolbox whose sandbox is gone would.
    """

    def __init__(self, fault_plan: FaultPlan | None = None, *, broken: bool = False) -> None:
        self.fault_plan = fault_plan
        self.broken = broken
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self._count: Counter[str] = Counter()

    def specs(self) -> list[ToolSpec]:
        return [ToolSpec(name="fact_lookup", description="Look up a company fact by key.",
                         parameters={"type": "object",
                                     "properties": {"key": {"type": "string"}},
                                     "required": ["key"]})]

    def call(self, name: str, arguments: dict[str, Any]) -> ToolResult:
        self.calls.append((name, arguments))
        if self.broken:
            raise RuntimeError("sandbox unavailable")
        self._count[name] += 1
        plan = self.fault_plan
        if plan and plan.tool == name and plan.call == self._count[name]:
            return ToolResult(ok=False, observation=f"error: {plan.fault} (try again later)",
                              injected_fault=plan.fault)
        if name != "fact_lookup":
            return ToolResult(ok=False, observation=f"error: no tool named {name!r}")
        key = arguments.get("key")
        if key not in FACTS:
            return ToolResult(ok=False, observation=f"error: no fact with key {key!r}")
        return ToolResult(ok=True, observation=FACTS[key])
