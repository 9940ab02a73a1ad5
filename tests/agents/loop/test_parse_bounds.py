"""The parser's bounds: nesting depth, work linear in the response, and one reading of each
final-answer spelling (issue #21).

Work is measured as the number of Python lines the parser module executes (``sys.settrace``),
never as time.
"""

from __future__ import annotations

import itertools
import json
import sys
from collections.abc import Callable
from types import FrameType

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from slmbench.agents.loop import parse
from slmbench.agents.loop.parse import MAX_DEPTH, WORK_BASE, WORK_PER_CHAR, parse_action
from slmbench.agents.records import Action

NAMES = ["fact_lookup", "x"]


def lines_run(text: str, **kwargs: object) -> tuple[Action, int]:
    """parse_action(text) and how many lines of the parser module it executed."""
    count = 0
    here = parse.__file__

    def local(frame: object, event: str, arg: object) -> object:
        nonlocal count
        if event == "line":
            count += 1
        return local

    def tracer(frame: FrameType, event: str, arg: object) -> object:
        return local if frame.f_code.co_filename == here else None

    sys.settrace(tracer)
    try:
        action = parse_action(text, **kwargs)  # type: ignore[arg-type]
    finally:
        sys.settrace(None)
    return action, count


def nested(depth: int) -> str:
    """A valid tool call whose arguments hold lists ``depth`` brackets deep in all."""
    inner = "[" * (depth - 2) + "1" + "]" * (depth - 2)
    return '{"name": "fact_lookup", "arguments": {"key": ' + inner + "}}"


# -- depth ---------------------------------------------------------------------------------


def test_json_at_the_depth_bound_is_read() -> None:
    action = parse_action(nested(MAX_DEPTH), tool_names=NAMES)
    assert action.kind == "tool" and action.name == "fact_lookup"


@pytest.mark.parametrize("depth", [MAX_DEPTH + 1, 500, 5000])
def test_deeper_json_is_refused_with_its_own_reason(depth: int) -> None:
    action = parse_action(nested(depth), tool_names=NAMES)
    assert action.kind == "invalid" and action.error is not None
    assert f"nested more than {MAX_DEPTH} levels deep" in action.error
    assert "unreadable" not in action.error


DEEP = "[" * 600 + "]" * 600


@pytest.mark.parametrize("text", [
    f"fact_lookup(key={DEEP})",
    f"Action: fact_lookup\nAction Input: {{\"key\": {DEEP}}}",
    json.dumps({"name": "fact_lookup", "arguments": json.dumps({"key": json.loads(
        "[" * 40 + "]" * 40)})}),  # the arguments as a JSON string, encoded twice
    f"<tool>fact_lookup</tool><args>{{\"key\": {DEEP}}}</args>",
    f"<tool_call>{{\"name\": \"fact_lookup\", \"arguments\": {{\"key\": {DEEP}}}}}</tool_call>",
])
def test_every_shape_refuses_deep_nesting_by_name(text: str) -> None:
    action = parse_action(text, tool_names=NAMES)
    assert action.kind == "invalid" and action.error is not None
    assert "nested more than" in action.error, action.error


# -- linear work ---------------------------------------------------------------------------

