"""Any OpenAI-compatible chat server (the ``openai:`` backend), via the official client.

Spec: ``openai:MODEL@BASE_URL``, e.g. ``openai:qwen2.5-7b@http://127.0.0.1:8000/v1``
(vLLM, llama.cpp's server, LM Studio...). Without ``@BASE_URL`` the URL is
``$OPENAI_BASE_URL``, else ``http://127.0.0.1:8000/v1``; the API key is
``$OPENAI_API_KEY``, else ``"none"`` (local servers ignore it). Options:
``timeout`` (seconds per request, default 120) and ``think=off|on|auto``
(``chat_template_kwargs.enable_thinking``, which Qwen3's template reads on vLLM and on
llama-server with ``--jinja``; ``on`` also adds ``think_tokens``, default 2048, to each
reply's cap). Token counts are the server's ``usage`` figures (0 where a server reports
none).

Decoding is pinned (:data:`~slmbench.models.base.PINNED`): ``temperature``, ``top_p``,
``seed``, ``max_tokens``, ``stop`` and ``tools`` are OpenAI fields; ``top_k``, ``min_p`` and
the repetition penalty (1.0) go as extra fields, which vLLM (``repetition_penalty``) and
llama-server (``repeat_penalty``) read and other servers may ignore: the trial's settings
list them under ``extra_fields``. A server that refuses unknown fields (OpenAI's own API)
takes ``?extra_fields=0``: they are not sent and the settings list them as
``not_honoured``. A server adds its own stop strings (the template's end of
turn) to a request's ``stop``. Start vLLM with ``--generation-config vllm``, or it applies
the repository's ``generation_config.json`` to every field not sent. Reasoning a server
returns apart (vLLM's and llama-server's ``reasoning_content``) is
``Completion.reasoning``.

Native tool calls come back as ``Completion.tool_calls``. A call whose
arguments are not a JSON object keeps the raw string under ``"_unparsed"``, so
the scaffold can record a format failure instead of losing it. The client's
own retries are off (``max_retries=0``): errors follow :mod:`slmbench.models.faults`
(refused connections, timeouts, 429 and 5xx are transient and the runner retries them;
404, no tool support and other 4xx stop the model; a 400 naming the context length is
``ContextOverflowError``).

``score`` is not supported. The chat endpoint returns log-probabilities only of
tokens the server sampled, not of given candidates; the completions endpoint
with ``echo`` would need the server's chat template on the client side, and
llama-cpp-python's server (0.3.36, measured) misaligns echoed prompt
log-probabilities by one token (each token is scored with the distribution of
the token after it). No number from that path can be trusted, so ``score``
raises ``LogprobsUnsupportedError``; use the ``llamacpp`` or ``hf`` backend.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import httpx
import openai

from slmbench.core.errors import BackendError, ModelNotFoundError, ModelSpecError
from slmbench.models import base
from slmbench.models.faults import fault_error, unanswered
from slmbench.models.readiness import get_when_ready
from slmbench.models.records import Completion, FinishReason, Message, ServerTimings, ToolCall
from slmbench.models.spec import ModelSpec
from slmbench.models.thinking import THINK_OPTIONS, Thinking

DEFAULT_BASE_URL = "http://127.0.0.1:8000/v1"
OPTIONS = ("timeout", "extra_fields", *THINK_OPTIONS)
# Sampling fields outside the OpenAI API, sent as extra body fields (see the module docstring).
EXTRA_FIELDS = ("top_k", "min_p", "repetition_penalty", "repeat_penalty")

_FINISH: dict[str, FinishReason] = {
    "stop": "stop", "length": "length", "tool_calls": "tool_calls", "function_call": "tool_calls",
}


def openai_messages(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """Messages in the OpenAI chat format, tool calls and tool results included."""
    out: list[dict[str, Any]] = []
    for m in messages:
        d: dict[str, Any] = {"role": m.role, "content": m.content}
        if m.tool_calls:
            d["tool_calls"] = [
                {"id": c.id or f"call_{i}", "type": "function",
                 "function": {"name": c.name, "arguments": json.dumps(c.arguments)}}
                for i, c in enumerate(m.tool_calls)
            ]
        if m.tool_call_id:
            d["tool_call_id"] = m.tool_call_id
        if m.name and m.role != "tool":
            d["name"] = m.name
        out.append(d)
    return out


def parse_arguments(raw: str | None) -> dict[str, Any]:
    """A tool call's JSON arguments as a dict; the raw text if it is not a JSON object."""
    try:
        value = json.loads(raw or "{}")
    except json.JSONDecodeError:
        return {"_unparsed": raw}
    return value if isinstance(value, dict) else {"_unparsed": raw}


