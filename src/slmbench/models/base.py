"""The ``Model`` protocol every backend implements, and ``Backend``, the base every shipped
backend extends (the records it returns are in :mod:`slmbench.models.records`; spec strings in
:mod:`slmbench.models.spec`; building a backend from one in :mod:`slmbench.models.factory`).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from slmbench.core.errors import ConfigError, ContextOverflowError, LogprobsUnsupportedError
from slmbench.models.records import (
    CandidateScore,
    Completion,
    FinishReason,
    Message,
    ServerTimings,
    ToolCall,
    as_messages,
)
from slmbench.models.thinking import OPEN, Thinking


def trained_context(metadata: Mapping[str, Any]) -> int | None:
    """The context window a GGUF's metadata says its model was trained for (its
    ``<architecture>.context_length``: what llama.cpp reads from the file, and Ollama's
    ``/api/show`` ``model_info``), or None where it does not say."""
    value = metadata.get(f"{metadata.get('general.architecture', '')}.context_length", "")
    return int(value) if str(value).isdigit() and int(value) > 0 else None


def settings_of(model: object) -> dict[str, Any]:
    """A copy of what ``model``'s backend records of itself in each trial (its ``settings``:
    window, pinned sampling, ...); empty for a model that has none (a scripted one)."""
    return dict(getattr(model, "settings", {}) or {})


@runtime_checkable
class StopRule(Protocol):
    """Where a reply ends, read off the reply so far (the agent loop gives its parser's rule:
    a reply that goes on after a complete action is stopped at the action's end).

    ``rule(text)`` is the length of the prefix of ``text`` the reply ends at, or None while it
    goes on. Once it answers for a text it answers the same for every longer text that starts
    with that prefix, so a backend that streams may ask at every token and one that cannot may
    ask once, at the end: both return the same text. ``key`` names the rule (a response cache
    keys on it).
    """

    key: str

    def __call__(self, text: str) -> int | None: ...


@runtime_checkable
class Model(Protocol):
    """A language model slmbench can evaluate.

    ``generate`` must be deterministic for ``temperature == 0`` and, for a
    sampling temperature, for a given ``seed``. ``score`` raises
    :class:`~slmbench.core.errors.LogprobsUnsupportedError` where the backend
    cannot give log-probabilities: it never returns a made-up number. With ``stop_at``
    (a :class:`StopRule`) the returned text ends where the rule ends it, finish ``stop``.
    """

    spec: str
    supports_logprobs: bool
    supports_native_tools: bool

    def generate(self, messages: Sequence[Message | dict[str, Any]],
                 **options: Any) -> Completion:
        """A reply to ``messages``; ``options`` are :class:`Request`'s fields (``temperature``,
        ``seed``, ``max_tokens``, ``stop``, ``tools``, ``stop_at``), with its defaults."""
        ...

    def score(
        self,
        messages: Sequence[Message | dict[str, Any]],
        candidates: Sequence[str],
    ) -> list[CandidateScore]: ...

    def close(self) -> None: ...


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
class ReplyEnd:
    """A :class:`StopRule` as a backend applies it: to the reply, read after the ``<think>``
    the chat template opened in the prompt (``opened_think``: a headless reasoning block, as
    DeepSeek-R1 distills write), so that no action drafted inside the reasoning ends it."""

    rule: StopRule
    opened_think: bool = False

    @property
    def key(self) -> str:
        return self.rule.key

    def __call__(self, text: str) -> int | None:
        if not self.opened_think:
            return self.rule(text)
        end = self.rule(OPEN + text)
        return None if end is None else max(end - len(OPEN), 0)


@dataclass(frozen=True)
class Request:
    """One ``generate`` call: its keywords and their defaults are written here, once.

    :meth:`ModelBase.generate` builds it (``messages`` as :class:`Message`\\s, ``stop`` a list,
    ``tools`` None when none were given) and hands it to ``answer``: a wrapper passes it on
    (:meth:`sent_to`), :meth:`Backend.answer` checks it and hands the backend's
    ``_generate`` the request to send: ``max_tokens`` the cap to send (the think budget
    included), ``stop`` without empty strings, ``stop_at`` a :class:`ReplyEnd` (None: the
    reply ends at a stop string, the end of text or the cap). A backend that streams asks
    ``stop_at`` as it goes (``llamacpp:``, ``hf:``); for every backend :meth:`Backend.answer`
    cuts the returned text where it says.
    """

    messages: list[Message]
    temperature: float = 0.0
    seed: int = 0
    max_tokens: int = 256
    stop: list[str] = field(default_factory=list)
    tools: list[dict[str, Any]] | None = None
    stop_at: StopRule | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "messages", as_messages(self.messages))
        object.__setattr__(self, "stop", list(self.stop or ()))
        object.__setattr__(self, "tools", list(self.tools) if self.tools else None)

    def options(self) -> dict[str, Any]:
        """The keywords of the ``generate`` call this request is."""
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name != "messages"}

    def sent_to(self, model: Model) -> Completion:
        """``model``'s reply to this request (what a wrapper asks the model it wraps)."""
        return model.generate(self.messages, **self.options())

    def ended(self, completion: Completion) -> Completion:
        """``completion`` cut where ``stop_at`` ends it (finish ``stop``: the reply was
        complete there), else as it came."""
        end = self.stop_at(completion.text) if self.stop_at is not None else None
        if end is None:
            return completion
        return completion.model_copy(update={"text": completion.text[:end],
                                             "finish_reason": "stop"})


