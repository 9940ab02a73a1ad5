"""Read one agent action out of a model's free-text response.

Small models write tool calls in many shapes. :func:`parse_action` accepts the
reasonable ones and returns an :class:`~slmbench.agents.records.Action`:

* a final answer line: ``Final Answer: ...`` (any case, optionally bold);
  the answer is everything after the colon, stripped;
* a JSON object, bare or in a ``` / ```json fence, naming the tool under
  ``name`` / ``tool`` / ``tool_name`` / ``action`` / ``call`` / ``function``
  (a string), or in a nested ``function`` / ``call`` / ``tool_call`` object,
  with its arguments under ``arguments`` / ``args`` / ``parameters`` /
  ``action_input`` / ``input`` — an object, or a JSON string holding one;
  Python-style dicts and strings (single or triple quotes) and raw newlines
  inside strings are read too;
* an *arguments-only* object, e.g. ``{"code": "..."}``, when the offered
  tools are given (``tools``) and exactly one of them accepts those keys (they
  are all its parameters and include every required one);
* ``Action: NAME`` followed by ``Action Input: {json}``;
* XML-ish tags: ``<tool_call>{json}</tool_call>``,
  ``<tool>NAME</tool><args>{json}</args>`` and ``<function=NAME>{json}</function>``;
* a call ``NAME(key=value, ...)`` with Python-literal values — only for the
  known tool names when ``tool_names`` is given.

A final answer ends before a later ``Thought:`` / ``Action:`` / ``Observation:``
line (a model imagining the next turn). A leading ``<think>...</think>`` block
is dropped first (an unclosed leading ``<think>`` tag is dropped and the rest
is read). An action named "Final Answer" (the LangChain convention) is a final
answer.

**Precedence:** when a response holds several actions, or an action and a
final answer, the one that *starts first in the text* wins: it is what the
model committed to before it went on (typically to imagine an observation).

``Action.format`` says which rule read the action: ``json``, ``fenced_json``,
``xml``, ``action_lines``, ``call`` or ``final``, with ``+alias`` (the name or
arguments under another key, or nested), ``+python`` (a Python literal, not
JSON) and ``+args_only`` appended for a JSON object read by a tolerant rule.
The *strict* grammar the protocol teaches is ``json`` and ``final`` only
(``Action.strict``).

Anything else gives ``Action(kind="invalid", error=<reason>)``; the reason is
worded so it can be shown to the model. :func:`parse_action` never raises.
:func:`format_action` writes the canonical form (bare JSON for a tool call,
``Final Answer: ...`` for an answer) that :func:`parse_action` reads back.
"""

from __future__ import annotations

import ast
import json
import math
import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any

from slmbench.agents.records import Action
from slmbench.agents.tools.base import ToolSpec

__all__ = ["format_action", "parse_action"]

_NAME_KEYS = ("name", "tool", "tool_name", "action", "function_name", "call", "function")
_ARG_KEYS = ("arguments", "args", "parameters", "action_input", "input", "params")
_WRAPPER_KEYS = ("function", "tool_call", "function_call", "call", "action")
_FINAL_NAMES = frozenset({"final answer", "final_answer", "finalanswer"})

_THINK_BLOCK = re.compile(r"\A\s*<think>.*?</think>", re.DOTALL | re.IGNORECASE)
_THINK_OPEN = re.compile(r"\A\s*<think>", re.IGNORECASE)
_FINAL = re.compile(
    r"^[ \t]*(?P<bold>\*\*)?final[ _]answer(?(bold)(?:\*\*)?)[ \t]*:(?(bold)(?:[ \t]*\*\*)?)",
    re.IGNORECASE | re.MULTILINE,
)
_CONTINUATION = re.compile(r"^[ \t]*(?:Thought|Action|Observation)[ \t]*:", re.MULTILINE)
_FENCE = re.compile(r"```[ \t]*(?:json|JSON|tool_call|python)?[ \t]*\n?(?P<body>.*?)```",
                    re.DOTALL)
