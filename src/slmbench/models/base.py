"""The ``Model`` protocol every backend implements, and the records it returns.

A model is named by a *spec string* ``backend:target[?key=value&...]``:

* ``llamacpp:qwen2.5-coder-0.5b`` (registry name) or ``llamacpp:/path/to/file.gguf``
* ``openai:MODEL@http://127.0.0.1:8080/v1``
* ``llamaserver:qwen2.5-coder-0.5b?slots=8`` (a ``llama-server`` slmbench starts and stops)
* ``ollama:qwen2.5:7b`` or ``ollama:qwen2.5:7b@http://127.0.0.1:11434``
* ``hf:/path/to/dir?dtype=bf16`` (optionally ``&gguf_file=model.gguf``)
* ``scripted:/path/to/script.json`` or ``scripted:echo`` (deterministic, for tests)

Options after ``?`` are backend-specific (``n_ctx``, ``threads``, ``dtype``, ``timeout``...).
"""

from __future__ import annotations

import importlib
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable
from urllib.parse import parse_qsl

import httpx
from pydantic import BaseModel, ConfigDict, Field

from slmbench.core.errors import BackendError, ConfigError, ModelSpecError
from slmbench.models.faults import classify, fault_error

Role = Literal["system", "user", "assistant", "tool"]
FinishReason = Literal["stop", "length", "tool_calls", "error"]


class ToolCall(BaseModel):
    """A tool call returned by a backend's native tool-calling interface."""

    model_config = ConfigDict(frozen=True)

    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    id: str | None = None


class Message(BaseModel):
    """One chat message. ``tool`` messages carry a tool's observation."""

    model_config = ConfigDict(frozen=True)

    role: Role
    content: str
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    name: str | None = None


class Completion(BaseModel):
    """What one ``generate`` call returned."""

    model_config = ConfigDict(frozen=True)

    text: str
    prompt_tokens: int = Field(ge=0)
    completion_tokens: int = Field(ge=0)
    latency_s: float = Field(ge=0.0)
    finish_reason: FinishReason
    model: str
    tool_calls: tuple[ToolCall, ...] = ()
    cached: bool = False
    # reasoning the server returned apart from the reply (Ollama's ``message.thinking``,
    # vLLM's ``reasoning_content``); a ``<think>`` block inside ``text`` is split off by
    # :func:`slmbench.models.thinking.split_thinking`, not here
    reasoning: str = ""
    wall_s: float | None = None  # the request's wall time, where latency_s is the server's own


class CandidateScore(BaseModel):
    """Log-probability of one candidate continuation given the prompt.

    ``logprob`` is the sum over the candidate's tokens (natural log);
    ``first_token_logprob`` is the log-probability of its first token alone.
    """

    model_config = ConfigDict(frozen=True)

    candidate: str
    logprob: float
    first_token_logprob: float
    n_tokens: int = Field(ge=1)


def as_messages(messages: Sequence[Message | dict[str, Any]]) -> list[Message]:
    """Accept ``Message`` objects or plain ``{"role", "content"}`` dicts."""
    return [m if isinstance(m, Message) else Message.model_validate(m) for m in messages]


def check_generate_args(spec: str, backend: str, *, tools: Sequence[Any] | None,
                        max_tokens: int) -> None:
    """Refuse ``generate`` arguments an in-process backend cannot honour, clearly."""
    if tools:
        raise ConfigError(f"{spec} has no native tool calling",
                          f"use the ReAct (text) scaffold with the {backend} backend")
    if max_tokens < 1:
        raise ConfigError(f"max_tokens={max_tokens} asks for no output", "use max_tokens >= 1")


@runtime_checkable
class Model(Protocol):
    """A language model slmbench can evaluate.

    ``generate`` must be deterministic for ``temperature == 0`` and, for a
    sampling temperature, for a given ``seed``. ``score`` raises
    :class:`~slmbench.core.errors.LogprobsUnsupportedError` where the backend
    cannot give log-probabilities: it never returns a made-up number.
    """

    spec: str
    supports_logprobs: bool
    supports_native_tools: bool

    def generate(
        self,
        messages: Sequence[Message | dict[str, Any]],
        *,
        temperature: float = 0.0,
        seed: int = 0,
        max_tokens: int = 256,
        stop: Sequence[str] | None = None,
        tools: Sequence[dict[str, Any]] | None = None,
    ) -> Completion: ...

    def score(
        self,
        messages: Sequence[Message | dict[str, Any]],
        candidates: Sequence[str],
    ) -> list[CandidateScore]: ...

    def close(self) -> None: ...