class _DeadlineStream(httpx.SyncByteStream):
    """A response body that must arrive whole before a deadline (httpx times single reads)."""

    def __init__(self, inner: httpx.SyncByteStream, deadline: float) -> None:
        self._inner, self._deadline = inner, deadline

    def __iter__(self) -> Iterator[bytes]:
        for chunk in self._inner:
            if time.monotonic() > self._deadline:
                raise httpx.ReadTimeout("the answer did not arrive whole in time")
            yield chunk

    def close(self) -> None:
        self._inner.close()


class DeadlineTransport(httpx.HTTPTransport):
    """An HTTP transport that bounds the *whole* exchange by ``timeout_s``.

    httpx's timeouts bound each read, so a server that drips its body a byte at a time
    ("slow loris") would hold a trial for as long as it likes; here it becomes a timeout,
    which the runner retries.
    """

    def __init__(self, timeout_s: float) -> None:
        super().__init__()
        self.timeout_s = timeout_s

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        deadline = time.monotonic() + self.timeout_s
        response = super().handle_request(request)
        assert isinstance(response.stream, httpx.SyncByteStream)
        return httpx.Response(status_code=response.status_code, headers=response.headers,
                              stream=_DeadlineStream(response.stream, deadline),
                              extensions=response.extensions, request=request)


def server_timings(extra: dict[str, Any]) -> ServerTimings | None:
    """llama-server's ``timings`` (milliseconds) in an answer's extra fields, in seconds."""
    timings = extra.get("timings")
    if not isinstance(timings, dict):
        return None
    try:
        return ServerTimings(prompt_s=float(timings.get("prompt_ms") or 0) / 1e3,
                             eval_s=float(timings.get("predicted_ms") or 0) / 1e3)
    except (TypeError, ValueError):  # a server's own shape: no timings rather than a crash
        return None