_ACTION_LINE = re.compile(
    r"^[ \t]*\**Action\**[ \t]*:[ \t]*\**(?P<name>[A-Za-z_][\w.\- ]*?)\**[ \t]*$",
    re.IGNORECASE | re.MULTILINE,
)
_ACTION_INPUT = re.compile(r"\A\s*\**Action[ _]Input\**[ \t]*:[ \t]*", re.IGNORECASE)
_TOOL_CALL_TAG = re.compile(
    r"<(?P<tag>tool_call|function_call|tool_use)>\s*(?P<body>.*?)\s*(?:</(?P=tag)>|\Z)",
    re.DOTALL | re.IGNORECASE,
)
_NAME_ARGS_TAGS = re.compile(
    r"<(?P<nt>tool|tool_name|name|function)>\s*(?P<name>[^<>\s]+)\s*</(?P=nt)>\s*"
    r"<(?P<at>args|arguments|parameters|input)>\s*(?P<body>.*?)\s*</(?P=at)>",
    re.DOTALL | re.IGNORECASE,
)
_FUNCTION_EQ_TAG = re.compile(
    r"<function=(?P<name>[^>\s]+)>\s*(?P<body>.*?)\s*(?:</function>|\Z)", re.DOTALL
)
_CALL_START = re.compile(r"(?<![\w.])(?P<name>[A-Za-z_][\w.]*)\s*\(")
_JSON_WORDS = {"true": True, "false": False, "null": None}

_HOW = ('write one tool call as a JSON object {"name": ..., "arguments": {...}} '
        "or a line 'Final Answer: ...'")


@dataclass(frozen=True, slots=True)
class _Found:
    """A candidate action (or a near miss with a reason) at a position in the text."""

    pos: int
    action: Action | None = None
    reason: str | None = None


def _strip_think(text: str) -> tuple[str, bool]:
    """Drop a leading think block; report whether an unclosed ``<think>`` was dropped."""
    m = _THINK_BLOCK.match(text)
    if m:
        return text[m.end():], False
    m = _THINK_OPEN.match(text)
    if m:
        return text[m.end():], True
    return text, False


def _balanced_end(text: str, start: int) -> int | None:
    """Index just past the bracket group opening at ``text[start]``, or None if unclosed."""
    pairs = {"{": "}", "[": "]", "(": ")"}
    stack: list[str] = []
    quote: str | None = None
    i = start
    while i < len(text):
        ch = text[i]
        if quote:
            if ch == "\\":
                i += 2
                continue
            if ch == quote:
                quote = None
        elif ch in "\"'":
            quote = ch
        elif ch in pairs:
            stack.append(pairs[ch])
        elif stack and ch == stack[-1]:
            stack.pop()
            if not stack:
                return i + 1
        i += 1
    return None


def _as_json(value: Any) -> Any:
    """A Python literal as JSON types (tuples become lists); ValueError for sets, bytes..."""
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError("NaN and infinity are not JSON numbers")
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, list | tuple):
        return [_as_json(v) for v in value]
    if isinstance(value, dict) and all(isinstance(k, str) for k in value):
        return {k: _as_json(v) for k, v in value.items()}
    raise ValueError(f"a {type(value).__name__} is not a JSON value")


def _decode(span: str) -> tuple[Any, bool]:
    """Decode a JSON value (raw newlines in strings allowed), else a Python literal.

    Returns (value, True when it was read as a Python literal); ValueError when neither."""
    try:
        return _as_json(json.loads(span, strict=False)), False
    except ValueError:
        pass
    try:
        return _as_json(ast.literal_eval(span)), True
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError) as exc:
        raise ValueError(str(exc)) from exc


def _load_object(span: str) -> Any:
    """Decode a JSON (or Python-literal) value; raise ValueError when it is neither."""
    return _decode(span)[0]


