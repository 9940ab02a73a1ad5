"""The ReAct loop's wording: the prompt sets (``neutral``, the harness's; ``legacy``, the wording
before issue #15, kept only to measure the change) and the system prompt built from a toolbox's
specs. Why the wording is what it is: :mod:`slmbench.agents.loop.react`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict

from slmbench.agents.tools.base import ToolSpec

__all__ = ["DEFAULT_PROMPTS", "PROMPT_SETS", "Prompts", "build_system_prompt", "describe_tools",
           "example_call"]

PROTOCOL = """\
You answer questions by calling tools. You know nothing about this company or the world \
yourself: every answer must come from a tool result.

Tools:
{tools}

Each reply is exactly one of these two, at any step:
1. A tool call: one JSON object on one line, {"name": <tool>, "arguments": {...}}, like the \
examples above.
2. Final Answer: <the short, exact answer>"""


INVALID_FEEDBACK = "Observation: I could not read your reply: {error}."


# How a tool result is shown to the model: the result, then the question again (a
# reminder, no instruction: see the module docstring).
OBSERVATION = """\
Observation: {observation}

My question was: {instruction}"""


# A successful call made again is not run again (no second e-mail, no second booking).
REPEATED_CALL = """\
Observation: you already called {name} with exactly these arguments; its result is above \
and it was not run again.

My question was: {instruction}"""


class Prompts(BaseModel):
    """The wording of one ReAct prompt set: protocol, observation and feedback templates."""

    model_config = ConfigDict(frozen=True)

    protocol: str
    observation: str
    repeated_call: str
    invalid_feedback: str
    example_label: str


# ``legacy`` is the wording before issue #15, kept only to measure the change
# (docs/results/harness-validity.md): it tells the model after every result,
# errors included, to start with 'Final Answer:', and forbids a first reply
# that is not a tool call.
PROMPT_SETS: dict[str, Prompts] = {
    "neutral": Prompts(protocol=PROTOCOL, observation=OBSERVATION, repeated_call=REPEATED_CALL,
                       invalid_feedback=INVALID_FEEDBACK, example_label="example"),
    "legacy": Prompts(
        protocol=(
            "You answer questions by calling tools. You know nothing about this company or the "
            "world yourself: every answer must come from a tool result.\n\nTools:\n{tools}\n\n"
            "Each reply is exactly one of these two:\n"
            '1. A tool call: one JSON object on one line, like the "call" lines above.\n'
            "2. When a tool result contains the answer:\n"
            "Final Answer: <the short, exact answer>\n\nYour first reply is always a tool call."),
        observation=(
            "Observation: {observation}\n\nUsing this result, answer my question: {instruction}"
            "\nStart your reply with 'Final Answer:'. (If the result is not enough, call another "
            "tool instead.)"),
        repeated_call=(
            "Observation: you already called {name} with exactly these arguments; its result is "
            "above.\n\nUsing that result, answer my question: {instruction}\nStart your reply "
            "with 'Final Answer:'. (If it is not enough, call a different tool or change the "
            "arguments.)"),
        invalid_feedback=INVALID_FEEDBACK, example_label="call"),
}


DEFAULT_PROMPTS = "neutral"


def example_call(spec: ToolSpec) -> str:
    """A call of ``spec`` with its required arguments as ``<description>`` placeholders."""
    props = spec.parameters.get("properties", {})
    args = {}
    for key in spec.parameters.get("required", []):
        prop = props.get(key, {})
        args[key] = f"<{prop.get('description') or prop.get('type') or key}>"
    return json.dumps({"name": spec.name, "arguments": args})


def describe_tools(specs: Sequence[ToolSpec], label: str = "example") -> str:
    """Three lines per tool: name and description, JSON schema of the arguments, an example."""
    return "\n".join(
        f"- {s.name}: {s.description}\n  arguments (JSON schema): {json.dumps(s.parameters)}"
        f"\n  {label}: {example_call(s)}"
        for s in specs
    )


def build_system_prompt(specs: Sequence[ToolSpec], template: str | None = None,
                        prompts: str = DEFAULT_PROMPTS) -> str:
    """The ReAct system prompt of prompt set ``prompts``; ``{tools}`` becomes the tool list."""
    chosen = PROMPT_SETS[prompts]
    return (template or chosen.protocol).replace(
        "{tools}", describe_tools(specs, chosen.example_label))