# Inputs that were quadratic (or worse) before: runs of unclosed brackets and calls, tags and
# Action lines that never close, whitespace runs inside fences and tags, deep nesting.
FAMILIES: dict[str, Callable[[int], str]] = {
    "unclosed braces": lambda n: "{" * n,
    "unclosed calls": lambda n: "fact_lookup(" * (n // 12),
    "any-name calls": lambda n: "f(" * (n // 2),
    "balanced nesting": lambda n: "{" * (n // 2) + "}" * (n // 2),
    "nested objects": lambda n: '{"a": {"b": {"c": 1}}} ' * (n // 23),
    "open args tags": lambda n: "<tool>x</tool><args>" * (n // 20),
    "open tool_call tags": lambda n: "<tool_call>{" * (n // 12),
    "Action lines": lambda n: "Action: x\nAction Input: ```\n" * (n // 28),
    "fence then spaces": lambda n: "```" + " " * n,
    "tag then spaces": lambda n: "<tool_call>x" + " " * n + "y",
    "Action then spaces": lambda n: "Action: a" + " " * n + "b",
    "quotes in braces": lambda n: "{'a': \"" * (n // 7),
}


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_work_grows_linearly_on_adversarial_inputs(family: str) -> None:
    make = FAMILIES[family]
    counts = [lines_run(make(n), tool_names=NAMES)[1] for n in (2000, 4000, 8000)]
    for small, large in itertools.pairwise(counts):
        assert large <= 2.3 * small, (family, counts)  # a doubling costs at most ~double
    action = parse_action(make(8000), tool_names=NAMES)
    assert "tangled" not in (action.error or ""), family  # linear without the budget


def test_an_action_after_a_long_unclosed_run_is_still_found() -> None:
    call = '{"name": "fact_lookup", "arguments": {"key": "ceo"}}'
    for prefix in ("{" * 20000, "fact_lookup(" * 2000, "<tool>x</tool><args>" * 1000):
        action = parse_action(prefix + call, tool_names=NAMES)
        assert (action.kind, action.name) == ("tool", "fact_lookup"), prefix[:30]


# Brackets inside quotes inside brackets, built so that no scan can be reused: the work
# budget is what keeps these linear; they are refused as tangled, never slow.
@pytest.mark.parametrize("text", ['{"' + "{\\'" * 4000, "{'" + '{\\"' * 4000])
def test_inputs_built_to_defeat_the_cache_are_refused_as_tangled(text: str) -> None:
    action, lines = lines_run(text, tool_names=NAMES)
    assert action.kind == "invalid" and "too tangled" in (action.error or "")
    assert lines <= LINES_PER_STEP * (WORK_PER_CHAR * len(text) + WORK_BASE)


LINES_PER_STEP = 8  # the most parser lines one charged step of work costs

fragments = st.sampled_from([
    "{", "}", "[", "]", "(", ")", '"', "'", "\\", "```", "\n", " ", "<tool_call>", "</tool_call>",
    "<args>", "<tool>x</tool>", "Action:", "Action Input:", "Final Answer:", '"name":', "x(",
    "fact_lookup(", ":", ",", "a",
])


@settings(max_examples=60, deadline=None)
@given(st.lists(fragments, min_size=1, max_size=12).map("".join), st.integers(1, 400))
def test_work_is_bounded_by_the_length_on_any_input(unit: str, times: int) -> None:
    text = unit * times
    _, lines = lines_run(text, tool_names=NAMES)
    assert lines <= LINES_PER_STEP * (WORK_PER_CHAR * len(text) + WORK_BASE)


# -- one reading of each final-answer spelling ---------------------------------------------

@pytest.mark.parametrize("names", [None, NAMES])
@pytest.mark.parametrize("text", [
    'final_answer("Dana Reyes")',
    "final_answer(answer='Dana Reyes')",
    '{"name": "final_answer", "arguments": {"answer": "Dana Reyes"}}',
    '{"name": "final_answer", "arguments": "Dana Reyes"}',
    "Action: Final Answer\nAction Input: Dana Reyes",
    'Action: final_answer\nAction Input: {"answer": "Dana Reyes"}',
    '<tool>final_answer</tool><args>{"answer": "Dana Reyes"}</args>',
    "<function=final_answer>Dana Reyes</function>",
    "Final Answer: Dana Reyes",
])
def test_every_spelling_of_a_final_answer_is_a_final_answer(text: str,
                                                            names: list[str] | None) -> None:
    action = parse_action(text, tool_names=names)
    assert (action.kind, action.answer) == ("final", "Dana Reyes")
    # only the line the protocol teaches counts as strict
    assert action.strict == (action.format == "final") == text.startswith("Final Answer:")


def test_final_answer_call_with_no_answer_says_why() -> None:
    for text in ("final_answer()", "final_answer('a', 'b')"):
        action = parse_action(text)
        assert action.kind == "invalid" and "one argument" in (action.error or "")


def test_an_empty_action_input_never_reads_the_next_line() -> None:
    final = parse_action("Action: Final Answer\nAction Input: \nObservation: 5")
    assert final.kind == "invalid" and "final answer is empty" in (final.error or "")
    tool = parse_action("Action: fact_lookup\nAction Input:\nObservation: 5", tool_names=NAMES)
    assert (tool.kind, tool.name, tool.arguments) == ("tool", "fact_lookup", {})


def test_an_action_input_ends_where_a_final_answer_would() -> None:
    via_lines = parse_action("Action: Final Answer\nAction Input: 1. eggs\n2. milk\nThought: ok")
    via_final = parse_action("Final Answer: 1. eggs\n2. milk\nThought: ok")
    assert via_lines.answer == via_final.answer == "1. eggs\n2. milk"
    multi = parse_action('Action: fact_lookup\nAction Input:\n{\n  "key": "ceo"\n}\n'
                         "Observation: x", tool_names=NAMES)
    assert multi.arguments == {"key": "ceo"}
