"""Where a reply's action is settled (``action_end``): a reply stopped there, while it is
being written, or cut there after it was, is read exactly as the whole reply."""

from __future__ import annotations

from collections.abc import Collection, Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from slmbench.agents.loop.parse import action_end, parse_action
from slmbench.agents.tools.base import ToolSpec

OFFERED = [ToolSpec(name=n, description="", parameters={
    "type": "object", "properties": {k: {"type": "string"} for k in keys}, "required": keys[:1]})
    for n, keys in (("fact_lookup", ["key"]), ("code_interpreter", ["code"]),
                    ("x", ["key", "name"]))]
CALL = '{"name": "fact_lookup", "arguments": {"key": "a"}}'

# Syntax soup as in test_parse_props, with whole actions mixed in so that many prefixes hold
# a settled one (the property is checked only where action_end answers).
fragments = st.sampled_from([
    "{", "}", "[", "]", "(", ")", '"', "'", "```", "```json\n", "<think>", "</think>",
    "<tool_call>", "</tool_call>", "<tool>", "</tool>", "<args>", "</args>", "<function=x>",
    "</function>", "Action:", "Action Input:", "Final Answer:", "Observation:", "Thought:",
    '"name":', '"arguments":', "fact_lookup", "(key=", "\\", "\n", ":", ",", "**", " ",
    '"key":', "'''", '"function":', CALL, CALL, 'fact_lookup(key="a")', "Final Answer: 42\n",
    "Action: fact_lookup\n", 'Action Input: {"key": "b"}', "\nThought: next\n", "```\n",
    "Action: x\n", "Action Input: b\n", "x(key=1)", '{"key": "c"}', "final_answer(\"y\")",
])
soup = st.lists(fragments | st.text(max_size=6), max_size=30).map("".join)
actions = st.sampled_from([CALL, "```json\n" + CALL + "\n```",
                           "<tool_call>" + CALL + "</tool_call>", 'fact_lookup(key="a")',
                           'Action: x\nAction Input: {"key": "d"}',
                           "Final Answer: 7\nObservation:", "Action: fact_lookup\nok"])
# ... and replies that write an action after a little soup, then go on
replies = soup | st.tuples(st.lists(fragments, max_size=4).map("".join), actions,
                           soup).map("".join)
readers: list[dict[str, Collection[str] | Sequence[ToolSpec] | None]] = [
    {}, {"tool_names": ["fact_lookup", "x"]}, {"tools": OFFERED}]


@pytest.mark.parametrize("reader", readers, ids=["no names", "names", "offered tools"])
@settings(max_examples=1000, deadline=None)
@given(text=replies, data=st.data())
def test_a_reply_stopped_where_its_action_is_settled_reads_as_the_whole_reply(
        reader: dict, text: str, data: st.DataObject) -> None:
    """Streaming: the reply so far is ``text[:k]``; if its action is settled at ``end``, the
    whole reply (whatever the model would have written after) reads as ``text[:end]``, and
    the whole reply's own end is the same (so a stop while writing and a cut after it give
    one text)."""
    k = data.draw(st.integers(0, len(text)))
    end = action_end(text[:k], **reader)
    if end is None:
        return
    assert 0 < end <= k
    assert parse_action(text[:end], **reader) == parse_action(text, **reader)
    assert parse_action(text[:end], **reader).kind != "invalid"
    assert action_end(text, **reader) == end


@pytest.mark.parametrize(("reply", "settled"), [
    (CALL + "\nObservation: the key is a", CALL),
    ("Thought: look it up\n" + CALL + " and then", "Thought: look it up\n" + CALL),
    ("```json\n" + CALL + "\n```\nI called it.", "```json\n" + CALL + "\n```"),
    ("<tool_call>\n" + CALL + "\n</tool_call>\n<tool_call>", "<tool_call>\n" + CALL
     + "\n</tool_call>"),
    ('Action: fact_lookup\nAction Input: {"key": "a"}\nObservation: a',
     'Action: fact_lookup\nAction Input: {"key": "a"}'),
    ("Action: Final Answer\nAction Input: a\nThought: then", "Action: Final Answer\n"
     "Action Input: a\n"),
    ("Final Answer: 42\nThought: I could check", "Final Answer: 42\n"),
    ('fact_lookup(key="a") gives', 'fact_lookup(key="a")'),
    ("<think>maybe " + CALL + "</think>" + CALL + "!", "<think>maybe " + CALL + "</think>"
     + CALL),
])
def test_a_complete_action_is_settled_at_its_end(reply: str, settled: str) -> None:
    assert action_end(reply, tool_names=["fact_lookup"]) == len(settled)


@pytest.mark.parametrize("reply", [
    "Final Answer: 42",  # the answer may go on: only a later label, or the end, ends it
    '{"name": "fact_lookup", "arguments": {"key": "a"}',  # not closed yet
    "```json\n" + CALL,  # the fence is open: its closing makes it the action read
    "<tool_call>" + CALL,  # so is the tag
    "<think>" + CALL,  # a closing </think> would make this reasoning
    "Action: fact_lookup\nAction In",  # the label may still come
    "Action: fact_lookup\nAction Input: a",  # a text input runs to the next label
    "{ then " + CALL,  # an open object before the action could close around it
    "",
])
def test_an_action_that_more_text_could_change_is_not_settled(reply: str) -> None:
    assert action_end(reply, tool_names=["fact_lookup"]) is None


def test_an_unclosed_call_of_any_name_keeps_the_action_open_only_without_names() -> None:
    reply = "lookup(" + CALL
    assert action_end(reply) is None  # without names, lookup(...) could become the call
    assert action_end(reply, tool_names=["fact_lookup"]) == len(reply)  # not a known tool
