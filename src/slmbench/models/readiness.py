"""Whether a model can run now, asked before anything loads: its backend's preflight, its
native tool calling, log-probabilities and capabilities, and a server waited for until ready.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import httpx

from slmbench.core.errors import BackendError, ConfigError
from slmbench.models.factory import backend_class
from slmbench.models.faults import classify, fault_error
from slmbench.models.spec import ModelSpec, parse_spec
from slmbench.models.thinking import Thinking


def check_native_tools(spec: str | ModelSpec) -> None:
    """Raise ConfigError if the model cannot run the native tool-calling scaffold: its backend
    has none, or the registry says its template has no tool calling."""
    from slmbench.models.catalog import load_registry

    parsed = parse_spec(spec) if isinstance(spec, str) else spec
    hint = "use the react scaffold (--scaffold react) with this model"
    scripted = parsed.backend == "scripted"  # a test's stand-in says for itself, when loaded
    if not scripted and not getattr(backend_class(parsed), "supports_native_tools", False):
        raise ConfigError(f"{parsed.raw} has no native tool calling (the {parsed.backend} "
                          "backend)", hint)
    entry = load_registry().for_spec(parsed.backend, parsed.target)
    if entry is not None and entry.tools is False:
        raise ConfigError(f"{parsed.raw}: the registry says {entry.name} has no native tool "
                          "calling", hint)


def check_logprobs(spec: str | ModelSpec) -> None:
    """Raise ConfigError if the model's backend gives no log-probabilities of candidates (what
    a log-prob re-rank needs), before anything is read or loaded."""
    parsed = parse_spec(spec) if isinstance(spec, str) else spec
    if parsed.backend == "scripted":  # a test's stand-in says for itself, when loaded
        return
    cls = backend_class(parsed)
    if not getattr(cls, "supports_logprobs", False):
        problem, hint = cls.no_logprobs
        raise ConfigError(f"{parsed.raw}: {problem}", hint)


def check_ready(spec: str | ModelSpec, *, wait_ready_s: float | None = None,
                on_wait: Callable[[str], None] | None = None,
                native_tools: bool = False) -> None:
    """Raise a SlmbenchError (one line and a hint) if the model a spec names cannot be run now.

    Each backend class's ``preflight(spec, wait_ready_s, on_wait)`` raises what loading would,
    without loading: a bad option, a missing script or model file, an unknown or unpulled
    registry name, a missing extra (importing the backend), and for server backends a server
    that does not answer or lacks the model. ``on_wait`` receives a progress line while a
    loading server is waited for.
    ``native_tools``: the run uses the native scaffold (:func:`check_native_tools`). A backend
    whose server says what a model can do (a ``capabilities(spec)``, Ollama's ``/api/show``)
    is asked when the run needs tools or ``?think=on`` (:func:`check_capabilities`).
    """
    parsed = parse_spec(spec) if isinstance(spec, str) else spec
    if native_tools:
        check_native_tools(parsed)
    backend = backend_class(parsed)
    preflight = getattr(backend, "preflight", None)
    if preflight is not None:
        preflight(parsed, wait_ready_s, on_wait=on_wait)
    capabilities = getattr(backend, "capabilities", None)
    if capabilities is not None and (native_tools or Thinking.from_spec(parsed).mode == "on"):
        check_capabilities(parsed, capabilities(parsed), native_tools=native_tools)


def check_capabilities(spec: ModelSpec, found: frozenset[str] | None, *,
                       native_tools: bool) -> None:
    """Raise ConfigError if the server says its model cannot do what the run asks: the native
    scaffold needs ``tools``, ``?think=on`` needs ``thinking`` (``found``: what a backend's
    ``capabilities(spec)`` read from the server; None: the server does not say)."""
    if found is None:
        return
    listed = f"(the server lists: {', '.join(sorted(found)) or 'nothing'})"
    if native_tools and "tools" not in found:
        raise ConfigError(f"{spec.raw} has no native tool calling {listed}",
                          "use the react scaffold (--scaffold react) with this model")
    if Thinking.from_spec(spec).mode == "on" and "thinking" not in found:
        raise ConfigError(f"{spec.raw} does not think {listed}",
                          "drop ?think=on (think=auto sends nothing) for this model")


LOADING_WAIT_S = 120.0  # how long a server that answers 503 (still loading) is waited for
PROGRESS_EVERY_S = 10.0  # how often a wait says so


def get_when_ready(url: str, *, what: str, start_hint: str,
                   wait_ready_s: float | None = None, timeout: float = 5.0,
                   on_wait: Callable[[str], None] | None = None) -> Any:
    """GET ``url`` and return its JSON, failing fast when no server is there.

    A refused or unanswered connection fails at once (within ``timeout``), unless
    ``wait_ready_s`` is given: then it is retried for that long. A server that answers
    503 (the ``loading`` row of :data:`slmbench.models.faults.FAULTS`) is waited for, up to
    ``max(wait_ready_s, LOADING_WAIT_S)``, with a line to ``on_wait`` every
    :data:`PROGRESS_EVERY_S`; any other answer but 200 is an error the table names.
    """
    start = time.monotonic()
    said = 0.0
    while True:
        waited = time.monotonic() - start
        if on_wait is not None and waited - said >= PROGRESS_EVERY_S:
            said = waited
            on_wait(f"waiting for the {what} at {url} to be ready: {waited:.0f} s")
        try:
            response = httpx.get(url, timeout=timeout)
        except httpx.TransportError as exc:
            if waited < (wait_ready_s or 0.0):
                time.sleep(0.5)
                continue
            reason = "connection refused" if isinstance(exc, httpx.ConnectError) else str(exc)
            raise BackendError(f"no {what} answers at {url} ({reason or type(exc).__name__})",
                               f"{start_hint}, or give --wait-ready SECONDS") from exc
        if response.status_code == 200:
            break
        fault = classify(response.status_code, response.text)
        if fault.name == "loading" and waited < max(wait_ready_s or 0.0, LOADING_WAIT_S):
            time.sleep(0.5)
            continue
        hint = "check the URL and the server's logs" if fault.kind == "transient" else None
        raise fault_error(f"the {what} at {url}", response.status_code,
                          repr(response.text[:120]), hint=hint)
    try:
        return response.json()
    except ValueError as exc:
        raise BackendError(f"the {what} at {url} answered, but not with JSON",
                           "check that the URL points at the API, not a web page") from exc