@dataclass(frozen=True)
class ModelSpec:
    """A parsed model spec string."""

    backend: str
    target: str
    options: dict[str, str] = field(default_factory=dict)
    raw: str = ""

    def option(self, key: str, default: str | None = None) -> str | None:
        return self.options.get(key, default)

    def check_options(self, known: Sequence[str]) -> None:
        """Reject options the backend does not know: a typo must not pass silently."""
        unknown = sorted(set(self.options) - set(known))
        if unknown:
            raise ModelSpecError(
                f"unknown option(s) {', '.join(unknown)} for the {self.backend} backend "
                f"in {self.raw!r}", f"known options: {', '.join(known) or 'none'}")

    def int_option(self, key: str, default: int) -> int:
        """A positive integer option (``?threads=2``), or ModelSpecError naming it."""
        raw = self.options.get(key)
        if raw is None:
            return default
        if not raw.strip().isdigit() or int(raw) < 1:
            raise ModelSpecError(f"option {key}={raw!r} in {self.raw!r} is not a positive "
                                 "integer", f"write e.g. ?{key}={default}")
        return int(raw)

    def seconds_option(self, key: str, default: float, *, allow_zero: bool = False) -> float:
        """A finite number of seconds (``?timeout=60``), or ModelSpecError naming it."""
        raw = self.options.get(key)
        if raw is None:
            return default
        try:
            value = float(raw)
        except ValueError:
            value = math.nan
        if not math.isfinite(value) or value < 0 or (value == 0 and not allow_zero):
            least = "zero or more" if allow_zero else "more than zero"
            raise ModelSpecError(f"option {key}={raw!r} in {self.raw!r} is not a number of "
                                 f"seconds ({least})", f"write e.g. ?{key}={default:g}")
        return value


def gpu_layers(spec: ModelSpec) -> int | None:
    """``?n_gpu_layers=N`` (layers offloaded to the GPU; -1 all, 0 none), or None if not given."""
    raw = spec.option("n_gpu_layers")
    if raw is None:
        return None
    try:
        value = int(raw)
    except ValueError:
        value = -2
    if value < -1:
        raise ModelSpecError(f"option n_gpu_layers={raw!r} in {spec.raw!r} is not a layer "
                             "count", "write ?n_gpu_layers=-1 (all layers), 0 (none) or N")
    return value


THINK_MODES = ("off", "on", "auto")
DEFAULT_THINK_TOKENS = 2048  # extra completion tokens a step may spend reasoning (think=on)
THINK_OPTIONS = ("think", "think_tokens")


@dataclass(frozen=True)
class Thinking:
    """A spec's reasoning setting: ``?think=off|on|auto`` and ``?think_tokens=N``.

    ``off`` asks the template or server not to reason (Qwen3's ``enable_thinking=False``,
    Ollama's ``think: false``); ``on`` asks it to, and adds ``think_tokens`` to every
    generation's token cap so a reply is not cut inside its reasoning; ``auto`` sends
    nothing (the model's and server's own default).
    """

    mode: str = "auto"
    extra_tokens: int = DEFAULT_THINK_TOKENS

    @classmethod
    def from_spec(cls, spec: ModelSpec) -> Thinking:
        mode = spec.option("think", "auto") or "auto"
        if mode not in THINK_MODES:
            raise ModelSpecError(f"option think={mode!r} in {spec.raw!r} is not one of "
                                 f"{', '.join(THINK_MODES)}", "write ?think=off, on or auto")
        return cls(mode, spec.int_option("think_tokens", DEFAULT_THINK_TOKENS))

    @property
    def enabled(self) -> bool | None:
        """True/False to send to the template or server; None (auto) sends nothing."""
        return {"off": False, "on": True}.get(self.mode)

    def budget(self, max_tokens: int) -> int:
        """The completion-token cap of a request that asked for ``max_tokens``."""
        return max_tokens + self.extra_tokens if self.mode == "on" else max_tokens

    def settings(self) -> dict[str, Any]:
        out: dict[str, Any] = {"think": self.mode}
        if self.mode == "on":
            out["think_tokens"] = self.extra_tokens
        return out


@dataclass(frozen=True)
class Sampling:
    """The sampling parameters every backend sends explicitly (pinned decoding).

    Servers otherwise apply their own: Ollama a Modelfile's settings and ``repeat_penalty``
    1.1, vLLM the repository's ``generation_config.json``. These are llama.cpp's defaults
    (top-k 40, top-p 0.95, min-p 0.05) with no repetition penalty; at temperature 0 every
    backend decodes greedily and they do not matter.
    """

    top_p: float = 0.95
    top_k: int = 40
    min_p: float = 0.05
    repeat_penalty: float = 1.0

    def settings(self) -> dict[str, Any]:
        return {"top_p": self.top_p, "top_k": self.top_k, "min_p": self.min_p,
                "repeat_penalty": self.repeat_penalty}


