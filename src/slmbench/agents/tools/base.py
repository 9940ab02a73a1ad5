"""What a tool is, and what the agent loop sees of the toolbox.

A :class:`Tool` has a name, a description, a pydantic ``Params`` model (its
JSON schema is shown to the model; every call is validated against it) and a
``run`` that acts on the world; the world's tools get their name and description from
:class:`~slmbench.agents.tools.common.WorldTool` (a class keyword and the class docstring).
A :class:`Toolbox` is the set of tools of one trial: the agent loop only ever calls
``specs()`` and ``call()``, and ``call()`` never raises — invalid arguments, tool errors and
injected faults all come back as a :class:`ToolResult` with ``ok=False``.
"""

from __future__ import annotations

from typing import Any, ClassVar, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict


class ToolError(Exception):
    """A tool refusing a call for a reason the model should see (e.g. 'no such event')."""


class ToolResult(BaseModel):
    """The observation the model receives for one tool call."""

    model_config = ConfigDict(frozen=True)

    ok: bool
    observation: str
    injected_fault: str | None = None  # the FaultPlan kind when this result is an injected fault
    environment_error: bool = False  # the tool cannot run on this machine (not the model's fault)


class ToolSpec(BaseModel):
    """A tool as shown to the model: name, description and JSON schema of its arguments."""

    model_config = ConfigDict(frozen=True)

    name: str
    description: str
    parameters: dict[str, Any]

    def openai_format(self) -> dict[str, Any]:
        """The OpenAI ``tools=[...]`` entry for native tool calling."""
        return {"type": "function", "function": {"name": self.name,
                "description": self.description, "parameters": self.parameters}}


@runtime_checkable
class Tool(Protocol):
    name: ClassVar[str]
    description: ClassVar[str]
    Params: ClassVar[type[BaseModel]]

    def run(self, world: Any, params: BaseModel) -> Any:
        """Act on the world; return something JSON-serialisable, or raise ToolError."""
        ...


@runtime_checkable
class Toolbox(Protocol):
    def specs(self) -> list[ToolSpec]: ...

    def call(self, name: str, arguments: dict[str, Any]) -> ToolResult: ...
