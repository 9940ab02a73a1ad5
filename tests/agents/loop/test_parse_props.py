"""Properties of the action parser: it never raises, and canonical actions round-trip."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from slmbench.agents.loop.parse import format_action, parse_action
from slmbench.agents.records import Action
from slmbench.agents.tools.base import ToolSpec

tool_names = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,24}", fullmatch=True).filter(
    lambda n: n.lower() not in {"final_answer", "finalanswer"})

json_scalars = (st.none() | st.booleans() | st.integers()
                | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=30))
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner,
                                                                max_size=4),
    max_leaves=12,
)
argument_dicts = st.dictionaries(st.text(max_size=12), json_values, max_size=5)

# A final answer is one stripped, non-empty line (the canonical form is a single line).
answers = st.text(st.characters(exclude_categories=["Cc", "Zl", "Zp"]), min_size=1,
                  max_size=60).map(str.strip).filter(bool)

# Text that looks a little like model output: fragments of every syntax, mixed with noise.
fragments = st.sampled_from([
    "{", "}", "[", "]", "(", ")", '"', "'", "```", "```json\n", "<think>", "</think>",
    "<tool_call>", "</tool_call>", "<tool>", "</tool>", "<args>", "</args>", "<function=x>",
    "Action:", "Action Input:", "Final Answer:", "Observation:", '"name":', '"arguments":',
    "fact_lookup", "(key=", "\\", "\n", ":", ",", "null", "true", "1e309", "**",
    '"call":', '"code":', '"key":', "'''", '"function":',
])
model_like_text = st.lists(fragments | st.text(max_size=8), max_size=40).map("".join)


@settings(max_examples=400)
@given(st.text())
def test_never_raises_on_arbitrary_text(text: str) -> None:
    action = parse_action(text, tool_names=["fact_lookup"])
    assert isinstance(action, Action)
    assert (action.kind == "invalid") == (action.error is not None)


@settings(max_examples=400)
@given(model_like_text)
def test_never_raises_on_syntax_soup(text: str) -> None:
    action = parse_action(text, tool_names=["fact_lookup", "x"])
    assert action.kind in {"tool", "final", "invalid"}
    if action.kind == "tool":
        assert action.name and isinstance(action.arguments, dict)
        assert json.loads(json.dumps(action.arguments)) == action.arguments  # plain JSON
    if action.kind == "final":
        assert action.answer and action.answer == action.answer.strip()


OFFERED = [ToolSpec(name=n, description="", parameters={
    "type": "object", "properties": {k: {"type": "string"} for k in keys}, "required": keys[:1]})
    for n, keys in (("fact_lookup", ["key"]), ("code_interpreter", ["code"]),
                    ("x", ["key", "name"]))]


@settings(max_examples=400)
@given(model_like_text | st.text())
def test_never_raises_with_offered_tools(text: str) -> None:
    action = parse_action(text, tools=OFFERED)
    assert (action.kind == "invalid") == (action.error is not None)
    if action.kind == "tool":
        assert action.name and json.loads(json.dumps(action.arguments)) == action.arguments


@given(tool_names, argument_dicts)
def test_tool_calls_round_trip(name: str, arguments: dict[str, Any]) -> None:
    action = Action(kind="tool", name=name, arguments=arguments, format="json")
    assert parse_action(format_action(action), tool_names=[name]) == action


@given(answers)
def test_final_answers_round_trip(answer: str) -> None:
    action = Action(kind="final", answer=answer, format="final")
    assert parse_action(format_action(action)) == action


@given(tool_names, argument_dicts, st.sampled_from(["Thought: let me check.\n", "Sure!\n", ""]))
def test_fenced_and_prefixed_tool_calls_read_the_same_call(
    name: str, arguments: dict[str, Any], prose: str
) -> None:
    body = json.dumps({"name": name, "arguments": arguments})
    for text in (f"{prose}{body}", f"{prose}```json\n{body}\n```",
                 f"{prose}<tool_call>{body}</tool_call>"):
        action = parse_action(text)
        assert (action.kind, action.name, action.arguments) == ("tool", name, arguments)