#: slmbench's own chat templates (``templates/NAME.jinja``), named by ``?chat_format=NAME``
TEMPLATE_DIR = Path(__file__).parent / "templates"
BUILTIN_TEMPLATES = ("plain",)


@runtime_checkable
class PromptRenderer(Protocol):
    """A runtime that can show the prompt text it makes of a conversation (its chat template
    applied): ``llamacpp:``, ``llamaserver:`` and ``hf:``; what backend agreement shows first."""

    def render_prompt(self, messages: Sequence[Message]) -> str: ...


class ModelBase(ABC):
    """The base of every :class:`Model` slmbench ships (backends, runner wrappers, Ray
    replicas): :meth:`generate` builds one :class:`Request` and :meth:`answer` takes it."""

    spec: str
    supports_logprobs: bool
    supports_native_tools: bool

    def generate(self, messages: Sequence[Message | dict[str, Any]],
                 **options: Any) -> Completion:
        """:meth:`Model.generate`: the call as one :class:`Request`, answered by
        :meth:`answer` (an unknown keyword is a ``TypeError``, as in any call)."""
        return self.answer(Request(as_messages(messages), **options))

    @abstractmethod
    def answer(self, request: Request) -> Completion: ...

    @abstractmethod
    def score(self, messages: Sequence[Message | dict[str, Any]],
              candidates: Sequence[str]) -> list[CandidateScore]: ...

    @abstractmethod
    def close(self) -> None: ...


class Backend(ModelBase):
    """What every real backend shares; a backend implements :meth:`_generate`.

    :meth:`answer` checks the call once for all of them (tools on a backend without native
    tool calling, no token asked for), applies the spec's think budget, hands a
    :class:`Request` on and cuts the reply where its ``stop_at`` rule ends it (a backend that
    can render its prompt tells the rule whether the template opened a think block).
    :meth:`score` raises ``LogprobsUnsupportedError`` with the class's ``no_logprobs`` (the
    problem, the hint) unless the backend overrides it.
    """

    supports_logprobs = False
    supports_native_tools = False
    no_logprobs: tuple[str, str] = ("this backend gives no log-probabilities",
                                    "score with the llamacpp or hf backend on the same weights")

    def __init__(self, spec: str, thinking: Thinking | None = None) -> None:
        self.spec = spec
        self.thinking = thinking or Thinking()

    def answer(self, request: Request) -> Completion:
        if request.tools and not self.supports_native_tools:
            raise ConfigError(f"{self.spec} has no native tool calling",
                              "use the ReAct (text) scaffold with this backend")
        if request.max_tokens < 1:
            raise ConfigError(f"max_tokens={request.max_tokens} asks for no output",
                              "use max_tokens >= 1")
        ends = (None if request.stop_at is None
                else ReplyEnd(request.stop_at, self._opens_think(request.messages)))
        sent = replace(request, max_tokens=self.thinking.budget(request.max_tokens),
                       stop=[s for s in request.stop if s], stop_at=ends)
        return sent.ended(self._generate(sent))

    def _opens_think(self, messages: Sequence[Message]) -> bool:
        """Whether the prompt of ``messages`` ends inside an open ``<think>`` block (the
        template opened it); False where the backend cannot render its prompt."""
        if not isinstance(self, PromptRenderer):
            return False
        return self.render_prompt(list(messages)).rstrip().endswith(OPEN)

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
