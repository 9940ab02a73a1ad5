"""Models served by Ollama (the ``ollama:`` backend), via the official client.

Spec: ``ollama:TAG[@HOST]``, e.g. ``ollama:qwen2.5:7b`` or
``ollama:llama3.2:3b@http://127.0.0.1:11434``. Without ``@HOST`` the host is
``$OLLAMA_HOST``, else ``http://127.0.0.1:11434``. Options:

* ``num_ctx`` - context window in tokens, always sent (default 8192). Ollama's own default
  (4096; 2048 on older builds) would silently cut the *front* of a long agent prompt: the
  system prompt, the tools and the task. Each trial records it beside the window the model
  was trained for (``n_ctx_train``: ``/api/show``'s ``model_info``, read before the first
  request), so an overflow is attributed as ``llamacpp:``'s is;
* ``think`` - ``off|on|auto`` (Ollama's ``think`` flag; ``on`` also adds ``think_tokens``,
  default 2048, to each reply's token cap);
* ``timeout`` - seconds per request (default 300).

Requests go to ``/api/chat`` without streaming. Decoding is pinned
(:data:`~slmbench.models.base.PINNED`): ``temperature``, ``seed``, ``top_k``, ``top_p``,
``min_p`` and ``repeat_penalty`` 1.0 are always sent, overriding the Modelfile's own
(``repeat_penalty`` 1.1 unless it says otherwise). A request's ``stop`` *replaces* the
Modelfile's stop strings, so the tag's own (read once from ``/api/show``) are sent with the
caller's appended. ``tools`` are passed through and native tool calls come back as
``Completion.tool_calls`` (Ollama gives them no ids). Reasoning that Ollama >= 0.12.5
returns apart (``message.thinking``) is ``Completion.reasoning``, never dropped.

**The context is checked.** Ollama does not refuse a prompt longer than ``num_ctx``: it
drops its front and reports the tokens it kept as ``prompt_eval_count``. A reply whose
``prompt_eval_count`` is below the prompt's least possible token count (its characters over
:data:`MAX_CHARS_PER_TOKEN`), or fills the whole window, raises
:class:`~slmbench.core.errors.ContextOverflowError` (``context_truncated``): the trial ends
``context_overflow`` instead of going on from a prompt that lost its task. A cut of less
than about half the prompt's characters can pass unseen (the count is an estimate from
the client's side; Ollama has no tokenize endpoint).

``latency_s`` is the server's own ``total_duration`` (without queueing in the client);
``wall_s`` the request's wall time. Errors follow :mod:`slmbench.models.faults`: an
unreachable server, 5xx (not out-of-memory) and 429 are transient; a tag the server does
not have is ``ModelNotFoundError`` (``ollama pull TAG``); out of memory and "does not support
tools" stop the model.

``score`` is not supported: ``/api/chat`` can report log-probabilities only of
the tokens the server itself sampled, never of candidates given to it, so
``score`` raises ``LogprobsUnsupportedError``.

Tested only against recorded ``/api/chat`` wire responses
(``tests/models/fixtures/ollama/``) replayed through an httpx transport, and a scripted
loopback server in their shape (``tests/agents/runner/fake_servers.py``): no Ollama server
is installable on the machines this project is built on.
"""

from __future__ import annotations

import math
import os
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

import httpx
import ollama

from slmbench.core.errors import (
    BackendError,
    ContextOverflowError,
    ModelNotFoundError,
)
from slmbench.models import base
from slmbench.models.faults import fault_error, unanswered
from slmbench.models.readiness import get_when_ready
from slmbench.models.records import Completion, Message, ServerTimings, ToolCall
from slmbench.models.spec import ModelSpec
from slmbench.models.thinking import THINK_OPTIONS, Thinking

DEFAULT_HOST = "http://127.0.0.1:11434"
DEFAULT_NUM_CTX = 8192
OPTIONS = ("num_ctx", "timeout", *THINK_OPTIONS)
# No tokenizer of ours counts fewer than one token per this many characters of a prompt
# (English prose is about 4; JSON and code fewer): the floor of a prompt's token count.
MAX_CHARS_PER_TOKEN = 8