class OpenAIModel(base.Backend):
    """A model behind an OpenAI-compatible ``/chat/completions`` endpoint."""

    supports_native_tools = True
    no_logprobs = ("an OpenAI-compatible server gives no log-probabilities of given "
                   "candidates (chat logprobs cover only sampled tokens; echoed prompt logprobs "
                   "are misaligned in llama.cpp's server)",
                   "score with the llamacpp or hf backend on the same weights")

    def __init__(self, model: str, base_url: str | None = None, *, spec: str | None = None,
                 timeout: float = 120.0, api_key: str | None = None,
                 http_client: httpx.Client | None = None, thinking: Thinking | None = None,
                 extra_fields: bool = True) -> None:
        self.model = model
        self.extra_fields = extra_fields
        self.base_url = base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL
        super().__init__(spec or f"openai:{model}@{self.base_url}", thinking)
        self._client = openai.OpenAI(
            base_url=self.base_url,
            api_key=api_key or os.environ.get("OPENAI_API_KEY") or "none",
            max_retries=0,
            timeout=timeout,
            http_client=http_client or httpx.Client(transport=DeadlineTransport(timeout)),
        )

    @classmethod
    def from_spec(cls, spec: ModelSpec) -> OpenAIModel:
        spec.check_options(OPTIONS)
        model, url = spec.server_target("openai:MODEL@http://HOST:PORT/v1")
        timeout = spec.seconds_option("timeout", 120.0)
        extra = spec.option("extra_fields", "1")
        if extra not in ("0", "1"):
            raise ModelSpecError(f"option extra_fields={extra!r} in {spec.raw!r} is not 0 or 1",
                                 "write ?extra_fields=0 for a server that refuses unknown fields")
        return cls(model, url, spec=spec.raw, timeout=timeout,
                   thinking=Thinking.from_spec(spec), extra_fields=extra == "1")

    @property
    def settings(self) -> dict[str, Any]:
        """What this backend sends with every request (recorded in each trial)."""
        return {"backend": type(self).__name__, **base.PINNED.settings(),
                **self.thinking.settings(),
                "stops": "the server's template's, then the caller's",
                "extra_fields": list(EXTRA_FIELDS) if self.extra_fields else [],
                "not_honoured": [] if self.extra_fields else ["top_k", "min_p",
                                                              "repeat_penalty"]}

    @classmethod
    def preflight(cls, spec: ModelSpec, wait_ready_s: float | None = None, *,
                  on_wait: Callable[[str], None] | None = None) -> None:
        """The spec's options are valid, and the server answers ``GET /models`` and lists the
        spec's model (else a one-line error)."""
        cls.from_spec(spec).close()  # the options, as loading reads them; no request is sent
        model, url = spec.server_target("openai:MODEL@http://HOST:PORT/v1")
        root = (url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL).rstrip("/")
        listing = get_when_ready(f"{root}/models", what="OpenAI-compatible server",
                                 start_hint="start the server (llama-server, vLLM, ...) or "
                                 "fix the URL after '@'", wait_ready_s=wait_ready_s,
                                 on_wait=on_wait)
        served = [m.get("id") for m in (listing or {}).get("data") or [] if isinstance(m, dict)]
        if model not in served:
            raise ModelNotFoundError(
                f"the server at {root} serves no model {model!r} (it serves: "
                f"{', '.join(map(str, served)) or 'nothing'})",
                f"load {model} on that server, or name one it serves after 'openai:'")

    def _error(self, exc: openai.OpenAIError) -> BackendError:
        where = f"the OpenAI-compatible server at {self.base_url}"
        if isinstance(exc, openai.APITimeoutError):
            return unanswered(f"{where} did not answer in time", "retry, or raise ?timeout=")
        if isinstance(exc, openai.APIConnectionError):
            return unanswered(f"cannot reach {where}: {exc}",
                              "start the server, or fix the URL after '@' / $OPENAI_BASE_URL")
        if isinstance(exc, openai.APIStatusError):
            hint = (f"check the model name {self.model!r} (the server lists its models at "
                    "/v1/models)" if exc.status_code == 404 else None)
            return fault_error(where, exc.status_code, exc.message, hint=hint)
        return BackendError(f"bad answer from {where}: {exc}", "check the server's version")

    def _request_extras(self) -> dict[str, Any]:
        """Extra keyword arguments of each chat request (a subclass's server options)."""
        return {}

    def _generate(self, request: base.Request) -> Completion:
        sent: dict[str, Any] = {
            "model": self.model, "messages": openai_messages(request.messages),
            "temperature": request.temperature, "top_p": base.PINNED.top_p, "seed": request.seed,
            "max_tokens": request.max_tokens,
        }
        if request.stop:
            sent["stop"] = request.stop
        if request.tools:
            sent["tools"] = request.tools
        extra: dict[str, Any] = {"top_k": base.PINNED.top_k, "min_p": base.PINNED.min_p,
                                 "repetition_penalty": base.PINNED.repeat_penalty,
                                 "repeat_penalty": base.PINNED.repeat_penalty,
                                 } if self.extra_fields else {}
        if self.thinking.enabled is not None:
            extra["chat_template_kwargs"] = {"enable_thinking": self.thinking.enabled}
        extras = self._request_extras()
        sent["extra_body"] = {**extra, **extras.pop("extra_body", {})}
        sent.update(extras)
        start = time.perf_counter()
        try:
            response = self._client.chat.completions.create(**sent)
        except openai.OpenAIError as exc:
            raise self._error(exc) from exc
        except ValueError as exc:  # a 200 whose body is cut short or not JSON
            raise unanswered(f"the server at {self.base_url} sent an unreadable answer: {exc}",
                             "a passing fault; the runner retries it",
                             fault="unreadable") from exc
        wall = time.perf_counter() - start
        if not response.choices:
            raise unanswered(f"the server at {self.base_url} returned no choices",
                             "check the server's logs", fault="unreadable")
        choice = response.choices[0]
        calls = [ToolCall(name=c.function.name, id=c.id,
                          arguments=parse_arguments(c.function.arguments))
                 for c in choice.message.tool_calls or () if c.type == "function"]
        said = choice.message.model_extra or {}
        usage = response.usage
        return self._completion(
            choice.message.content or "", calls=calls, wall=wall,
            reasoning=str(said.get("reasoning_content") or said.get("reasoning") or ""),
            tokens=(usage.prompt_tokens, usage.completion_tokens) if usage else (0, 0),
            finish="tool_calls" if calls else _FINISH.get(choice.finish_reason or "stop", "stop"),
            timings=server_timings(response.model_extra or {}))

    def close(self) -> None:
        self._client.close()
