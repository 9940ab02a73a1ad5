"""Python a model wrote is parsed without Python's warnings about its literals.

An invalid escape sequence such as ``"\\{"`` in a model's tool call or code block is the
model's writing: it must neither print a warning mid-run (a ``SyntaxWarning`` from Python
3.12, shown by default) nor, under ``-W error``, turn text that parses into a failure.
"""

from __future__ import annotations

import warnings

import pytest

from slmbench.agents.humaneval import sanitize
from slmbench.agents.loop.parse import parse_action
from slmbench.agents.tools.code import repl_source

BAD_ESCAPE = "'a \\{ b'"  # the Python literal 'a \{ b': an invalid escape sequence


@pytest.fixture
def every_warning_an_error():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield


def test_the_literal_does_warn_when_parsed_plainly(every_warning_an_error):
    # the premise: without the guard, parsing this literal raises under -W error
    import ast
    with pytest.raises(SyntaxError):
        ast.parse(f"x = {BAD_ESCAPE}")


def test_a_call_with_a_bad_escape_parses_silently(every_warning_an_error):
    action = parse_action(f"search(query={BAD_ESCAPE})", tool_names={"search"})
    assert action.kind == "tool"
    assert action.arguments == {"query": "a \\{ b"}


def test_a_python_dict_with_a_bad_escape_parses_silently(every_warning_an_error):
    action = parse_action(f"{{'name': 'search', 'arguments': {{'query': {BAD_ESCAPE}}}}}")
    assert action.kind == "tool"
    assert action.arguments == {"query": "a \\{ b"}
    assert "+python" in action.format


def test_repl_code_with_a_bad_escape_is_rewritten_silently(every_warning_an_error):
    source = repl_source(f"s = {BAD_ESCAPE}\nlen(s)")
    assert "__slmbench_value__ = (len(s))" in source  # the last expression is shown


def test_a_humaneval_reply_with_a_bad_escape_is_read_silently(every_warning_an_error):
    reply = f"```python\ndef f():\n    return {BAD_ESCAPE}\n```"
    found = sanitize(reply, "f")
    assert found.defines_entry
    assert "\\{" in found.code
