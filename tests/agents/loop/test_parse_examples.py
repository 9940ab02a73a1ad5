"""Every response shape the parser accepts, written the way small models write them."""

from __future__ import annotations

import pytest

from slmbench.agents.loop.parse import format_action, parse_action
from slmbench.agents.records import Action
from slmbench.agents.tools.base import ToolSpec

NAMES = ["fact_lookup", "web_search", "calculator"]

LOOKUP = {"key": "ceo"}


@pytest.mark.parametrize(
    ("text", "fmt"),
    [
        # Qwen2.5-Coder style: a bare JSON line, sometimes after a thought.
        ('{"name": "fact_lookup", "arguments": {"key": "ceo"}}', "json"),
        ('Thought: I need the CEO.\n{"name": "fact_lookup", "arguments": {"key": "ceo"}}', "json"),
        # Fenced JSON with prose around it.
        ('To find out, I will look it up:\n```json\n{"name": "fact_lookup",\n'
         ' "arguments": {"key": "ceo"}}\n```\nThis returns the CEO.', "fenced_json"),
        ('```\n{"name": "fact_lookup", "arguments": {"key": "ceo"}}\n```', "fenced_json"),
        # Key aliases, arguments as a JSON string, OpenAI-style nesting, Python dicts.
        ('{"tool": "fact_lookup", "args": {"key": "ceo"}}', "json+alias"),
        ('{"tool_name": "fact_lookup", "parameters": {"key": "ceo"}}', "json+alias"),
        ('{"action": "fact_lookup", "action_input": {"key": "ceo"}}', "json+alias"),
        ('{"name": "fact_lookup", "arguments": "{\\"key\\": \\"ceo\\"}"}', "json"),
        ('{"type": "function", "function": {"name": "fact_lookup", '
         '"arguments": "{\\"key\\": \\"ceo\\"}"}}', "json+alias"),
        ("{'name': 'fact_lookup', 'arguments': {'key': 'ceo'}}", "json+python"),
        # LangChain-style lines.
        ('Thought: look it up\nAction: fact_lookup\nAction Input: {"key": "ceo"}', "action_lines"),
        ('Action: fact_lookup\nAction Input: ```json\n{"key": "ceo"}\n```', "action_lines"),
        # XML-ish tags.
        ('<tool_call>\n{"name": "fact_lookup", "arguments": {"key": "ceo"}}\n</tool_call>', "xml"),
        ('<tool_call>{"name": "fact_lookup", "arguments": {"key": "ceo"}}', "xml"),  # cut at stop
        ('<tool>fact_lookup</tool>\n<args>{"key": "ceo"}</args>', "xml"),
        ('<function=fact_lookup>{"key": "ceo"}</function>', "xml"),
        # Python-style calls to a known tool.
        ('fact_lookup(key="ceo")', "call"),
        ("Thought: easy.\nfact_lookup(key='ceo')", "call"),
        # A <think> preamble (Qwen3 / DeepSeek-R1 style), with braces inside that must not count.
        ('<think>\nThe user wants {the CEO}. Use fact_lookup.\n</think>\n'
         '{"name": "fact_lookup", "arguments": {"key": "ceo"}}', "json"),
    ],
)
def test_reads_every_tool_call_shape(text: str, fmt: str) -> None:
    action = parse_action(text, tool_names=NAMES)
    assert action == Action(kind="tool", name="fact_lookup", arguments=LOOKUP, format=fmt)


@pytest.mark.parametrize(
    "text",
    [
        "Final Answer: Dana Reyes",
        "final answer: Dana Reyes",
        "Thought: I know the answer.\nFinal answer: Dana Reyes",
        "**Final Answer:** Dana Reyes",
        "<think>The observation said Dana Reyes.</think>\nFinal Answer: Dana Reyes",
        "<think>The observation said Dana Reyes.\nFinal Answer: Dana Reyes",  # never closed
        "Final Answer: Dana Reyes\nObservation: the user is happy",  # an imagined next turn
        '{"action": "Final Answer", "action_input": "Dana Reyes"}',
        "Action: Final Answer\nAction Input: Dana Reyes",
    ],
)
def test_reads_final_answers(text: str) -> None:
    action = parse_action(text, tool_names=NAMES)
    assert action.kind == "final"
    assert action.answer == "Dana Reyes"


