"""Models served by Ollama (the ``ollama:`` backend), via the official client.

Spec: ``ollama:TAG[@HOST]``, e.g. ``ollama:qwen2.5:7b`` or
``ollama:llama3.2:3b@http://127.0.0.1:11434``. Without ``@HOST`` the host is
``$OLLAMA_HOST``, else ``http://127.0.0.1:11434``. Options: ``num_ctx``
(context window; Ollama's own default silently truncates long agent prompts,
so set it when prompts are long) and ``timeout`` (seconds, default 300).

Requests go to ``/api/chat`` without streaming, with ``temperature``,
``seed``, ``num_predict`` and ``stop`` as Ollama options; ``tools`` are passed
through and native tool calls come back as ``Completion.tool_calls`` (Ollama
gives them no ids). An unreachable server or a 5xx/429 answer raises
``BackendError(transient=True)``; a tag the server does not have raises
``ModelNotFoundError`` (``ollama pull TAG``).

``score`` is not supported: ``/api/chat`` can report log-probabilities only of
the tokens the server itself sampled, never of candidates given to it, so
``score`` raises ``LogprobsUnsupportedError``.

Tested only against recorded ``/api/chat`` wire responses
(``tests/models/fixtures/ollama/``) replayed through an httpx transport: no
Ollama server is installable on the machines this project is built on.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from typing import Any

import httpx
import ollama

from slmbench.core.errors import (
    BackendError,
    LogprobsUnsupportedError,
    ModelNotFoundError,
    ModelSpecError,
)
from slmbench.models.base import (
    CandidateScore,
    Completion,
    Message,
    ModelSpec,
    ToolCall,
    as_messages,
    get_when_ready,
)

DEFAULT_HOST = "http://127.0.0.1:11434"
OPTIONS = ("num_ctx", "timeout")


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


class OllamaModel:
    """A model tag served by an Ollama server."""

    supports_logprobs = False
    supports_native_tools = True

    def __init__(
        self,
        tag: str,
        host: str | None = None,
        *,
        spec: str | None = None,
        num_ctx: int | None = None,
        timeout: float = 300.0,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.tag = tag
        self.host = host or os.environ.get("OLLAMA_HOST") or DEFAULT_HOST
        self.spec = spec or f"ollama:{tag}@{self.host}"
        self.num_ctx = num_ctx
        extra: dict[str, Any] = {"transport": transport} if transport else {}
        self._client = ollama.Client(host=self.host, timeout=timeout, **extra)

    @staticmethod
    def preflight(spec: ModelSpec, wait_ready_s: float | None = None) -> None:
        """The server answers ``GET /api/tags`` and has the spec's tag (else one-line error)."""
        tag, _, host = spec.target.partition("@")
        base = (host or os.environ.get("OLLAMA_HOST") or DEFAULT_HOST).rstrip("/")
        if "://" not in base:
            base = f"http://{base}"
        listing = get_when_ready(f"{base}/api/tags", what="Ollama server",
                                 start_hint="start it with `ollama serve` or fix the host after "
                                 "'@' / $OLLAMA_HOST", wait_ready_s=wait_ready_s)
        names = {str(m.get(k)) for m in (listing or {}).get("models") or [] if isinstance(m, dict)
                 for k in ("name", "model") if m.get(k)}
        if tag not in names and f"{tag}:latest" not in names:
            raise ModelNotFoundError(f"the Ollama server at {base} has no model {tag!r}",
                                     f"ollama pull {tag}")

    @classmethod
    def from_spec(cls, spec: ModelSpec) -> OllamaModel:
        spec.check_options(OPTIONS)
        tag, _, host = spec.target.partition("@")
        if not tag:
            raise ModelSpecError(f"{spec.raw!r} names no model tag before '@'",
                                 "write ollama:TAG or ollama:TAG@http://HOST:11434")
        num_ctx = spec.int_option("num_ctx", 0) or None  # None: the server's default
        timeout = spec.seconds_option("timeout", 300.0)
        return cls(tag, host or None, spec=spec.raw, num_ctx=num_ctx, timeout=timeout)

    def _error(self, exc: Exception) -> Exception:
        where = f"the Ollama server at {self.host}"
        if isinstance(exc, ConnectionError | httpx.ConnectError):
            return BackendError(f"{where} is unreachable", "start it with `ollama serve`",
                                transient=True)
        if isinstance(exc, httpx.TimeoutException):
            return BackendError(f"{where} did not answer in time", "retry, or raise ?timeout=",
                                transient=True)
        if isinstance(exc, httpx.TransportError):
            return BackendError(f"lost the connection to {where}: {exc}",
                                "check the server's log", transient=True)
        if isinstance(exc, ollama.ResponseError):
            if exc.status_code == 404:
                return ModelNotFoundError(f"{where} has no model {self.tag!r}: {exc.error}",
                                          f"ollama pull {self.tag}")
            transient = exc.status_code == 429 or exc.status_code >= 500
            return BackendError(f"{where} answered {exc.status_code}: {exc.error}",
                                "a passing fault; the runner retries it" if transient
                                else "check the request options", transient=transient)
        return BackendError(f"bad answer from {where}: {exc}", "check the server's version")

    def generate(
        self,
        messages: Sequence[Message | dict[str, Any]],
        *,
        temperature: float = 0.0,
        seed: int = 0,
        max_tokens: int = 256,
        stop: Sequence[str] | None = None,
        tools: Sequence[dict[str, Any]] | None = None,
    ) -> Completion:
        options: dict[str, Any] = {"temperature": temperature, "seed": seed,
                                   "num_predict": max_tokens}
        if stop:
            options["stop"] = list(stop)
        if self.num_ctx:
            options["num_ctx"] = self.num_ctx
        start = time.perf_counter()
        try:
            response = self._client.chat(
                model=self.tag, messages=ollama_messages(as_messages(messages)),
                tools=list(tools) if tools else None, options=options, stream=False,
            )
        except (ConnectionError, httpx.TransportError, ollama.ResponseError) as exc:
            raise self._error(exc) from exc
        latency = time.perf_counter() - start
        calls = tuple(ToolCall(name=c.function.name, arguments=dict(c.function.arguments))
                      for c in response.message.tool_calls or ())
        finish = ("tool_calls" if calls
                  else "length" if response.done_reason == "length" else "stop")
        return Completion(
            text=response.message.content or "",
            prompt_tokens=response.prompt_eval_count or 0,
            completion_tokens=response.eval_count or 0,
            latency_s=latency,
            finish_reason=finish,
            model=self.spec,
            tool_calls=calls,
        )

    def score(
        self,
        messages: Sequence[Message | dict[str, Any]],
        candidates: Sequence[str],
    ) -> list[CandidateScore]:
        raise LogprobsUnsupportedError(
            f"{self.spec}: Ollama reports log-probabilities only of tokens it sampled, "
            "not of given candidates",
            "score with the llamacpp backend on the same GGUF (Ollama keeps it in its blobs)",
        )

    def close(self) -> None:
        self._client.close()
