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
line (a model imagining the next turn); so does an ``Action Input`` (an empty one
is empty: no arguments for a tool, an empty answer for ``Final Answer``). A leading
``<think>...</think>`` block is dropped first (an unclosed leading ``<think>`` tag
is dropped and the rest is read). An action named "Final Answer" / ``final_answer`` (the LangChain
convention) is a final answer in every shape: a JSON object, ``Action:`` lines,
tags or a call ``final_answer("...")`` / ``final_answer(answer="...")``, whether or
not tool names are given; its answer is the ``answer`` argument (else the first).

**Precedence:** when a response holds several actions, or an action and a
final answer, the one that *starts first in the text* wins: it is what the
model committed to before it went on (typically to imagine an observation).

``Action.format`` says which rule read the action: ``json``, ``fenced_json``,
``xml``, ``action_lines``, ``call`` or ``final``, with ``+alias`` (the name or
arguments under another key, or nested), ``+python`` (a Python literal, not
JSON) and ``+args_only`` appended for a JSON object read by a tolerant rule.
The *strict* grammar the protocol teaches is ``json`` (a tool call) and ``final``
(a ``Final Answer:`` line) only (``Action.strict``): a final answer written as a
JSON object is ``json+alias``, tolerant like every other spelling of it.

**Bounds.** JSON and calls nested more than :data:`MAX_DEPTH` levels deep are
refused with their own reason (never a ``RecursionError``). Parsing is linear in
the response's length by construction: no pattern can backtrack over a span twice
(possessive quantifiers; every lazy scan ends at a closing tag or the end), the
end of every bracket group is found by one scan cached for all groups it passes
(a run of unclosed ``{`` or ``name(`` costs one scan, not one per bracket), and
the whole parse is charged against a budget of :data:`WORK_PER_CHAR` steps per
character: a response that would need more (brackets inside quotes inside
brackets, built to defeat the cache) is refused as too tangled, unless an action
was found before the budget ran out.

Anything else gives ``Action(kind="invalid", error=<reason>)``; the reason is
worded so it can be shown to the model. :func:`parse_action` never raises.
:func:`format_action` writes the canonical form (bare JSON for a tool call,
``Final Answer: ...`` for an answer) that :func:`parse_action` reads back.
:func:`action_end` says where a reply's action is settled, so a reply can be stopped
there while it is written (docs/servers.md, "Where a reply ends"); every finder reports
where its candidate's reading is settled for it.
"""

from __future__ import annotations

import ast
import contextlib
import json
import math
import re
from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from slmbench.agents.records import Action
from slmbench.agents.tools.base import ToolSpec
from slmbench.core.pysyntax import quiet_syntax_warnings

__all__ = ["action_end", "format_action", "parse_action"]

MAX_DEPTH = 32  # nesting of brackets a JSON value or a call may have
WORK_PER_CHAR = 128  # parsing steps allowed per character of a response ...
WORK_BASE = 1 << 16  # ... plus these, for short responses

_NAME_KEYS = ("name", "tool", "tool_name", "action", "function_name", "call", "function")
_ARG_KEYS = ("arguments", "args", "parameters", "action_input", "input", "params")
_WRAPPER_KEYS = ("function", "tool_call", "function_call", "call", "action")
_FINAL_NAMES = frozenset({"final answer", "final_answer", "finalanswer"})
_PAIRS = {"{": "}", "[": "]", "(": ")"}

# Every pattern is linear: quantifiers next to each other never match the same characters
# (or are possessive), and each lazy body ends at its closing tag or at the end of the text.
_THINK_BLOCK = re.compile(r"\A\s*+<think>.*?</think>", re.DOTALL | re.IGNORECASE)
_THINK_OPEN = re.compile(r"\A\s*+<think>", re.IGNORECASE)
_FINAL = re.compile(
    r"^[ \t]*+(?P<bold>\*\*)?final[ _]answer(?(bold)(?:\*\*)?)[ \t]*+:(?(bold)(?:[ \t]*\*\*)?)",
    re.IGNORECASE | re.MULTILINE,
)
_CONTINUATION = re.compile(r"^[ \t]*+(?:Thought|Action|Observation)[ \t]*+:", re.MULTILINE)
_FENCE = re.compile(
    r"```[ \t]*+(?:json|JSON|tool_call|python)?+[ \t]*+\n?+(?P<body>.*?)```", re.DOTALL)
_ACTION_LINE = re.compile(r"^[ \t]*+\**+Action\**+[ \t]*+:(?P<rest>[^\n]*+)",
                          re.IGNORECASE | re.MULTILINE)
_TOOL_NAME = re.compile(r"[A-Za-z_][\w.\- ]*+")
_ACTION_INPUT = re.compile(r"\s*+\**+Action[ _]Input\**+[ \t]*+:", re.IGNORECASE)
_SPACE = re.compile(r"\s*+")
_STARS = re.compile(r"\s*+\**+")  # what _ACTION_INPUT allows before its words
_LABEL_GAP = re.compile(r"\**+[ \t]*+")  # ... and between its words and its colon
_TOOL_CALL_TAG = re.compile(
    r"<(?P<tag>tool_call|function_call|tool_use)>(?P<body>.*?)(?:</(?P=tag)>|\Z)",
    re.DOTALL | re.IGNORECASE,
)
_NAME_ARGS_TAGS = re.compile(
    r"<(?P<nt>tool|tool_name|name|function)>\s*+(?P<name>[^<>\s]++)\s*+</(?P=nt)>\s*+"
    r"<(?P<at>args|arguments|parameters|input)>(?P<body>.*?)(?:</(?P=at)>|\Z)",
    re.DOTALL | re.IGNORECASE,
)
_FUNCTION_EQ_TAG = re.compile(r"<function=(?P<name>[^>\s]++)>(?P<body>.*?)(?:</function>|\Z)",
                              re.DOTALL)
_CALL_START = re.compile(r"(?<![\w.])(?P<name>[A-Za-z_][\w.]*+)\s*+\(")
_JSON_WORDS = {"true": True, "false": False, "null": None}

_HOW = ('write one tool call as a JSON object {"name": ..., "arguments": {...}} '
        "or a line 'Final Answer: ...'")
_TOO_DEEP = f"nested more than {MAX_DEPTH} levels deep"


class _Tangled(Exception):
    """The parse used up its work budget (see the module docstring)."""


class _TooDeep(ValueError):
    """A value nested more than MAX_DEPTH levels deep: refused before it is decoded."""


@dataclass(slots=True)
class _Work:
    """The steps one parse has spent, against its budget (linear in the response's length)."""

    limit: int
    spent: int = 0

    def charge(self, steps: int) -> None:
        self.spent += steps
        if self.spent > self.limit:
            raise _Tangled


@dataclass(frozen=True, slots=True)
class _Found:
    """A candidate action (or a near miss with a reason) at a position in the text.

    ``end`` is where the candidate's reading is settled: no text appended after it can
    change it. None: it is still open (an unclosed bracket, fence or tag, a final answer no
    later label ends). A found with neither action nor reason only marks something open
    (an unpaired fence, an unclosed call of an unknown name) that could become a candidate.
    """

    pos: int
    action: Action | None = None
    reason: str | None = None
    end: int | None = None


@dataclass(slots=True)
class _Brackets:
    """Where each bracket group of ``text`` ends, and how deep it nests, found once.

    One scan from an opening bracket records every group it opens outside quotes
    (their ends are the same as if scanned from them: a group's end depends only
    on what follows it), so a run of unclosed brackets is scanned once, not once each.
    """

    text: str
    work: _Work
    groups: dict[int, tuple[int | None, int]] = field(default_factory=dict)

    def group(self, start: int) -> tuple[int | None, int]:
        """(index just past the group opening at ``text[start]`` or None if unclosed, depth)."""
        if start not in self.groups:
            self._scan(start)
        return self.groups[start]

    def _scan(self, start: int) -> None:
        text, groups = self.text, self.groups
        stack: list[list[Any]] = []  # [closer, opening index, depth of what it holds]
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
            elif ch in _PAIRS:
                stack.append([_PAIRS[ch], i, 1])
            elif stack and ch == stack[-1][0]:
                _, pos, depth = stack.pop()
                groups.setdefault(pos, (i + 1, depth))
                if not stack:
                    break
                stack[-1][2] = max(stack[-1][2], depth + 1)
            i += 1
        self.work.charge(i - start + 1)
        inner = 0
        for _, pos, depth in reversed(stack):  # unclosed, innermost first
            inner = max(depth, inner + 1)
            groups.setdefault(pos, (None, inner))


def _depth(text: str, work: _Work) -> int:
    """The deepest bracket nesting in ``text`` outside quotes (mismatched closers ignored)."""
    work.charge(len(text))
    stack: list[str] = []
    deepest = 0
    quote: str | None = None
    i = 0
    while i < len(text):
        ch = text[i]
        if quote:
            if ch == "\\":
                i += 1
            elif ch == quote:
                quote = None
        elif ch in "\"'":
            quote = ch
        elif ch in _PAIRS:
            stack.append(_PAIRS[ch])
            deepest = max(deepest, len(stack))
        elif stack and ch == stack[-1]:
            stack.pop()
        i += 1
    return deepest


def _strip_think(text: str) -> tuple[str, bool]:
    """Drop a leading think block; report whether an unclosed ``<think>`` was dropped."""
    m = _THINK_BLOCK.match(text)
    if m:
        return text[m.end():], False
    m = _THINK_OPEN.match(text)
    if m:
        return text[m.end():], True
    return text, False


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


def _decode(span: str, work: _Work, depth: int | None = None) -> tuple[Any, bool]:
    """Decode a JSON value (raw newlines in strings allowed), else a Python literal.

    Returns (value, True when it was read as a Python literal); ValueError when
    neither, :class:`_TooDeep` (before decoding) when nested deeper than MAX_DEPTH.
    ``depth`` is the span's nesting when already known."""
    if (_depth(span, work) if depth is None else depth) > MAX_DEPTH:
        raise _TooDeep(_TOO_DEEP)
    work.charge(len(span))
    try:
        return _as_json(json.loads(span, strict=False)), False
    except ValueError:
        pass
    work.charge(len(span))
    try:
        with quiet_syntax_warnings():  # e.g. "invalid hexadecimal literal": not ours to show
            return _as_json(ast.literal_eval(span)), True
    except (ValueError, SyntaxError, TypeError, MemoryError) as exc:
        raise ValueError(str(exc)) from exc


def _arguments(raw: Any, work: _Work) -> dict[str, Any] | str:
    """Normalise an arguments value to a dict, or return the reason it is not one."""
    if raw is None:
        return {}
    if isinstance(raw, str):
        stripped = raw.strip()
        if not stripped:
            return {}
        try:
            raw = _decode(stripped, work)[0]
            if isinstance(raw, str):  # a JSON string holding the object, encoded twice
                raw = _decode(raw, work)[0]
        except _TooDeep:
            return f"the arguments are {_TOO_DEEP}"
        except ValueError:
            return "the arguments are a string, not a JSON object"
    if not isinstance(raw, dict):
        return f"the arguments must be a JSON object, not {type(raw).__name__}"
    if not all(isinstance(k, str) for k in raw):
        return "argument names must be strings"
    return raw


def _is_final_name(name: str) -> bool:
    return name.strip().lower() in _FINAL_NAMES


def _answer_of(raw: Any, work: _Work) -> str:
    """What a final-answer action answers: its ``answer`` argument (else its first), or itself.

    ``raw`` is the action's arguments as written: an object, a JSON text of one, or a value."""
    if isinstance(raw, str) and raw.strip().startswith("{"):
        with contextlib.suppress(ValueError):  # not an object: the text is the answer
            raw = _decode(raw.strip(), work)[0]
    if isinstance(raw, dict):
        raw = raw.get("answer", next(iter(raw.values()), ""))
    if raw is None:
        return ""
    return raw if isinstance(raw, str) else json.dumps(raw, ensure_ascii=False)


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


def _from_dict(obj: dict[str, Any], fmt: str, offered: _Offered, work: _Work,
               alias: bool = False) -> Action | str:
    """An action from a decoded JSON object, or the reason it is not one."""
    for key in _WRAPPER_KEYS:
        inner = obj.get(key)
        if isinstance(inner, dict) and any(k in inner for k in _NAME_KEYS):
            return _from_dict(inner, fmt, offered, work, alias=True)
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
    if _is_final_name(name):  # the final answer in the tool-call grammar: a tolerant reading
        return _final(_answer_of(raw_args, work), f"{fmt}+alias")
    args = _arguments(raw_args, work)
    if isinstance(args, str):
        return f"tool {name.strip()!r}: {args}"
    if alias or name_key != "name" or args_key not in (None, "arguments"):
        fmt += "+alias"
    return Action(kind="tool", name=name.strip(), arguments=args, format=fmt)


def _json_at(brackets: _Brackets, start: int, fmt: str, offered: _Offered) -> Action | str:
    """Read the object opening at ``text[start]``: an action, or the reason it is none."""
    end, depth = brackets.group(start)
    if end is None:
        return "the JSON object is unterminated (was the response cut off?)"
    try:
        obj, python = _decode(brackets.text[start:end], brackets.work, depth)
    except _TooDeep:
        return f"the JSON object is {_TOO_DEEP}"
    except ValueError:
        return "the JSON object is malformed"
    if not isinstance(obj, dict):
        return "the braces hold no JSON object"
    result = _from_dict(obj, fmt, offered, brackets.work)
    if python and isinstance(result, Action):
        result = result.model_copy(update={"format": f"{result.format}+python"})
    return result


def _found(pos: int, result: Action | str, end: int | None) -> _Found:
    if isinstance(result, str):
        return _Found(pos, reason=result, end=end)
    return _Found(pos, action=result, end=end)


def _find_json(brackets: _Brackets, offered: _Offered) -> Iterator[_Found]:
    text = brackets.text
    i = text.find("{")
    while i != -1:
        result = _json_at(brackets, i, "json", offered)
        yield _found(i, result, brackets.group(i)[0])
        if isinstance(result, Action):
            return  # later objects cannot start before this one
        i = text.find("{", i + 1)  # an object nested in this one may still be an action


def _find_fenced(text: str, offered: _Offered, work: _Work) -> Iterator[_Found]:
    work.charge(len(text))
    paired = 0  # where the last complete fence ended: a ``` after it opens one not yet closed
    for m in _FENCE.finditer(text):
        paired = m.end()
        body = m.group("body").strip()
        if body.startswith("{"):
            yield _found(m.start(), _json_at(_Brackets(body, work), 0, "fenced_json", offered),
                         m.end())
    unpaired = text.find("```", paired)
    if unpaired != -1:
        yield _Found(unpaired)


def _closed_at(m: re.Match[str], closer: str) -> int | None:
    """The end of a tag match whose body runs to its closing tag, None when it ran to the end
    of the text with no closing tag (more text would change the body)."""
    closed = m.group(0).lower().endswith(closer.lower())
    return m.end() if closed else None


def _find_tags(text: str, offered: _Offered, work: _Work) -> Iterator[_Found]:
    work.charge(len(text))
    for m in _TOOL_CALL_TAG.finditer(text):
        body = m.group("body").strip()
        end = _closed_at(m, f"</{m.group('tag')}>")
        brace = body.find("{")
        if brace == -1:
            yield _Found(m.start(), reason=f"<{m.group('tag')}> holds no JSON object", end=end)
            continue
        yield _found(m.start(), _json_at(_Brackets(body, work), brace, "xml", offered), end)
    for pattern, closer in ((_NAME_ARGS_TAGS, "at"), (_FUNCTION_EQ_TAG, None)):
        work.charge(len(text))
        for m in pattern.finditer(text):
            name, body = m.group("name"), m.group("body")
            end = _closed_at(m, f"</{m.group(closer) if closer else 'function'}>")
            if _is_final_name(name):
                yield _found(m.start(), _final(_answer_of(body, work), "xml"), end)
                continue
            args = _arguments(body, work)
            if isinstance(args, str):
                yield _Found(m.start(), reason=f"tool {name!r}: {args}", end=end)
            else:
                yield _Found(m.start(), action=Action(kind="tool", name=name, arguments=args,
                                                      format="xml"), end=end)


@dataclass(frozen=True, slots=True)
class _Input:
    """What follows an ``Action:`` line: the ``Action Input`` value (None: no label), the
    reason it is unreadable, and where the reading is settled (None: still open)."""

    value: str | None
    reason: str | None
    end: int | None


_LABELS = ("action input", "action_input")


def _no_label_end(text: str, pos: int) -> int | None:
    """Where the text after an ``Action:`` line (at ``pos``, not followed by an ``Action
    Input`` label) can no longer become one: just past the first character that rules the
    label out; None while the text so far could still be the start of a label."""
    tail = text[_STARS.match(text, pos).end():]
    start = len(text) - len(tail)
    for i, ch in enumerate(tail[:len(_LABELS[0])]):
        if all(label[i] != ch.lower() for label in _LABELS):
            return start + i + 1
    if len(tail) <= len(_LABELS[0]):
        return None  # a prefix of the label so far
    rest = tail[len(_LABELS[0]):]  # the label's words, then something that is not its colon
    gap = _LABEL_GAP.match(rest).end()
    return start + len(_LABELS[0]) + gap + 1 if gap < len(rest) else None


def _action_input(brackets: _Brackets, pos: int) -> _Input:
    """The value after an ``Action Input:`` label at ``pos``.

    The value is a JSON object (bare or fenced, over several lines if need be), else
    the text up to the next ``Thought:`` / ``Action:`` / ``Observation:`` line; None
    when there is no label."""
    text = brackets.text
    m = _ACTION_INPUT.match(text, pos)
    if not m:
        return _Input(None, None, _no_label_end(text, pos))
    more = _CONTINUATION.search(text, m.end())
    stop = more.start() if more else len(text)
    start = _SPACE.match(text, m.end(), stop).end()
    brackets.work.charge(stop - m.end())
    fence = _FENCE.match(text, start, stop)
    if fence:
        body = fence.group("body").strip()
        if not body.startswith("{"):
            return _Input(body, None, fence.end())
        end, _ = _Brackets(body, brackets.work).group(0)
        return _Input(body if end is None else body[:end], None, fence.end())
    if text.startswith("{", start):
        end, _ = brackets.group(start)
        if end is None:
            return _Input(None, "the Action Input JSON is unterminated (was the response cut "
                          "off?)", None)
        return _Input(text[start:end], None, end)
    if text.startswith("`", start) and "```".startswith(text[start:start + 3]) \
            and not fence:
        return _Input(text[start:stop].strip(), None, None)  # a fence, not yet closed
    return _Input(text[start:stop].strip(), None, stop if more else None)


def _find_action_lines(brackets: _Brackets) -> Iterator[_Found]:
    text, work = brackets.text, brackets.work
    work.charge(len(text))
    for m in _ACTION_LINE.finditer(text):
        name = m.group("rest").strip().strip("*").strip()
        if not _TOOL_NAME.fullmatch(name):
            continue
        got = _action_input(brackets, m.end())
        end = got.end if m.end() < len(text) else None  # the name's line is not ended yet
        if got.reason:
            yield _Found(m.start(), reason=got.reason, end=end)
        elif _is_final_name(name):
            answer = _answer_of(got.value, work)
            if len(answer) >= 2 and answer[0] == answer[-1] == '"':
                answer = answer[1:-1]
            yield _found(m.start(), _final(answer, "action_lines"), end)
        else:
            args = _arguments(got.value, work)
            if isinstance(args, str):
                yield _Found(m.start(), reason=f"Action Input for {name!r}: {args}", end=end)
            else:
                yield _Found(m.start(), action=Action(
                    kind="tool", name=name, arguments=args, format="action_lines"), end=end)


def _literal(node: ast.expr) -> Any:
    if isinstance(node, ast.Name) and node.id in _JSON_WORDS:
        return _JSON_WORDS[node.id]
    return _as_json(ast.literal_eval(node))


def _call_action(name: str, call: ast.Call, work: _Work) -> Action | str:
    """The action a parsed call ``name(...)`` writes, or the reason it writes none."""
    if _is_final_name(name):  # final_answer("...") or final_answer(answer="...")
        if len(call.args) + len(call.keywords) != 1 or (call.keywords and not call.keywords[0].arg):
            return f"{name}(...) takes the answer as its one argument"
        value = _literal(call.args[0]) if call.args else \
            {call.keywords[0].arg: _literal(call.keywords[0].value)}
        return _final(_answer_of(value, work), "call")
    if call.args:
        raise ValueError("positional arguments")
    args = {kw.arg: _literal(kw.value) for kw in call.keywords if kw.arg}
    if len(args) != len(call.keywords):
        raise ValueError("**kwargs")
    return Action(kind="tool", name=name, arguments=args, format="call")


def _find_calls(brackets: _Brackets, tool_names: Collection[str] | None) -> Iterator[_Found]:
    text, work = brackets.text, brackets.work
    work.charge(len(text))
    for m in _CALL_START.finditer(text):
        name = m.group("name")
        known = _is_final_name(name) or (tool_names is not None and name in tool_names)
        if tool_names is not None and not known:
            continue
        end, depth = brackets.group(m.end() - 1)
        if end is None or depth > MAX_DEPTH:
            if known:
                yield _Found(m.start(), reason=f"the call {name}(... is unclosed"
                             if end is None else f"the call {name}(...) is {_TOO_DEEP}", end=end)
            elif end is None:
                yield _Found(m.start())  # any name's call may still close into an action
            continue
        work.charge(end - m.start())
        try:
            with quiet_syntax_warnings():
                call = ast.parse(text[m.start():end].strip(), mode="eval").body
            if not isinstance(call, ast.Call):
                raise ValueError("not a call")
            result = _call_action(name, call, work)
        except (SyntaxError, ValueError, TypeError, MemoryError):
            if known:
                yield _Found(m.start(), reason=(
                    f"{name}(...) must use key=value arguments with literal values"), end=end)
            continue
        yield _found(m.start(), result, end)


def _find_finals(text: str, work: _Work) -> Iterator[_Found]:
    work.charge(len(text))
    m = _FINAL.search(text)
    if not m:
        return
    answer = text[m.end():]
    more = _CONTINUATION.search(answer)  # the model went on to imagine another turn
    yield _found(m.start(), _final(answer[: more.start()] if more else answer, "final"),
                 m.end() + more.start() if more else None)


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


def action_end(text: str, *, tool_names: Collection[str] | None = None,
               tools: Sequence[ToolSpec] | None = None) -> int | None:
    """Where ``text``'s action is settled: the length of its shortest prefix that no text
    written after it could make :func:`parse_action` read differently; None while it could.

    When it returns ``end``, ``parse_action(text[:end] + more)`` is
    ``parse_action(text)`` for every ``more``, and ``action_end`` of any longer text that
    starts with ``text[:end]`` is ``end`` again (property-tested): a reply can be stopped at
    ``end`` while it is being written, or cut there after it was, and read the same. The
    action is settled when it is complete (its object, call, fence or tag closed; a final
    answer or a text ``Action Input`` ended by a later ``Thought:`` / ``Action:`` /
    ``Observation:`` line) and nothing before it is still open (an unclosed bracket, fence,
    tag or ``<think>`` block, which could close into an action that starts first). Takes
    the same ``tool_names`` and ``tools`` as :func:`parse_action`. Never raises.
    """
    try:
        return _action_end(text, _offered(tool_names, tools))
    except Exception:  # like parse_action, never raises: an unreadable text is not settled
        return None


def _action_end(text: str, offered: _Offered) -> int | None:
    if not isinstance(text, str):
        return None
    body, unclosed_think = _strip_think(text)
    if unclosed_think:  # a closing tag would drop everything read so far as reasoning
        return None
    found = _candidates(body, offered)
    actions = [f for f in found if f.action is not None]
    if not actions:
        return None
    first = min(actions, key=lambda f: f.pos)  # the one _parse returns
    ends = [f.end for f in found if f.pos <= first.pos]
    if any(end is None for end in ends):
        return None
    end = len(text) - len(body) + max(e for e in ends if e is not None)
    same = _parse(text[:end], offered) == _parse(text, offered)
    return end if same else None


def _candidates(body: str, offered: _Offered) -> list[_Found]:
    """Every action and near miss in ``body``, until the work budget runs out."""
    work = _Work(WORK_PER_CHAR * len(body) + WORK_BASE)
    brackets = _Brackets(body, work)
    found: list[_Found] = []
    finders = (lambda: _find_finals(body, work), lambda: _find_fenced(body, offered, work),
               lambda: _find_tags(body, offered, work), lambda: _find_action_lines(brackets),
               lambda: _find_json(brackets, offered), lambda: _find_calls(brackets, offered.names))
    try:
        for finder in finders:
            found.extend(finder())
    except _Tangled:  # the reading is incomplete: this is the reason that comes first
        found.append(_Found(-1, reason=(
            f"the response is too tangled to read (over {WORK_PER_CHAR} parsing steps "
            "per character)")))
    return found


def _parse(text: str, offered: _Offered) -> Action:
    if not isinstance(text, str):
        return Action(kind="invalid", error="the response is not text")
    body, unclosed_think = _strip_think(text)
    if not body.strip():
        if unclosed_think:
            return Action(kind="invalid", error="the response is an unfinished <think> block")
        return Action(kind="invalid", error=f"the response is empty; {_HOW}")
    found = _candidates(body, offered)
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
