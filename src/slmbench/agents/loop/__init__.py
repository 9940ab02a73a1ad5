"""The agent: ReAct loop, action parser, native tool-calling scaffold.

``run_react`` / ``run_native`` take a model, a toolbox, an instruction and the
:class:`LoopSettings` both loops share (sampling, step and token caps, budgets) and
return an :class:`AgentResult`; ``parse_action`` reads one model response.
"""

from slmbench.agents.loop.native import run_native
from slmbench.agents.loop.parse import format_action, parse_action
from slmbench.agents.loop.prompts import build_system_prompt
from slmbench.agents.loop.react import run_react
from slmbench.agents.loop.settings import AgentResult, LoopSettings

__all__ = [
    "AgentResult",
    "LoopSettings",
    "build_system_prompt",
    "format_action",
    "parse_action",
    "run_native",
    "run_react",
]