def _arguments(raw: Any) -> dict[str, Any] | str:
    """Normalise an arguments value to a dict, or return the reason it is not one."""
    if raw is None:
        return {}
    if isinstance(raw, str):
        stripped = raw.strip()
        if not stripped:
            return {}
        try:
            raw = _load_object(stripped)
            if isinstance(raw, str):  # a JSON string holding the object, encoded twice
                raw = _load_object(raw)
        except ValueError:
            return "the arguments are a string, not a JSON object"
    if not isinstance(raw, dict):
        return f"the arguments must be a JSON object, not {type(raw).__name__}"
    if not all(isinstance(k, str) for k in raw):
        return "argument names must be strings"
    return raw


def _is_final_name(name: str) -> bool:
    return name.strip().lower() in _FINAL_NAMES


def _final(answer: str, fmt: str) -> Action | str:
    answer = answer.strip()
    if not answer:
        return "the final answer is empty"
    return Action(kind="final", answer=answer, format=fmt)


@dataclass(frozen=True, slots=True)
class _Offered:
    """The offered tools as the parser needs them: names, and parameters of each."""

    names: Collection[str] | None
    params: dict[str, tuple[frozenset[str], frozenset[str]]]  # name -> (accepted, required)

    def only_tool_accepting(self, keys: Collection[str]) -> str | None:
        """The one offered tool whose parameters are exactly fit by ``keys``, if one."""
        got = frozenset(keys)
        fits = [n for n, (accepted, required) in self.params.items()
                if got and got <= accepted and required <= got]
        return fits[0] if len(fits) == 1 else None


def _offered(tool_names: Collection[str] | None, tools: Sequence[ToolSpec] | None) -> _Offered:
    if tools is None:
        return _Offered(tool_names, {})
    params = {t.name: (frozenset(t.parameters.get("properties", {})),
                       frozenset(t.parameters.get("required", []))) for t in tools}
    names = set(params) | set(tool_names or ())
    return _Offered(names, params)


def _args_only(obj: dict[str, Any], fmt: str, offered: _Offered) -> Action | None:
    name = offered.only_tool_accepting(obj)
    if name is None:
        return None
    return Action(kind="tool", name=name, arguments=obj, format=f"{fmt}+args_only")


def _from_dict(obj: dict[str, Any], fmt: str, offered: _Offered,
               alias: bool = False) -> Action | str:
    """An action from a decoded JSON object, or the reason it is not one."""
    for key in _WRAPPER_KEYS:
        inner = obj.get(key)
        if isinstance(inner, dict) and any(k in inner for k in _NAME_KEYS):
            return _from_dict(inner, fmt, offered, alias=True)
    name_key = next((k for k in _NAME_KEYS if k in obj), None)
    if name_key is None:
        return (_args_only(obj, fmt, offered)
                or "a JSON object has no 'name' key naming the tool")
    name = obj[name_key]
    if not isinstance(name, str) or not name.strip():
        return "the tool name must be a non-empty string"
    if offered.names is not None and name.strip() not in offered.names \
            and not _is_final_name(name) and (found := _args_only(obj, fmt, offered)):
        return found  # e.g. {"name": "Dana"}: the argument of a tool, not a tool's name
    args_key = next((k for k in _ARG_KEYS if k in obj), None)
    raw_args = obj[args_key] if args_key else None
    if _is_final_name(name):
        if isinstance(raw_args, dict):
            raw_args = raw_args.get("answer", next(iter(raw_args.values()), ""))
        return _final("" if raw_args is None else str(raw_args), fmt)
    args = _arguments(raw_args)
    if isinstance(args, str):
        return f"tool {name.strip()!r}: {args}"
    if alias or name_key != "name" or args_key not in (None, "arguments"):
        fmt += "+alias"
    return Action(kind="tool", name=name.strip(), arguments=args, format=fmt)