def ollama_messages(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """Messages in the shape ``/api/chat`` takes (tool results carry ``tool_name``)."""
    out: list[dict[str, Any]] = []
    for m in messages:
        d: dict[str, Any] = {"role": m.role, "content": m.content}
        if m.tool_calls:
            d["tool_calls"] = [{"function": {"name": c.name, "arguments": c.arguments}}
                               for c in m.tool_calls]
        if m.role == "tool" and m.name:
            d["tool_name"] = m.name
        out.append(d)
    return out


def modelfile_stops(parameters: str | None) -> list[str]:
    """The ``stop`` values of a Modelfile's parameters (``/api/show``'s ``parameters`` text)."""
    stops = []
    for line in (parameters or "").splitlines():
        key, _, value = line.strip().partition(" ")
        if key == "stop" and value.strip():
            stops.append(value.strip().strip('"'))
    return stops


def least_prompt_tokens(messages: Sequence[dict[str, Any]]) -> int:
    """The fewest tokens ``messages`` can take (see :data:`MAX_CHARS_PER_TOKEN`)."""
    chars = sum(len(str(m.get("content") or "")) for m in messages)
    return math.floor(chars / MAX_CHARS_PER_TOKEN)


def host_url(spec: ModelSpec) -> str:
    """The server a spec names: after '@', else ``$OLLAMA_HOST``, else :data:`DEFAULT_HOST`."""
    host = spec.server_target("ollama:TAG or ollama:TAG@http://HOST:11434")[1]
    url = (host or os.environ.get("OLLAMA_HOST") or DEFAULT_HOST).rstrip("/")
    return url if "://" in url else f"http://{url}"


def server_timings(response: ollama.ChatResponse) -> ServerTimings | None:
    """The durations an ``/api/chat`` answer reports (nanoseconds), in seconds."""
    if not response.total_duration:
        return None
    return ServerTimings(prompt_s=(response.prompt_eval_duration or 0) / 1e9,
                         eval_s=(response.eval_duration or 0) / 1e9,
                         total_s=response.total_duration / 1e9,
                         load_s=(response.load_duration or 0) / 1e9)


class OllamaModel(base.Backend):
    """A model tag served by an Ollama server."""

    supports_native_tools = True
    no_logprobs = ("Ollama reports log-probabilities only of tokens it sampled, not of given "
                   "candidates",
                   "score with the llamacpp backend on the same GGUF (Ollama keeps it in its "
                   "blobs)")

    def __init__(self, tag: str, host: str | None = None, *, spec: str | None = None,
                 num_ctx: int = DEFAULT_NUM_CTX, timeout: float = 300.0,
                 thinking: Thinking | None = None,
                 transport: httpx.BaseTransport | None = None) -> None:
        self.tag = tag
        self.host = host or os.environ.get("OLLAMA_HOST") or DEFAULT_HOST
        super().__init__(spec or f"ollama:{tag}@{self.host}", thinking)
        self.num_ctx = num_ctx
        extra: dict[str, Any] = {"transport": transport} if transport else {}
        self._client = ollama.Client(host=self.host, timeout=timeout, **extra)
        self._shown: ollama.ShowResponse | None = None  # the tag's /api/show, read once
        self._show_lock = threading.Lock()

    @property
    def settings(self) -> dict[str, Any]:
        """What this backend sends with every request (recorded in each trial)."""
        trained = None if self._shown is None else base.trained_context(
            self._shown.modelinfo or {})
        return {"backend": "ollama", "num_ctx": self.num_ctx,
                **({} if trained is None else {"n_ctx_train": trained}),
                **base.PINNED.settings(), **self.thinking.settings(),
                "stops": "the Modelfile's, then the caller's", "not_honoured": []}

    @classmethod
    def preflight(cls, spec: ModelSpec, wait_ready_s: float | None = None, *,
                  on_wait: Callable[[str], None] | None = None) -> None:
        """The spec's options are valid, and the server answers ``GET /api/tags`` and has the
        spec's tag (else a one-line error)."""
        cls.from_spec(spec).close()  # the options, as loading reads them; no request is sent
        tag, url = spec.server_target("ollama:TAG")[0], host_url(spec)
        listing = get_when_ready(f"{url}/api/tags", what="Ollama server",
                                 start_hint="start it with `ollama serve` or fix the host "
                                 "after '@' / $OLLAMA_HOST", wait_ready_s=wait_ready_s,
                                 on_wait=on_wait)
        names = {str(m.get(k)) for m in (listing or {}).get("models") or [] if isinstance(m, dict)
                 for k in ("name", "model") if m.get(k)}
        if tag not in names and f"{tag}:latest" not in names:
            raise ModelNotFoundError(f"the Ollama server at {url} has no model {tag!r}",
                                     f"ollama pull {tag}")

    @staticmethod
    def capabilities(spec: ModelSpec) -> frozenset[str] | None:
        """What the server says the spec's tag can do: ``/api/show``'s ``capabilities``
        (``completion``, ``tools``, ``thinking``...); None from a server too old to say."""
        tag, url = spec.server_target("ollama:TAG")[0], host_url(spec)
        where = f"the Ollama server at {url}"
        try:
            response = httpx.post(f"{url}/api/show", json={"model": tag}, timeout=10.0)
            shown = response.json() if response.status_code == 200 else None
        except (httpx.TransportError, ValueError) as exc:
            raise BackendError(f"{where} gave no model details (/api/show): {exc}",
                               "check the server's log") from exc
        if shown is None:
            raise fault_error(where, response.status_code, repr(response.text[:120]))
        found = shown.get("capabilities") if isinstance(shown, dict) else None
        return frozenset(map(str, found)) if isinstance(found, list) else None

    @classmethod
    def from_spec(cls, spec: ModelSpec) -> OllamaModel:
        spec.check_options(OPTIONS)
        tag, host = spec.server_target("ollama:TAG or ollama:TAG@http://HOST:11434")
        return cls(tag, host, spec=spec.raw,
                   num_ctx=spec.int_option("num_ctx", DEFAULT_NUM_CTX),
                   timeout=spec.seconds_option("timeout", 300.0),
                   thinking=Thinking.from_spec(spec))

    def _error(self, exc: Exception) -> Exception:
        where = f"the Ollama server at {self.host}"
        if isinstance(exc, ConnectionError | httpx.ConnectError):
            return unanswered(f"{where} is unreachable", "start it with `ollama serve`")
        if isinstance(exc, httpx.TimeoutException):
            return unanswered(f"{where} did not answer in time", "retry, or raise ?timeout=")
        if isinstance(exc, httpx.TransportError):
            return unanswered(f"lost the connection to {where}: {exc}",
                              "check the server's log")
        if isinstance(exc, ollama.ResponseError):
            hint = f"ollama pull {self.tag}" if exc.status_code == 404 else None
            return fault_error(where, exc.status_code, str(exc.error), hint=hint)
        return BackendError(f"bad answer from {where}: {exc}", "check the server's version")

    def _template_stops(self) -> list[str]:
        """The tag's own stop strings (a request's ``stop`` replaces them), from its
        ``/api/show``, read once, before the first request: the same answer gives the window
        the model was trained for (``model_info``), which :attr:`settings` records."""
        with self._show_lock:
            if self._shown is None:
                try:
                    self._shown = self._client.show(self.tag)
                except (ConnectionError, httpx.TransportError, ollama.ResponseError,
                        ValueError) as exc:  # ValueError: an answer that is not a model's show
                    raise self._error(exc) from exc
            return modelfile_stops(self._shown.parameters)

    def _check_context(self, sent: list[dict[str, Any]], evaluated: int | None) -> None:
        """Raise ContextOverflowError (``context_truncated``) when the server cut the prompt."""
        if evaluated is None:
            return
        least = least_prompt_tokens(sent)
        if evaluated < least or evaluated >= self.num_ctx:
            raise ContextOverflowError(
                f"{self.spec}: context_truncated: the server evaluated {evaluated} prompt "
                f"tokens of at least {least}, in a context of {self.num_ctx}",
                "raise ?num_ctx= (the server drops the front of a prompt that does not fit)")

    def _generate(self, request: base.Request) -> Completion:
        options: dict[str, Any] = {
            "temperature": request.temperature, "seed": request.seed,
            "num_predict": request.max_tokens, "num_ctx": self.num_ctx,
            "top_k": base.PINNED.top_k, "top_p": base.PINNED.top_p, "min_p": base.PINNED.min_p,
            "repeat_penalty": base.PINNED.repeat_penalty}
        if stops := list(dict.fromkeys([*self._template_stops(), *request.stop])):
            options["stop"] = stops
        sent = ollama_messages(request.messages)
        start = time.perf_counter()
        try:
            response = self._client.chat(model=self.tag, messages=sent, tools=request.tools,
                                         options=options, stream=False,
                                         think=self.thinking.enabled)
        except (ConnectionError, httpx.TransportError, ollama.ResponseError) as exc:
            raise self._error(exc) from exc
        wall = time.perf_counter() - start
        self._check_context(sent, response.prompt_eval_count)
        message = response.message
        calls = [ToolCall(name=c.function.name, arguments=dict(c.function.arguments))
                 for c in message.tool_calls or ()]
        return self._completion(
            message.content or "", reasoning=message.thinking or "", calls=calls, wall=wall,
            tokens=(response.prompt_eval_count or 0, response.eval_count or 0),
            finish="tool_calls" if calls else
            "length" if response.done_reason == "length" else "stop",
            timings=server_timings(response))

    def close(self) -> None:
        self._client.close()
