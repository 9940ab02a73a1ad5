"""The ``Model`` protocol every backend implements, and the records it returns.

A model is named by a *spec string* ``backend:target[?key=value&...]``:

* ``llamacpp:qwen2.5-coder-0.5b`` (registry name) or ``llamacpp:/path/to/file.gguf``
* ``openai:MODEL@http://127.0.0.1:8080/v1``
* ``llamaserver:qwen2.5-coder-0.5b?slots=8`` (a ``llama-server`` slmbench starts and stops)
* ``ollama:qwen2.5:7b`` or ``ollama:qwen2.5:7b@http://127.0.0.1:11434``
* ``hf:/path/to/dir?dtype=bf16`` (optionally ``&gguf_file=model.gguf``)
* ``scripted:/path/to/script.json`` or ``scripted:echo`` (deterministic, for tests)
* ``NAME:...`` where an installed package declares backend ``NAME`` (entry point group
  ``slmbench.backends``, :mod:`slmbench.core.plugins`)

Options after ``?`` are backend-specific (``n_ctx``, ``threads``, ``dtype``, ``timeout``...).
"""

from __future__ import annotations

import importlib
import math
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from importlib.metadata import EntryPoint
from typing import Any, Literal, Protocol, runtime_checkable
from urllib.parse import parse_qsl

import httpx
from pydantic import BaseModel, ConfigDict, Field

from slmbench.core import plugins
from slmbench.core.errors import (
    BackendError,
    ConfigError,
    ContextOverflowError,
    LogprobsUnsupportedError,
    ModelSpecError,
)
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


class ServerTimings(BaseModel):
    """What a server says it spent on one request, in seconds (the wall time is apart).

    ``prompt_s`` evaluating the prompt and ``eval_s`` generating the reply (Ollama's
    ``prompt_eval_duration`` and ``eval_duration``; llama-server's ``timings.prompt_ms`` and
    ``predicted_ms``); ``total_s`` all the server counted (Ollama's ``total_duration``,
    model loading included; None where a server gives no total) and ``load_s`` the loading.
    """

    model_config = ConfigDict(frozen=True)

    prompt_s: float = Field(ge=0.0)
    eval_s: float = Field(ge=0.0)
    total_s: float | None = Field(default=None, ge=0.0)
    load_s: float | None = Field(default=None, ge=0.0)

    @property
    def model_s(self) -> float:
        """The server's own time: its total, else prompt plus generation."""
        return self.total_s if self.total_s is not None else self.prompt_s + self.eval_s


class Completion(BaseModel):
    """What one ``generate`` call returned.

    ``latency_s`` is the model's own time: the server's where it reports one
    (:class:`ServerTimings`), else the request's wall time; ``wall_s`` is the wall time.
    """

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
    wall_s: float | None = None  # the request's wall time (None: recorded before it was kept)
    timings: ServerTimings | None = None  # None: the server reports none (or in-process)


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

    def server_target(self, example: str) -> tuple[str, str | None]:
        """A server backend's ``NAME@URL`` target: the name, and the URL (None: not given).

        Raises ModelSpecError when no name comes before the '@' (``example``: how to write it).
        """
        name, _, url = self.target.partition("@")
        if not name:
            raise ModelSpecError(f"{self.raw!r} names no model before '@'", f"write {example}")
        return name, url or None

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

    def template_kwargs(self, *, scoring: bool = False) -> dict[str, Any]:
        """What a chat template is rendered with: ``enable_thinking`` as the spec says (nothing
        for auto), or False for a scored prompt, whose candidates are read where the answer
        starts (after a thinking template's empty think block), never where ``<think>`` is."""
        enabled = False if scoring else self.enabled
        return {} if enabled is None else {"enable_thinking": enabled}

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


@dataclass(frozen=True)
class Request:
    """One ``generate`` call as a backend receives it, checked by :meth:`Backend.generate`.

    ``max_tokens`` is the cap to send (the think budget included), ``stop`` the caller's
    stop strings (empty ones dropped), ``tools`` None when none were given.
    """

    messages: list[Message]
    temperature: float
    seed: int
    max_tokens: int
    stop: list[str]
    tools: list[dict[str, Any]] | None