def _json_at(text: str, start: int, fmt: str, offered: _Offered) -> Action | str:
    """Read the object opening at ``text[start]``: an action, or the reason it is none."""
    end = _balanced_end(text, start)
    if end is None:
        return "the JSON object is unterminated (was the response cut off?)"
    try:
        obj, python = _decode(text[start:end])
    except ValueError:
        return "the JSON object is malformed"
    if not isinstance(obj, dict):
        return "the braces hold no JSON object"
    result = _from_dict(obj, fmt, offered)
    if python and isinstance(result, Action):
        result = result.model_copy(update={"format": f"{result.format}+python"})
    return result


def _found(pos: int, result: Action | str) -> _Found:
    return _Found(pos, reason=result) if isinstance(result, str) else _Found(pos, action=result)


def _find_json(text: str, offered: _Offered) -> list[_Found]:
    out: list[_Found] = []
    i = text.find("{")
    while i != -1:
        result = _json_at(text, i, "json", offered)
        out.append(_found(i, result))
        if isinstance(result, Action):
            break  # later objects cannot start before this one
        i = text.find("{", i + 1)  # an object nested in this one may still be an action
    return out


def _find_fenced(text: str, offered: _Offered) -> list[_Found]:
    out: list[_Found] = []
    for m in _FENCE.finditer(text):
        body = m.group("body").strip()
        if body.startswith("{"):
            result = _json_at(body, 0, "fenced_json", offered)
            out.append(_found(m.start(), result))
    return out


def _find_tags(text: str, offered: _Offered) -> list[_Found]:
    out: list[_Found] = []
    for m in _TOOL_CALL_TAG.finditer(text):
        body = m.group("body").strip()
        brace = body.find("{")
        if brace == -1:
            out.append(_Found(m.start(), reason=f"<{m.group('tag')}> holds no JSON object"))
            continue
        result = _json_at(body, brace, "xml", offered)
        out.append(_found(m.start(), result))
    for pattern in (_NAME_ARGS_TAGS, _FUNCTION_EQ_TAG):
        for m in pattern.finditer(text):
            args = _arguments(m.group("body"))
            name = m.group("name")
            if isinstance(args, str):
                out.append(_Found(m.start(), reason=f"tool {name!r}: {args}"))
            elif _is_final_name(name):
                out.append(_found(m.start(), _final(m.group("body"), "xml")))
            else:
                out.append(_Found(m.start(), action=Action(kind="tool", name=name,
                                                           arguments=args, format="xml")))
    return out


def _action_input(rest: str) -> tuple[Any, str | None]:
    """Read the value after an ``Action Input:`` label: (value, reason if unreadable)."""
    m = _ACTION_INPUT.match(rest)
    if not m:
        return None, None
    value = rest[m.end():].strip()
    fence = _FENCE.match(value)
    if fence:
        value = fence.group("body").strip()
    if value.startswith("{"):
        end = _balanced_end(value, 0)
        if end is None:
            return None, "the Action Input JSON is unterminated (was the response cut off?)"
        value = value[:end]
    else:
        value = value.split("\n", 1)[0].strip()
    return value, None


def _find_action_lines(text: str) -> list[_Found]:
    out: list[_Found] = []
    for m in _ACTION_LINE.finditer(text):
        name = m.group("name").strip()
        value, reason = _action_input(text[m.end():])
        if reason:
            out.append(_Found(m.start(), reason=reason))
        elif _is_final_name(name):
            answer = value if isinstance(value, str) else ""
            if len(answer) >= 2 and answer[0] == answer[-1] == '"':
                answer = answer[1:-1]
            out.append(_found(m.start(), _final(answer, "action_lines")))
        else:
            args = _arguments(value)
            if isinstance(args, str):
                out.append(_Found(m.start(), reason=f"Action Input for {name!r}: {args}"))
            else:
                out.append(_Found(m.start(), action=Action(
                    kind="tool", name=name, arguments=args, format="action_lines")))
    return out