PINNED = Sampling()


BACKENDS: dict[str, str] = {
    "llamacpp": "slmbench.models.llamacpp:LlamaCppModel",
    "openai": "slmbench.models.openai:OpenAIModel",
    "llamaserver": "slmbench.models.llamaserver:LlamaServerModel",
    "ollama": "slmbench.models.ollama:OllamaModel",
    "hf": "slmbench.models.hf:HFModel",
    "scripted": "slmbench.models.scripted:ScriptedModel",
}


#: backends that talk to a model server (a client per model, many requests in flight)
SERVER_BACKENDS = frozenset({"openai", "ollama", "llamaserver"})


def parse_spec(spec: str) -> ModelSpec:
    """Split ``backend:target?k=v&...`` into its parts, or raise ModelSpecError."""
    if not isinstance(spec, str) or ":" not in spec:
        raise ModelSpecError(
            f"model spec {spec!r} names no backend",
            f"write it as BACKEND:TARGET with BACKEND one of {', '.join(BACKENDS)}",
        )
    backend, rest = spec.split(":", 1)
    if backend not in BACKENDS:
        raise ModelSpecError(
            f"unknown model backend {backend!r} in {spec!r}",
            f"use one of {', '.join(BACKENDS)}",
        )
    target, _, query = rest.partition("?")
    if not target:
        raise ModelSpecError(f"model spec {spec!r} has no target after '{backend}:'",
                             "name a model, a file or a script after the colon")
    options = dict(parse_qsl(query, keep_blank_values=True)) if query else {}
    return ModelSpec(backend=backend, target=target, options=options, raw=spec)


def _backend_class(parsed: ModelSpec) -> Any:
    module_name, cls_name = BACKENDS[parsed.backend].split(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:  # a missing optional dependency
        extra = {"llamacpp": "embedded", "hf": "hf"}.get(parsed.backend, "")
        hint = f"pip install 'slmbench[{extra}]'" if extra else "reinstall slmbench"
        raise ModelSpecError(
            f"the {parsed.backend} backend cannot load: {exc}", hint
        ) from exc
    return getattr(module, cls_name)


def load_model(spec: str | ModelSpec) -> Model:
    """Build the backend a spec names. Optional backends import lazily."""
    parsed = parse_spec(spec) if isinstance(spec, str) else spec
    model: Model = _backend_class(parsed).from_spec(parsed)
    return model


def check_native_tools(spec: str | ModelSpec) -> None:
    """Raise ConfigError if the model cannot run the native tool-calling scaffold: its backend
    has none, or the registry says its template has no tool calling."""
    from slmbench.models.catalog import load_registry

    parsed = parse_spec(spec) if isinstance(spec, str) else spec
    hint = "use the react scaffold (--scaffold react) with this model"
    scripted = parsed.backend == "scripted"  # a test's stand-in says for itself, when loaded
    if not scripted and not getattr(_backend_class(parsed), "supports_native_tools", False):
        raise ConfigError(f"{parsed.raw} has no native tool calling (the {parsed.backend} "
                          "backend)", hint)
    entry = load_registry().for_spec(parsed.backend, parsed.target)
    if entry is not None and entry.tools is False:
        raise ConfigError(f"{parsed.raw}: the registry says {entry.name} has no native tool "
                          "calling", hint)


def check_ready(spec: str | ModelSpec, *, wait_ready_s: float | None = None,
                on_wait: Callable[[str], None] | None = None,
                native_tools: bool = False) -> None:
    """Raise a SlmbenchError (one line and a hint) if the model a spec names cannot be run now.

    Server backends check that their server answers and has the model (a backend class's
    ``preflight(spec, wait_ready_s, on_wait)``); backends without one pass. Nothing is
    loaded. ``on_wait`` receives a progress line while a loading server is waited for.
    ``native_tools``: the run uses the native scaffold (:func:`check_native_tools`).
    """
    parsed = parse_spec(spec) if isinstance(spec, str) else spec
    if native_tools:
        check_native_tools(parsed)
    preflight = getattr(_backend_class(parsed), "preflight", None)
    if preflight is not None:
        preflight(parsed, wait_ready_s, on_wait=on_wait)


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
