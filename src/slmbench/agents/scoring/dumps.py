"""Answers are answers: a right answer that is a tool dump is ``dumped``, not a success.

A family scored on its answer alone (numbers, entities, dates: no choice, refusal, code or
world state among its scorers) accepts an answer that *contains* the right token. An agent
with no skill can exploit that: one trivial call, then the raw result as the answer. So a
passing answer to such a family is a dump (:func:`dumped` says why) when

- it is a JSON object or list (the whole answer, a fenced block aside), or
- it names another *candidate* of the scorer's kind found in a successful observation of the
  trial: another number (for a numeric scorer), another date (for an entity that is a date),
  or another value of the field the required entity was shown in (a name beside the
  expected name, a title beside the expected title).

Candidates written in the instruction or in the instance's reference answer, and the task's
own evidence, are no other candidates: an answer may repeat the question and explain itself
as the reference does. A short right answer that quotes a sentence of a result is an answer
unless that sentence names another candidate. ``docs/scoring.md`` ("Dumped answers").
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Iterator, Sequence
from typing import Any

from slmbench.agents.records import Step
from slmbench.agents.scoring.numbers import extract_quantities
from slmbench.agents.scoring.text import mentions
from slmbench.agents.tasks.model import AllSpec, EntitiesSpec, NumericSpec, ScorerSpec, Task

__all__ = ["DUMP_RULE_VERSION", "answer_scored", "dumped"]

# the rule as a rescoring records it (agents/rescoring.py): bumped by any change of what
# counts as a dump, so a record of moved trials says which rule moved them
DUMP_RULE_VERSION = 1

_FENCE = re.compile(r"^```[a-z]*\s*\n?(.*?)\n?```$", re.DOTALL | re.IGNORECASE)
_ISO = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august",
           "september", "october", "november", "december")
_MONTH = r"(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?"
_DAY_MONTH = re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?{_MONTH}", re.IGNORECASE)
_MONTH_DAY = re.compile(rf"\b{_MONTH}\s+(\d{{1,2}})(?:st|nd|rd|th)?\b", re.IGNORECASE)
_LONGEST_ENTITY = 60  # a field value longer than this is prose, not an entity


def _leaves(spec: ScorerSpec) -> list[ScorerSpec]:
    if isinstance(spec, AllSpec):
        return [leaf for s in spec.scorers for leaf in _leaves(s)]
    return [spec]


def answer_scored(task: Task) -> bool:
    """Whether ``task`` is scored on its answer alone: numbers and entities, nothing else."""
    return all(isinstance(leaf, NumericSpec | EntitiesSpec) for leaf in _leaves(task.scorer))


def _is_json(answer: str) -> str | None:
    """A JSON object or list the answer is, or opens with (a fenced block aside), or an
    object of two fields or more anywhere in it."""
    text = answer.strip()
    if m := _FENCE.match(text):
        text = m.group(1).strip()
    starts = [0] if text[:1] in ("{", "[") else []
    starts += [i for i, c in enumerate(text) if c == "{" and i > 0]
    for start in starts:
        try:
            parsed, _ = json.JSONDecoder().raw_decode(text, start)
        except ValueError:
            continue
        if start == 0 and isinstance(parsed, list) and parsed:
            return "the answer is a JSON list"
        if isinstance(parsed, dict) and (len(parsed) >= 2 or (start == 0 and parsed)):
            return "the answer is a JSON object" if start == 0 else \
                "the answer holds a JSON object"
    return None


def _dates(text: str) -> set[tuple[int, int]]:
    """(month, day) of every date written in ``text``: ISO, ``15 March``, ``March 15th``."""
    out = {(int(m.group(2)), int(m.group(3))) for m in _ISO.finditer(text)}
    for m in _DAY_MONTH.finditer(text):
        out.add((_month(m.group(2)), int(m.group(1))))
    for m in _MONTH_DAY.finditer(text):
        out.add((_month(m.group(1)), int(m.group(2))))
    return {(mo, d) for mo, d in out if 1 <= mo <= 12 and 1 <= d <= 31}


def _month(name: str) -> int:
    return next(i for i, full in enumerate(_MONTHS, 1) if full.startswith(name.lower()[:3]))


def _aliases(entity: str | list[str]) -> list[str]:
    return [entity] if isinstance(entity, str) else entity


def _fields(value: Any, key: str = "") -> Iterator[tuple[str, str]]:
    """Every (field name, string value) of a parsed observation, at any depth."""
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _fields(v, str(k))
    elif isinstance(value, list):
        for v in value:
            yield from _fields(v, key)
    elif isinstance(value, str) and key:
        yield key, value


def _parsed(observations: Sequence[str]) -> list[Any]:
    out = []
    for text in observations:
        try:
            out.append(json.loads(text))
        except ValueError:
            continue
    return out


def _other_numbers(task: Task, answer: str, observations: Sequence[str],
                   known: str) -> list[str]:
    wanted = [leaf for leaf in _leaves(task.scorer) if isinstance(leaf, NumericSpec)]
    if not wanted:
        return []
    seen = {q.value for text in observations for q in extract_quantities(text)}
    allowed = {q.value for q in extract_quantities(known)}
    allowed |= {float(e) for e in task.evidence if isinstance(e, int | float)}
    out = []
    for q in extract_quantities(answer):
        right = any(abs(q.value - w.value) <= w.tolerance + 1e-9 for w in wanted)
        if not right and q.value in seen and q.value not in allowed:
            out.append(q.text)
    return out


def _other_dates(task: Task, answer: str, observations: Sequence[str], known: str) -> list[str]:
    expected: set[tuple[int, int]] = set()
    for leaf in _leaves(task.scorer):
        if isinstance(leaf, EntitiesSpec):
            for entity in leaf.required:
                for alias in _aliases(entity):
                    expected |= _dates(alias)
    if not expected:
        return []
    seen = set().union(*(_dates(t) for t in observations)) if observations else set()
    others = (_dates(answer) & seen) - expected - _dates(known)
    return [dt.date(2001, mo, d).strftime("%d %B").lstrip("0") for mo, d in sorted(others)]


def _other_entities(task: Task, answer: str, observations: Sequence[str],
                    known: str) -> list[str]:
    required = [alias for leaf in _leaves(task.scorer) if isinstance(leaf, EntitiesSpec)
                for entity in leaf.required for alias in _aliases(entity)]
    if not required:
        return []
    fields = [pair for parsed in _parsed(observations) for pair in _fields(parsed)]
    keys = {k for k, v in fields if len(v) <= _LONGEST_ENTITY
            and any(mentions(v, alias) for alias in required)}
    out = []
    for k, v in fields:
        if k not in keys or len(v) > _LONGEST_ENTITY or len(v.strip()) < 3:
            continue
        if any(mentions(v, a) or mentions(a, v) for a in required) or mentions(known, v):
            continue
        if mentions(answer, v) and v not in out:
            out.append(v)
    return out


def dumped(task: Task, answer: str | None, steps: Sequence[Step]) -> str | None:
    """Why a passing ``answer`` to ``task`` is a dump (see the module docstring), or None:
    an answer, or a family not scored on its answer alone."""
    if not answer or not answer_scored(task):
        return None
    if why := _is_json(answer):
        return why
    observations = [s.observation for s in steps if s.tool_ok and s.observation]
    known = f"{task.instruction}\n{task.reference.answer}"
    for kind, found in (("number", _other_numbers(task, answer, observations, known)),
                        ("date", _other_dates(task, answer, observations, known)),
                        ("entity", _other_entities(task, answer, observations, known))):
        if found:
            shown = ", ".join(repr(f) for f in found[:3])
            return f"it names another {kind} a tool result showed ({shown})"
    return None