def _literal(node: ast.expr) -> Any:
    if isinstance(node, ast.Name) and node.id in _JSON_WORDS:
        return _JSON_WORDS[node.id]
    return _as_json(ast.literal_eval(node))


def _find_calls(text: str, tool_names: Collection[str] | None) -> list[_Found]:
    out: list[_Found] = []
    for m in _CALL_START.finditer(text):
        name = m.group("name")
        known = tool_names is not None and name in tool_names
        if tool_names is not None and not known:
            continue
        end = _balanced_end(text, m.end() - 1)
        if end is None:
            if known:
                out.append(_Found(m.start(), reason=f"the call {name}(... is unclosed"))
            continue
        try:
            call = ast.parse(text[m.start():end].strip(), mode="eval").body
            if not isinstance(call, ast.Call) or call.args:
                raise ValueError("positional arguments")
            args = {kw.arg: _literal(kw.value) for kw in call.keywords if kw.arg}
            if len(args) != len(call.keywords):
                raise ValueError("**kwargs")
        except (SyntaxError, ValueError, TypeError, MemoryError, RecursionError):
            if known:
                out.append(_Found(m.start(), reason=(
                    f"{name}(...) must use key=value arguments with literal values")))
            continue
        out.append(_Found(m.start(), action=Action(kind="tool", name=name, arguments=args,
                                                   format="call")))
    return out


def _find_finals(text: str) -> list[_Found]:
    m = _FINAL.search(text)
    if not m:
        return []
    answer = text[m.end():]
    more = _CONTINUATION.search(answer)  # the model went on to imagine another turn
    return [_found(m.start(), _final(answer[: more.start()] if more else answer, "final"))]


def parse_action(text: str, *, tool_names: Collection[str] | None = None,
                 tools: Sequence[ToolSpec] | None = None) -> Action:
    """Parse one model response into a tool call, a final answer or an invalid action.

    ``tool_names`` (or the offered ``tools``, which also enable arguments-only
    objects), when given, enable the ``name(key=value)`` shape for those names
    only (prose is full of parentheses). Never raises.
    """
    try:
        return _parse(text, _offered(tool_names, tools))
    except Exception as exc:  # the parser's contract is to never raise
        return Action(kind="invalid", error=f"unreadable response ({type(exc).__name__})")


def _parse(text: str, offered: _Offered) -> Action:
    if not isinstance(text, str):
        return Action(kind="invalid", error="the response is not text")
    body, unclosed_think = _strip_think(text)
    if not body.strip():
        if unclosed_think:
            return Action(kind="invalid", error="the response is an unfinished <think> block")
        return Action(kind="invalid", error=f"the response is empty; {_HOW}")
    found = (_find_finals(body) + _find_fenced(body, offered) + _find_tags(body, offered)
             + _find_action_lines(body) + _find_json(body, offered)
             + _find_calls(body, offered.names))
    actions = [f for f in found if f.action is not None]
    if actions:
        first = min(actions, key=lambda f: f.pos).action
        assert first is not None
        return first
    misses = sorted((f for f in found if f.reason), key=lambda f: f.pos)
    if misses:
        reason = misses[0].reason
    elif unclosed_think:
        reason = "the response is an unfinished <think> block with no action after it"
    else:
        reason = "no tool call or final answer found"
    return Action(kind="invalid", error=f"{reason}; {_HOW}")


def format_action(action: Action) -> str:
    """The canonical text of an action: bare JSON for a tool call, ``Final Answer: ...``.

    Raises ValueError for an invalid action, which has no canonical form.
    """
    if action.kind == "tool":
        return json.dumps({"name": action.name, "arguments": action.arguments},
                          ensure_ascii=False)
    if action.kind == "final":
        return f"Final Answer: {action.answer or ''}"
    raise ValueError(f"an invalid action has no canonical form ({action.error})")
