"""Fault injection: the one place where a planned tool failure replaces a real result.

A :class:`~slmbench.agents.records.FaultPlan` ``(tool, call, fault)`` says: the
``call``-th call of ``tool`` fails with ``fault``. Calls are counted per tool,
and only calls that passed argument validation count (an invalid call never
reaches the "service", so it cannot time out there).

What each fault does to the call and what the model sees:

============== ============ ===== =====================================================
fault          real call?   ok    observation
============== ============ ===== =====================================================
timeout        not run      False ``error: tool 'X' timed out after 30 s``
rate_limit     not run      False ``error 429 Too Many Requests: ...; retry after 2 s``
internal_error not run      False ``error 500 Internal Server Error: ...``
empty_result   not run      True  ``""`` (an empty body)
schema_drift   run          real  the real result, restructured (``apiVersion``,
                                  ``status``, ``data``) with every field renamed
malformed      run          False the real result's JSON cut in half (invalid JSON)
============== ============ ===== =====================================================

"Not run" faults fail before the service acts, so the world is unchanged (an
e-mail under ``timeout`` is *not* sent). ``schema_drift`` and
``malformed_result`` corrupt the *response* of a call that did happen, so its
side effects are real (the e-mail *was* sent; a retry sends it twice) — the
realistic and harder case for an agent. Every faulted result carries
``injected_fault=<kind>``.
"""

from __future__ import annotations

import json
from typing import Any, NamedTuple, get_args

from slmbench.agents.records import FaultPlan
from slmbench.agents.tools.base import ToolResult

FAULT_KINDS: tuple[str, ...] = get_args(FaultPlan.model_fields["fault"].annotation)
RUNS_REAL_CALL = frozenset({"schema_drift", "malformed_result"})
TIMEOUT_SECONDS = 30
RETRY_AFTER_SECONDS = 2


class RealOutcome(NamedTuple):
    """What the real tool call produced: ``payload`` is its JSON value, or ``{"error": msg}``."""

    ok: bool
    payload: Any
    environment: bool = False  # the tool could not run here (e.g. no sandbox)


class FaultInjector:
    """Counts each tool's (valid) calls and says which one the plan turns into a fault."""

    def __init__(self, plan: FaultPlan | None) -> None:
        self.plan = plan
        self.counts: dict[str, int] = {}

    def next_call(self, tool: str) -> str | None:
        """Count one call of ``tool``; return the fault kind if this call is the planned one."""
        self.counts[tool] = n = self.counts.get(tool, 0) + 1
        if self.plan is not None and self.plan.tool == tool and self.plan.call == n:
            return self.plan.fault
        return None


_RENAMES = {
    "id": "identifier", "key": "ref", "name": "label", "title": "summary", "text": "content",
    "date": "day", "start": "beginsAt", "end": "endsAt", "attendees": "participants",
    "results": "items", "rows": "records", "events": "entries", "emails": "messages",
    "from": "sender", "to": "recipients", "subject": "topic", "body": "contentText",
    "amount": "total", "price": "unitPrice", "value": "resultValue", "error": "fault",
    "stdout": "output", "files": "documents", "content": "payload", "count": "size",
}


def _drift_key(key: str) -> str:
    if key in _RENAMES:
        return _RENAMES[key]
    head, *rest = key.split("_")
    camel = head + "".join(p.capitalize() for p in rest)
    return camel if camel != key else f"{key}V2"


def _drift(value: Any) -> Any:
    if isinstance(value, dict):
        return {_drift_key(str(k)): _drift(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_drift(v) for v in value]
    return value


def faulted_result(kind: str, tool: str, real: RealOutcome | None) -> ToolResult:
    """The result the model sees for a faulted call. ``real`` is required for drift/malformed."""
    if kind == "timeout":
        return ToolResult(ok=False, injected_fault=kind,
                          observation=f"error: tool {tool!r} timed out after {TIMEOUT_SECONDS} s")
    if kind == "rate_limit":
        return ToolResult(ok=False, injected_fault=kind, observation=(
            f"error 429 Too Many Requests: rate limit exceeded for tool {tool!r}; "
            f"retry after {RETRY_AFTER_SECONDS} s"))
    if kind == "internal_error":
        return ToolResult(ok=False, injected_fault=kind, observation=(
            f"error 500 Internal Server Error: tool {tool!r} failed unexpectedly"))
    if kind == "empty_result":
        return ToolResult(ok=True, injected_fault=kind, observation="")
    if real is None:
        raise ValueError(f"fault {kind!r} needs the real call's outcome")
    body = {"status": "ok" if real.ok else "error", "data": real.payload}
    if kind == "schema_drift":
        drifted = {"apiVersion": "2.0", "status": body["status"], "data": _drift(real.payload)}
        return ToolResult(ok=real.ok, injected_fault=kind,
                          observation=json.dumps(drifted, ensure_ascii=False))
    if kind == "malformed_result":
        text = json.dumps(body, ensure_ascii=False)
        cut = text[: max(12, len(text) // 2)]
        return ToolResult(ok=False, injected_fault=kind, observation=cut)
    raise ValueError(f"unknown fault kind {kind!r}; known: {', '.join(FAULT_KINDS)}")
