"""Which server faults are passing (retried) and which say the model cannot run (stop it).

One table, :data:`FAULTS`, read in order; the first row whose status and message match
decides. The server backends (``openai:``, ``llamaserver:``, ``ollama:``) raise what it
says, the preflight waits on what it calls transient, the runner retries transient faults
with capped exponential backoff (``RetryPolicy.window_s``, default 120 s) and stops a model
at once on a :class:`ConfigurationFault`, storing no trial for it (a resume runs those trials
once the cause is fixed). ``docs/servers.md`` prints the same table
(``tests/models/test_fault_table.py`` checks that the two agree).

* **transient**: the server is loading, busy or briefly gone: 503 (llama-server's "Loading
  model", vLLM while it starts), 429, other 5xx, refused or dropped connections, timeouts;
* **configuration**: it answered, and will answer the same every time: 404 (no such model),
  400 "does not support tools", out of memory (a 500 from Ollama), other 4xx;
* **context**: the prompt does not fit the model's window (a 400 naming the context
  length): :class:`~slmbench.core.errors.ContextOverflowError`, the trial's
  ``context_overflow``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from slmbench.core.errors import BackendError, ContextOverflowError

Kind = Literal["transient", "configuration", "context"]

__all__ = ["FAULTS", "ConfigurationFault", "Fault", "classify", "fault_error",
           "table_markdown", "unanswered"]


class ConfigurationFault(BackendError):
    """The server answered that this model cannot run as configured (no such model, no tool
    support, out of memory): retrying cannot help, so the runner stops the model at once."""


@dataclass(frozen=True)
class Fault:
    """One row of the table: HTTP statuses (empty: any), a message pattern, what it means."""

    name: str
    statuses: tuple[int, ...]
    pattern: str | None
    kind: Kind
    hint: str

    def matches(self, status: int | None, message: str) -> bool:
        if self.statuses and status not in self.statuses:
            return False
        return self.pattern is None or re.search(self.pattern, message, re.IGNORECASE) is not None


_5XX = tuple(range(500, 600))
_4XX = tuple(range(400, 500))
FAULTS: tuple[Fault, ...] = (
    Fault("unreadable", (200,), None, "transient",
          "a passing fault (an answer cut short, not JSON, or with no reply); it is retried"),
    Fault("out_of_memory", _5XX, r"out of memory|cudaMalloc|failed to allocate|requires more "
          r"system memory|insufficient memory", "configuration",
          "the model does not fit: use a smaller quantization or context, or free the GPU"),
    Fault("no_tool_support", _4XX, r"does not support tools|tool[s]? (?:are|is) not supported|"
          r"tool_choice.*not supported", "configuration",
          "use the react scaffold (--scaffold react) with this model"),
    Fault("context_length", (400, 413), r"context length|context size|context window|maximum "
          r"context|exceed_context|too many tokens", "context",
          "raise the context (?num_ctx= / ?n_ctx= / the server's --max-model-len)"),
    Fault("model_not_found", (404,), None, "configuration",
          "pull or load the model on the server, or fix its name in the spec"),
    Fault("loading", (503,), None, "transient", "the server is still loading; it is waited for"),
    Fault("rate_limited", (429,), None, "transient", "a passing fault; the runner retries it"),
    Fault("server_error", _5XX, None, "transient", "a passing fault; the runner retries it"),
    Fault("bad_request", _4XX, None, "configuration",
          "check the model name and the request options"),
    Fault("unreachable", (), r"refused|unreachable|timed? ?out|connection|disconnected",
          "transient", "start the server, or fix its address; the runner waits for it"),
)


def classify(status: int | None, message: str) -> Fault:
    """The first row of :data:`FAULTS` matching an HTTP ``status`` (None: no answer)."""
    for fault in FAULTS:
        if fault.matches(status, message):
            return fault
    return FAULTS[-1] if status is None else FAULTS[-2]


def fault_error(where: str, status: int | None, message: str, *,
                hint: str | None = None) -> BackendError:
    """The error a backend raises for a fault: transient, configuration or context."""
    fault = classify(status, message)
    what = f"{where} answered {status}: {message}" if status is not None else f"{where}: {message}"
    return _raised(fault, f"{what} ({fault.name})", hint or fault.hint)


def unanswered(text: str, hint: str, *, fault: Literal["unreachable", "unreadable"]
               = "unreachable") -> BackendError:
    """The error a backend raises, worded ``text``, for a request its client got no status
    to classify for (refused, dropped, timed out: ``unreachable``) or a 200 it cannot read
    (``unreadable``): the table's row of that name says what kind of fault it is."""
    return _raised(next(f for f in FAULTS if f.name == fault), text, hint)


def _raised(fault: Fault, text: str, hint: str) -> BackendError:
    if fault.kind == "context":
        return ContextOverflowError(text, hint)
    if fault.kind == "configuration":
        return ConfigurationFault(text, hint)
    return BackendError(text, hint, transient=True)


def table_markdown() -> str:
    """:data:`FAULTS` as the Markdown table ``docs/servers.md`` prints."""
    rows = ["| fault | HTTP status | message matches | kind | what to do |",
            "|---|---|---|---|---|"]
    for f in FAULTS:
        status = ("any" if not f.statuses else "4xx" if f.statuses == _4XX
                  else "5xx" if f.statuses == _5XX else ", ".join(map(str, f.statuses)))
        if f.name == "unreachable":
            status = "none (no answer)"
        pattern = f"`{f.pattern}`".replace("|", "\\|") if f.pattern else "anything"
        rows.append(f"| {f.name} | {status} | {pattern} | {f.kind} | {f.hint} |")
    return "\n".join(rows)
