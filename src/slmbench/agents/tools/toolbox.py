"""``WorldToolbox``: the tools of one trial, bound to its world, with fault injection.

``call(name, arguments)`` never raises. An unknown tool, arguments that fail
validation (summarised in one line), a :class:`ToolError`, an unavailable
sandbox and any unexpected exception all come back as
``ToolResult(ok=False, observation="error: ...")``; an unavailable sandbox (any
``SlmbenchError`` of a tool) also sets ``environment_error``, which ends the
trial as ``environment_error``, never as the model's failure. Every call is
recorded in ``toolbox.calls``.
"""

from __future__ import annotations

import copy
import functools
import json
from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from slmbench.agents.records import FaultPlan
from slmbench.agents.tools.base import Tool, ToolError, ToolResult, ToolSpec
from slmbench.agents.tools.calendar import Calendar, ScheduleMeeting
from slmbench.agents.tools.code import CodeInterpreter
from slmbench.agents.tools.comms import EmailTool, Notify
from slmbench.agents.tools.faults import RUNS_REAL_CALL, FaultInjector, RealOutcome, faulted_result
from slmbench.agents.tools.files import FileManager
from slmbench.agents.tools.info import FactLookup, WebSearch
from slmbench.agents.tools.tables import CsvProcessor, QueryTable
from slmbench.agents.world import World
from slmbench.core.errors import ConfigError, SlmbenchError

TOOL_CLASSES: dict[str, type] = {t.name: t for t in (
    WebSearch, FactLookup, Calendar, ScheduleMeeting, QueryTable, CsvProcessor,
    CodeInterpreter, FileManager, EmailTool, Notify)}
TOOL_NAMES: tuple[str, ...] = tuple(TOOL_CLASSES)


class ToolCall(BaseModel):
    """One call the agent made, as the toolbox saw it."""

    model_config = ConfigDict(frozen=True)

    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    ok: bool
    fault: str | None = None  # the injected fault kind, if any
    observation: str


def summarize_validation(err: ValidationError) -> str:
    """A pydantic error as one readable line: ``date: invalid date; foo: unexpected argument``."""
    parts = []
    for e in err.errors():
        where = ".".join(str(x) for x in e["loc"]) or "arguments"
        msg = "unexpected argument" if e["type"] == "extra_forbidden" else e["msg"]
        if e["type"].startswith("date"):
            msg += " (use YYYY-MM-DD)"
        parts.append(f"{where}: {msg}")
    return "; ".join(parts)


def compact_schema(node: Any) -> Any:
    """A JSON schema without pydantic's auto-generated ``title`` strings (noise in a prompt)."""
    if isinstance(node, dict):
        return {k: compact_schema(v) for k, v in node.items()
                if not (k == "title" and isinstance(v, str))}
    if isinstance(node, list):
        return [compact_schema(v) for v in node]
    return node


def render(payload: Any) -> str:
    """A tool's return value as the observation text (JSON unless it is already a string)."""
    return payload if isinstance(payload, str) else json.dumps(payload, ensure_ascii=False)


def make_tools(names: Iterable[str] | None = None) -> list[Tool]:
    """Fresh instances of the named tools (all ten by default); unknown names are a ConfigError."""
    chosen = list(names) if names is not None else list(TOOL_NAMES)
    unknown = [n for n in chosen if n not in TOOL_CLASSES]
    if unknown:
        raise ConfigError(f"unknown tool {unknown[0]!r}",
                          hint=f"tools are: {', '.join(TOOL_NAMES)}")
    return [TOOL_CLASSES[n]() for n in chosen]


@functools.cache
def _parameters(params: type[BaseModel]) -> dict[str, Any]:
    """A tool's compact parameter schema, made once per class (a trial's harness fingerprint
    asks for every spec; pydantic's schema generation was most of a scripted trial's time)."""
    return compact_schema(params.model_json_schema())


class WorldToolbox:
    """The :class:`~slmbench.agents.tools.base.Toolbox` of one trial."""

    def __init__(self, world: World, tools: Iterable[str | Tool] | None = None,
                 fault_plan: FaultPlan | None = None) -> None:
        self.world = world
        items = list(tools) if tools is not None else list(TOOL_NAMES)
        names = [t for t in items if isinstance(t, str)]
        built = iter(make_tools(names))
        self.tools: dict[str, Tool] = {}
        for t in items:
            tool = next(built) if isinstance(t, str) else t
            self.tools[tool.name] = tool
        self.fault_plan = fault_plan
        self._faults = FaultInjector(fault_plan)
        self.calls: list[ToolCall] = []

    @property
    def faults_injected(self) -> int:
        return sum(1 for c in self.calls if c.fault)

    def specs(self) -> list[ToolSpec]:
        return [ToolSpec(name=t.name, description=t.description,
                         parameters=copy.deepcopy(_parameters(t.Params)))
                for t in self.tools.values()]

    def call(self, name: str, arguments: dict[str, Any]) -> ToolResult:
        args = arguments if isinstance(arguments, dict) else {}
        result = self._call(name, arguments)
        self.calls.append(ToolCall(name=name, arguments=args, ok=result.ok,
                                   fault=result.injected_fault, observation=result.observation))
        return result

    def _call(self, name: str, arguments: Any) -> ToolResult:
        tool = self.tools.get(name)
        if tool is None:
            return ToolResult(ok=False, observation=(
                f"error: unknown tool {name!r}; available tools: {', '.join(self.tools)}"))
        if not isinstance(arguments, dict):
            return ToolResult(ok=False, observation=(
                f"error: arguments for {name} must be a JSON object, "
                f"not {type(arguments).__name__}"))
        try:
            params = tool.Params.model_validate(arguments)
        except ValidationError as err:
            return ToolResult(ok=False, observation=(
                f"error: invalid arguments for {name}: {summarize_validation(err)}"))
        fault = self._faults.next_call(name)
        if fault is not None and fault not in RUNS_REAL_CALL:
            return faulted_result(fault, name, None)
        real = self._run(tool, params)
        if real.environment:
            return ToolResult(ok=False, observation=f"error: {real.payload['error']}",
                              environment_error=True)
        if fault is not None:
            return faulted_result(fault, name, real)
        text = render(real.payload) if real.ok else f"error: {real.payload['error']}"
        return ToolResult(ok=real.ok, observation=text)

    def _run(self, tool: Tool, params: BaseModel) -> RealOutcome:
        try:
            return RealOutcome(True, tool.run(self.world, params))
        except ToolError as err:
            return RealOutcome(False, {"error": str(err)})
        except SlmbenchError as err:
            hint = f" ({err.hint})" if err.hint else ""
            return RealOutcome(False, {"error": f"{tool.name} is unavailable: {err}{hint}"},
                               environment=True)
        except Exception as err:  # a bug in a tool must not end the trial
            return RealOutcome(False, {"error": (
                f"internal error in {tool.name}: {type(err).__name__}: {err}")})