def test_multiline_final_answer_is_kept_whole() -> None:
    assert parse_action("Final Answer: 1. eggs\n2. milk").answer == "1. eggs\n2. milk"


def test_first_in_text_wins_between_action_and_final_answer() -> None:
    call = '{"name": "fact_lookup", "arguments": {"key": "ceo"}}'
    assert parse_action(f"{call}\nFinal Answer: Dana").kind == "tool"
    final_first = parse_action(f"Final Answer: Dana\n{call}")
    assert final_first.kind == "final"
    assert final_first.answer is not None and final_first.answer.startswith("Dana")


def test_first_of_two_tool_calls_wins() -> None:
    text = ('{"name": "web_search", "arguments": {"query": "a"}}\n'
            '{"name": "fact_lookup", "arguments": {"key": "b"}}')
    assert parse_action(text).name == "web_search"


def test_calls_only_count_for_known_tools_when_names_are_given() -> None:
    text = 'I could print(value="x") here.'
    assert parse_action(text, tool_names=NAMES).kind == "invalid"
    assert parse_action(text).name == "print"  # no list of names: any call is read


def test_python_tuples_become_json_lists() -> None:
    action = parse_action("{'name': 'calculator', 'arguments': {'xs': (1, 2)}}")
    assert action.arguments == {"xs": [1, 2]}


def test_call_with_json_literals_and_no_arguments() -> None:
    action = parse_action("calculator(expression='2+2', exact=true, note=null)", tool_names=NAMES)
    assert action.arguments == {"expression": "2+2", "exact": True, "note": None}
    assert parse_action("web_search()", tool_names=NAMES).arguments == {}


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("", "empty"),
        ("   \n ", "empty"),
        ("I am not sure what to do.", "no tool call or final answer"),
        ("<think>Let me think about this carefully and", "unfinished <think>"),
        ('{"name": "fact_lookup", "arguments": {"key": "ce', "cut off"),
        ('{"query": "ceo"}', "no 'name' key"),
        ('{"name": "fact_lookup", "arguments": ["ceo"]}', "must be a JSON object"),
        ("Action: fact_lookup\nAction Input: the ceo", "not a JSON object"),
        ('fact_lookup("ceo")', "key=value"),
        ("Final Answer:   ", "final answer is empty"),
        ('{"name": "", "arguments": {}}', "non-empty"),
        # Seen from Qwen2.5-Coder-0.5B: a Python set where a value belongs.
        ('{"name": "web_search", "arguments": {"query": "x", "results": {"unexpected"}}}',
         "malformed"),
        ("calculator(expression={1, 2})", "literal values"),
        ('{"name": "calculator", "arguments": {"x": NaN}}', "malformed"),
    ],
)
def test_invalid_responses_say_why(text: str, reason: str) -> None:
    action = parse_action(text, tool_names=NAMES)
    assert action.kind == "invalid"
    assert action.error is not None and reason in action.error


def test_invalid_reason_tells_the_model_the_expected_shape() -> None:
    error = parse_action("hmm").error
    assert error is not None and '{"name": ..., "arguments": {...}}' in error
    assert "Final Answer:" in error


def test_format_action_writes_the_canonical_forms() -> None:
    call = Action(kind="tool", name="fact_lookup", arguments={"key": "ceo"})
    assert format_action(call) == '{"name": "fact_lookup", "arguments": {"key": "ceo"}}'
    assert format_action(Action(kind="final", answer="Paris")) == "Final Answer: Paris"
    with pytest.raises(ValueError, match="no canonical form"):
        format_action(Action(kind="invalid", error="x"))


# -- shapes from issue #15: each one read, and its action written back canonically ----------

CODE = ToolSpec(name="code_interpreter", description="Run Python.",
                parameters={"type": "object", "properties": {"code": {"type": "string"}},
                            "required": ["code"]})
LOOKUP_SPEC = ToolSpec(name="fact_lookup", description="Look up a fact.",
                       parameters={"type": "object", "properties": {"key": {"type": "string"}},
                                   "required": ["key"]})
SEARCH = ToolSpec(name="web_search", description="Search.",
                  parameters={"type": "object", "properties": {"query": {"type": "string"},
                                                               "key": {"type": "string"}},
                              "required": ["query"]})
