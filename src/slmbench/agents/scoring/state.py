"""World-state checks, read from the post-trial snapshot (``World.snapshot()``).

Strings match by case-insensitive containment (``"Priya"`` matches
``priya.raman@brightline.example``; a digit at either end of the expected string is never
the middle of a longer number, so ``"2 April"`` is not in ``"12 April"``), except that an
expected number (``"84674"``) matches the same value however it is written (``$84,674.00``);
a list of expected values must each be contained in some element of the actual
list (attendees, recipients). In ``contains`` lists, an entry that is itself a
list is a set of aliases, any one of which will do (``["09:00", "9:00", "9 am"]``).
"""

from __future__ import annotations

import re
from typing import Any

from slmbench.agents.records import Score
from slmbench.agents.scoring.numbers import extract_quantities
from slmbench.agents.tasks.model import (
    EmailSent,
    EventAbsent,
    EventExists,
    FileContent,
    NothingSent,
    NotificationSent,
    StateCheck,
    StateSpec,
)

_NUMBER = re.compile(r"^-?\d[\d,]*(?:\.\d+)?$")


def _within(want: str, text: str) -> bool:
    """``want`` in ``text``, but a digit at either end of ``want`` is not the middle of a
    longer number there ("2 april" is not in "12 april", nor "EV10" in "EV100")."""
    before = r"(?<!\d)" if want[:1].isdigit() else ""
    after = r"(?!\d)" if want[-1:].isdigit() else ""
    return re.search(before + re.escape(want) + after, text) is not None


def _contains(actual: Any, expected: Any) -> bool:
    if isinstance(actual, list):
        wanted = expected if isinstance(expected, list) else [expected]
        return all(any(_contains(a, w) for a in actual) for w in wanted)
    if isinstance(expected, list):  # aliases: any one will do
        return any(_contains(actual, alias) for alias in expected)
    if isinstance(expected, str) and _NUMBER.match(expected.strip()):
        want = float(expected.strip().replace(",", ""))
        return any(abs(q.value - want) < 1e-6 for q in extract_quantities(str(actual)))
    if isinstance(expected, str):
        return _within(expected.strip().lower(), str(actual).lower())
    return bool(actual == expected)


def _matches(record: dict[str, Any], fields: dict[str, Any]) -> bool:
    return all(k in record and _contains(record[k], v) for k, v in fields.items())


def check(state: dict[str, Any], rule: StateCheck) -> tuple[bool, str]:
    """Whether one check holds on a snapshot, and a short reason."""
    if isinstance(rule, EventExists | EventAbsent):
        found = [e for e in state.get("events", []) if _matches(e, rule.fields)]
        if isinstance(rule, EventAbsent):
            ids = [e.get("id") for e in found]
            return (not found, f"event matching {rule.fields} " +
                    (f"still present: {ids}" if found else "absent"))
        ok = len(found) == rule.count
        return ok, f"{len(found)} event(s) match {rule.fields} (want {rule.count})"
    if isinstance(rule, EmailSent):
        sent = [m for m in state.get("sent", [])
                if _contains([*m.get("to", []), *m.get("cc", [])], rule.to)
                and all(_contains(m.get("subject", ""), s) for s in rule.subject_contains)
                and all(_contains(m.get("body", ""), s) for s in rule.body_contains)]
        return bool(sent), (f"e-mail to {rule.to} " + ("sent" if sent else "not sent") +
                            (f" with {rule.subject_contains + rule.body_contains}"
                             if rule.subject_contains or rule.body_contains else ""))
    if isinstance(rule, NotificationSent):
        posted = [n for n in state.get("notifications", [])
                  if n.get("channel") == rule.channel
                  and (rule.recipient is None or _contains(n.get("recipient", ""), rule.recipient))
                  and all(_contains(n.get("message", ""), s) for s in rule.contains)]
        return bool(posted), (f"{rule.channel} notification " +
                              ("posted" if posted else f"with {rule.contains} not posted"))
    if isinstance(rule, FileContent):
        text = state.get("files", {}).get(rule.path)
        if text is None:
            return False, f"file {rule.path} does not exist"
        missing = [s for s in rule.contains if not _contains(text, s)]
        return not missing, f"file {rule.path} " + (f"lacks {missing}" if missing else "ok")
    assert isinstance(rule, NothingSent)
    n = len(state.get("sent", [])) + len(state.get("notifications", []))
    return n == 0, ("nothing sent" if n == 0 else f"{n} message(s) sent")


def score_state(spec: StateSpec, state: dict[str, Any]) -> Score:
    """Pass iff every check holds; the value is the fraction that hold."""
    results = [check(state, rule) for rule in spec.checks]
    held = sum(ok for ok, _ in results)
    failed = [why for ok, why in results if not ok]
    return Score(value=held / len(results), passed=not failed,
                 reason="; ".join(failed) if failed else "; ".join(why for _, why in results))
