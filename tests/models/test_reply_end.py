"""A stop rule on every backend: ``Backend.generate`` cuts the reply where the rule ends it,
after the think block a template opened; the scripted model cuts the same way."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from slmbench.models.base import Backend, Request
from slmbench.models.records import Completion, Message
from slmbench.models.scripted import ScriptedModel

HI = [Message(role="user", content="hi")]


@dataclass(frozen=True)
class AtBrace:
    key: str = "at-brace"

    def __call__(self, text: str) -> int | None:
        """Just past the first ``}`` after a leading think block (None inside one)."""
        start = 0
        if text.lstrip().startswith("<think>"):
            start = text.find("</think>")
            if start < 0:
                return None  # still reasoning
        i = text.find("}", start)
        return None if i < 0 else i + 1


class Replying(Backend):
    """A backend that cannot stream the rule: it returns its whole reply (a server)."""

    def __init__(self, reply: str, prompt: str = "<|user|>hi<|assistant|>") -> None:
        super().__init__("fake:replying")
        self.reply, self.prompt = reply, prompt

    def render_prompt(self, messages: Sequence[Message]) -> str:
        return self.prompt

    def _generate(self, request: Request) -> Completion:
        return self._completion(self.reply, tokens=(3, 40), finish="length", wall=0.1)


def test_a_backend_cuts_the_reply_where_the_rule_ends_it_and_calls_it_stopped() -> None:
    out = Replying('{"a": 1} and then more').generate(HI, stop_at=AtBrace())
    assert out.text == '{"a": 1}'
    assert out.finish_reason == "stop"
    assert out.completion_tokens == 40  # what was spent stays counted


def test_without_a_rule_or_an_end_the_reply_is_as_it_came() -> None:
    assert Replying('{"a": 1} more').generate(HI).text == '{"a": 1} more'
    out = Replying("no brace").generate(HI, stop_at=AtBrace())
    assert (out.text, out.finish_reason) == ("no brace", "length")


def test_reasoning_the_template_opened_does_not_end_the_reply() -> None:
    """The prompt ends in ``<think>``: the reply is headless reasoning, and a brace drafted
    inside it is not the reply's end; the one after ``</think>`` is."""
    reply = 'draft {"x": 0} hmm</think>{"a": 1} more'
    opened = Replying(reply, prompt="<|assistant|><think>\n").generate(HI, stop_at=AtBrace())
    assert opened.text == 'draft {"x": 0} hmm</think>{"a": 1}'
    plain = Replying(reply).generate(HI, stop_at=AtBrace())
    assert plain.text == 'draft {"x": 0}'  # no think opened: the first brace ends it


def test_the_scripted_model_cuts_like_a_backend() -> None:
    model = ScriptedModel(lambda msgs: '{"a": 1} {"b": 2}', spec="scripted:inline")
    out = model.generate(HI, stop_at=AtBrace())
    assert out.text == '{"a": 1}'