OFFERED = [CODE, LOOKUP_SPEC, SEARCH]


@pytest.mark.parametrize(
    ("text", "name", "arguments", "fmt"),
    [
        # Qwen2.5-Coder-0.5B on arithmetic word problems: the tool under "call", in a fence.
        ('```json\n{"call": "code_interpreter", "arguments": {"code": "print(19 * 31)"}}\n```',
         "code_interpreter", {"code": "print(19 * 31)"}, "fenced_json+alias"),
        ('{"call": "code_interpreter", "arguments": {"code": "print(1)"}}',
         "code_interpreter", {"code": "print(1)"}, "json+alias"),
        ('{"function": "fact_lookup", "arguments": {"key": "ceo"}}',
         "fact_lookup", LOOKUP, "json+alias"),
        ('{"tool": "fact_lookup", "arguments": {"key": "ceo"}}', "fact_lookup", LOOKUP,
         "json+alias"),
        ('{"action": "fact_lookup", "arguments": {"key": "ceo"}}', "fact_lookup", LOOKUP,
         "json+alias"),
        ('{"call": {"name": "fact_lookup", "arguments": {"key": "ceo"}}}', "fact_lookup", LOOKUP,
         "json+alias"),
        # Arguments only: exactly one offered tool has the parameter "code".
        ('{"code": "print(2 + 2)"}', "code_interpreter", {"code": "print(2 + 2)"},
         "json+args_only"),
        ('```json\n{"code": "x = 1"}\n```', "code_interpreter", {"code": "x = 1"},
         "fenced_json+args_only"),
        ('{"query": "ceo"}', "web_search", {"query": "ceo"}, "json+args_only"),
        # Python-style strings: single and triple quotes, and raw newlines inside a JSON string.
        ("{'name': 'code_interpreter', 'arguments': {'code': '''x = 2\nprint(x)'''}}",
         "code_interpreter", {"code": "x = 2\nprint(x)"}, "json+python"),
        ('{"name": "code_interpreter", "arguments": {"code": "x = 2\nprint(x)"}}',
         "code_interpreter", {"code": "x = 2\nprint(x)"}, "json"),
        ('```python\n{"name": "fact_lookup", "arguments": {"key": "ceo"}}\n```',
         "fact_lookup", LOOKUP, "fenced_json"),
    ],
)
def test_reads_each_unambiguous_shape_and_round_trips(text: str, name: str,
                                                      arguments: dict[str, object],
                                                      fmt: str) -> None:
    action = parse_action(text, tools=OFFERED)
    assert action == Action(kind="tool", name=name, arguments=arguments, format=fmt)
    assert not action.strict or fmt == "json"
    again = parse_action(format_action(action), tools=OFFERED)
    assert again == action.model_copy(update={"format": "json"}) and again.strict


def test_an_arguments_only_object_is_read_only_when_exactly_one_tool_fits() -> None:
    # web_search also has "key" but requires "query": only fact_lookup fits {"key": ...}
    assert parse_action('{"key": "ceo"}', tools=OFFERED).name == "fact_lookup"
    twin = LOOKUP_SPEC.model_copy(update={"name": "fact_lookup_v2"})
    for text in ('{"key": "ceo"}',  # two tools take exactly "key"
                 '{"key": "ceo", "query": "x", "code": "1"}',  # no tool takes all three
                 '{"answer": 42}'):  # no tool has that parameter
        assert parse_action(text, tools=[*OFFERED, twin]).kind == "invalid", text


def test_arguments_only_objects_need_the_offered_tools() -> None:
    assert parse_action('{"code": "1"}', tool_names=["code_interpreter"]).kind == "invalid"


def test_a_name_that_is_an_argument_is_read_as_the_argument() -> None:
    person = ToolSpec(name="directory", description="Find a person.",
                      parameters={"type": "object", "properties": {"name": {"type": "string"}},
                                  "required": ["name"]})
    action = parse_action('{"name": "Dana Reyes"}', tools=[person, CODE])
    assert (action.name, action.arguments) == ("directory", {"name": "Dana Reyes"})
    hallucinated = parse_action('{"name": "calculator", "arguments": {"x": 1}}', tools=[CODE])
    assert hallucinated.name == "calculator"  # an unknown tool stays an (unknown) tool call
