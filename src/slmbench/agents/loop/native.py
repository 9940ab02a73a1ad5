"""The native tool-calling scaffold: the backend's own ``tools=`` interface.

The same :class:`~slmbench.agents.loop.settings.LoopSettings` (budgets, seeds) and outcomes as
:func:`~slmbench.agents.loop.react.run_react`, but the model receives the tools as
OpenAI-style function specs and returns structured :attr:`Completion.tool_calls`; each
result goes back as a ``Message(role="tool", tool_call_id=...)``. Every call of a response
runs, in order, and is recorded as its own step; ``max_steps`` bounds model calls.

A response with no tool call is the final answer (a ``Final Answer:`` prefix,
if the model writes one, is removed). An empty response with no tool call is
unreadable: fed back once, the second in a row is a ``format_failure``. Loops
are the same text and calls three times. A leading or headless ``<think>`` block is the
step's reasoning, never part of the final answer. A reply cut by the token cap with no tool
call is ``truncated``: a native reply has no end marker, so a cut one is not known to be an
answer.
"""

from __future__ import annotations

import json

from slmbench.agents.loop.parse import parse_action
from slmbench.agents.loop.react import LOOP_REPEATS, Run, reply_of
from slmbench.agents.loop.settings import AgentResult, LoopSettings
from slmbench.agents.records import Action, Outcome
from slmbench.agents.tools.base import Toolbox
from slmbench.core.errors import ConfigError
from slmbench.models.base import Model
from slmbench.models.records import Completion, Message, ToolCall

__all__ = ["NATIVE_SYSTEM_PROMPT", "run_native"]

# Neutral like the ReAct prompts (issue #15): no advice on errors, retries or refusals.
NATIVE_SYSTEM_PROMPT = (
    "You answer questions with the tools you are given. You know nothing about this company "
    "or the world yourself: every answer must come from a tool result. A reply without a "
    "tool call is your final answer: short and exact."
)
EMPTY_FEEDBACK = ("Your reply was empty. Call one of the tools, or reply with the final "
                  "answer as plain text.")


def _signature(completion: Completion) -> str:
    calls = [(c.name, c.arguments) for c in completion.tool_calls]
    return json.dumps([completion.text.strip(), calls], sort_keys=True, default=str)


def _final_answer(text: str) -> str:
    action = parse_action(text)
    return action.answer if action.kind == "final" and action.answer else text.strip()


def run_native(model: Model, toolbox: Toolbox, instruction: str,
               settings: LoopSettings = LoopSettings()) -> AgentResult:
    """Run the native tool-calling loop; raise ConfigError if the backend has none."""
    if not model.supports_native_tools:
        raise ConfigError(f"{model.spec} has no native tool calling",
                          "use the react scaffold (--scaffold react) with this model")
    tools = [spec.openai_format() for spec in toolbox.specs()]
    run = Run("native", settings)
    run.messages = [Message(role="system",
                            content=settings.system_prompt or NATIVE_SYSTEM_PROMPT),
                    Message(role="user", content=instruction)]
    for index, completion in run.completions(model, tools=tools):
        raw = completion.text
        reply = reply_of(completion)
        calls = tuple(c if c.id else ToolCall(name=c.name, arguments=c.arguments,
                                              id=f"call_{index}_{j}")
                      for j, c in enumerate(completion.tool_calls))
        run.messages.append(Message(role="assistant", content=reply.strip(), tool_calls=calls))
        if not calls and completion.finish_reason == "length":
            return run.truncated(raw, _action(calls, reply), completion)
        if run.repeated(_signature(completion)):
            return run.end(raw, _action(calls, reply), completion, Outcome.LOOP,
                           error=f"the same response {LOOP_REPEATS} times")
        if not calls:
            action = _action(calls, reply)
            if action.kind == "final":
                return run.end(raw, action, completion, None, final_answer=action.answer)
            if (ended := run.unreadable(raw, action, completion, EMPTY_FEEDBACK)) is not None:
                return ended
            continue
        run.unreadable_in_a_row = 0
        for j, call in enumerate(calls):
            action = Action(kind="tool", name=call.name, arguments=call.arguments,
                            format="native")
            step_completion = completion if j == 0 else None  # tokens counted once
            result = run.run_tool(toolbox, raw, action, step_completion)
            if isinstance(result, AgentResult):
                return result
            run.messages.append(Message(role="tool", content=result.observation,
                                        tool_call_id=call.id, name=call.name))
    return run.out_of_steps()


def _action(calls: tuple[ToolCall, ...], text: str) -> Action:
    if calls:
        return Action(kind="tool", name=calls[0].name, arguments=calls[0].arguments,
                      format="native")
    if not text.strip():
        return Action(kind="invalid", format="native",
                      error="an empty reply with no tool call")
    return Action(kind="final", answer=_final_answer(text), format="native")
