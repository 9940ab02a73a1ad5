"""``generate`` builds one ``Request``; backends and wrappers take it (issue #58)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from slmbench.agents.runner.retry import RetryingModel, RetryPolicy
from slmbench.models.base import Backend, ModelBase, Request
from slmbench.models.records import CandidateScore, Completion, Message

MSGS = [{"role": "user", "content": "hello"}]


class Recording(ModelBase):
    """A model that keeps each request it is asked."""

    spec = "recording:x"
    supports_logprobs = False
    supports_native_tools = False

    def __init__(self) -> None:
        self.requests: list[Request] = []

    def answer(self, request: Request) -> Completion:
        self.requests.append(request)
        return Completion(text="ok", model=self.spec, prompt_tokens=1, completion_tokens=1,
                          latency_s=0.0, finish_reason="stop")

    def score(self, messages: Sequence[Message | dict[str, Any]],
              candidates: Sequence[str]) -> list[CandidateScore]:
        return []

    def close(self) -> None:
        return None


class Sent(Backend):
    """A backend that keeps the request it is handed to send."""

    def __init__(self) -> None:
        super().__init__("sent:x")
        self.sent: list[Request] = []

    def _generate(self, request: Request) -> Completion:
        self.sent.append(request)
        return self._completion("a b", tokens=(1, 2), finish="stop", wall=0.0)


def test_generate_builds_one_request_with_the_defaults() -> None:
    model = Recording()
    model.generate(MSGS)
    (request,) = model.requests
    assert request == Request([Message(role="user", content="hello")], temperature=0.0, seed=0,
                              max_tokens=256, stop=[], tools=None, stop_at=None)


def test_an_unknown_keyword_is_refused_as_in_any_call() -> None:
    with pytest.raises(TypeError, match="temprature"):
        Recording().generate(MSGS, temprature=0.3)


def test_a_wrapper_passes_the_same_request_on() -> None:
    inner = Recording()
    wrapped = RetryingModel(inner, RetryPolicy(), seed=0)
    wrapped.generate(MSGS, temperature=0.7, seed=3, max_tokens=9, stop=["x"],
                     tools=[{"type": "function"}])
    assert inner.requests == [Request(MSGS, temperature=0.7, seed=3, max_tokens=9,  # type: ignore[arg-type]
                                      stop=["x"], tools=[{"type": "function"}])]
    assert inner.requests[0].options()["seed"] == 3


def test_a_backend_sends_the_stop_strings_it_can_and_its_think_budget() -> None:
    model = Sent()
    model.generate(MSGS, stop=["", "b"], max_tokens=5, tools=[])
    (sent,) = model.sent
    assert (sent.stop, sent.max_tokens, sent.tools) == (["b"], 5, None)