class Backend(ABC):
    """What every real backend shares; a backend implements :meth:`_generate`.

    :meth:`generate` checks the call once for all of them (tools on a backend without native
    tool calling, no token asked for), applies the spec's think budget and hands a
    :class:`Request` on. :meth:`score` raises ``LogprobsUnsupportedError`` with the class's
    ``no_logprobs`` (the problem, the hint) unless the backend overrides it.
    """

    supports_logprobs = False
    supports_native_tools = False
    no_logprobs: tuple[str, str] = ("this backend gives no log-probabilities",
                                    "score with the llamacpp or hf backend on the same weights")
    def __init__(self, spec: str, thinking: Thinking | None = None) -> None:
        self.spec = spec
        self.thinking = thinking or Thinking()

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
        if tools and not self.supports_native_tools:
            raise ConfigError(f"{self.spec} has no native tool calling",
                              "use the ReAct (text) scaffold with this backend")
        if max_tokens < 1:
            raise ConfigError(f"max_tokens={max_tokens} asks for no output",
                              "use max_tokens >= 1")
        return self._generate(Request(as_messages(messages), temperature, seed,
                                      self.thinking.budget(max_tokens),
                                      [s for s in stop or () if s], list(tools) if tools else None))

    @abstractmethod
    def _generate(self, request: Request) -> Completion: ...

    def _completion(self, text: str, *, tokens: tuple[int, int], finish: FinishReason,
                    wall: float, reasoning: str = "", calls: Sequence[ToolCall] = (),
                    timings: ServerTimings | None = None) -> Completion:
        """The Completion of a reply: ``tokens`` are (prompt, completion); ``latency_s`` is
        the server's own time where ``timings`` give one, else ``wall``."""
        own = timings.model_s if timings is not None else 0.0
        return Completion(text=text, reasoning=reasoning, prompt_tokens=tokens[0],
                          completion_tokens=tokens[1], latency_s=own if own > 0 else wall,
                          wall_s=wall, timings=timings, finish_reason=finish, model=self.spec,
                          tool_calls=tuple(calls))

    def score(
        self,
        messages: Sequence[Message | dict[str, Any]],
        candidates: Sequence[str],
    ) -> list[CandidateScore]:
        problem, hint = self.no_logprobs
        raise LogprobsUnsupportedError(f"{self.spec}: {problem}", hint)

    def close(self) -> None:
        return None


def check_fits(spec: str, n: int, n_ctx: int | None, hint: str) -> None:
    """Raise ContextOverflowError when ``n`` tokens do not fit a context of ``n_ctx`` tokens
    (None: the model sets no bound)."""
    if n_ctx is not None and n > n_ctx:
        raise ContextOverflowError(f"{spec}: {n} tokens do not fit its context of {n_ctx}", hint)


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


def plugin_backends() -> dict[str, EntryPoint]:
    """The backends installed packages declare (entry points in ``slmbench.backends``, name →
    ``module:Class``), read once; PluginError if one claims a built-in's name."""
    return plugins.declared(plugins.BACKENDS, BACKENDS, "backend")


def backend_names() -> list[str]:
    """Every backend a spec may name: the built-ins, then the installed plugins."""
    return [*BACKENDS, *plugin_backends()]


def parse_spec(spec: str) -> ModelSpec:
    """Split ``backend:target?k=v&...`` into its parts, or raise ModelSpecError."""
    known = backend_names()
    if not isinstance(spec, str) or ":" not in spec:
        raise ModelSpecError(
            f"model spec {spec!r} names no backend",
            f"write it as BACKEND:TARGET with BACKEND one of {', '.join(known)}",
        )
    backend, rest = spec.split(":", 1)
    if backend not in known:
        raise ModelSpecError(
            f"unknown model backend {backend!r} in {spec!r}",
            f"use one of {', '.join(known)}",
        )
    target, _, query = rest.partition("?")
    if not target:
        raise ModelSpecError(f"model spec {spec!r} has no target after '{backend}:'",
                             "name a model, a file or a script after the colon")
    options = dict(parse_qsl(query, keep_blank_values=True)) if query else {}
    return ModelSpec(backend=backend, target=target, options=options, raw=spec)


def _backend_class(parsed: ModelSpec) -> Any:
    if parsed.backend not in BACKENDS:  # a plugin's: its import errors are its own
        return plugins.load(plugin_backends()[parsed.backend], "backend",
                            lambda cls: callable(getattr(cls, "from_spec", None)),
                            "a class with a from_spec class method")
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


def check_logprobs(spec: str | ModelSpec) -> None:
    """Raise ConfigError if the model's backend gives no log-probabilities of candidates (what
    a log-prob re-rank needs), before anything is read or loaded."""
    parsed = parse_spec(spec) if isinstance(spec, str) else spec
    if parsed.backend == "scripted":  # a test's stand-in says for itself, when loaded
        return
    cls = _backend_class(parsed)
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
    backend = _backend_class(parsed)
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
