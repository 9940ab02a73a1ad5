"""The records a model returns: chat messages, tool calls, completions, candidate scores.

Every backend speaks these (the ``Model`` protocol is in :mod:`slmbench.models.base`); a
trial stores them as they came.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

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

