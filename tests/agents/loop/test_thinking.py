"""Reasoning models in the agent loops: think blocks are reasoning, never actions; a reply
cut by the token cap is ``truncated``; overflow and configuration faults are their own; a
step keeps the server's own timings beside the wall time."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
from agent_fakes import FakeToolbox
from hypothesis import given
from hypothesis import strategies as st

from slmbench.agents.loop.native import run_native
from slmbench.agents.loop.react import run_react
from slmbench.agents.records import Outcome, Step
from slmbench.core.errors import ContextOverflowError
from slmbench.models.faults import ConfigurationFault
from slmbench.models.records import Completion, FinishReason, Message, ServerTimings, ToolCall
from slmbench.models.thinking import split_thinking

CALL_CEO = '{"name": "fact_lookup", "arguments": {"key": "ceo"}}'
CALL_CFO = '{"name": "fact_lookup", "arguments": {"key": "cfo"}}'
plain = st.text(alphabet=st.characters(blacklist_characters="<>"), max_size=60)


@given(plain, plain)
def test_qwen3_style_block_is_split_off(reasoning: str, answer: str) -> None:
    assert split_thinking(f"<think>{reasoning}</think>{answer}") == (reasoning.strip(),
                                                                     answer.lstrip())
    assert split_thinking(f"\n <think>{reasoning}</think>\n\n{answer}")[1] == answer.lstrip()


@given(plain, plain)
def test_r1_headless_block_is_split_off(reasoning: str, answer: str) -> None:
    assert split_thinking(f"{reasoning}</think>{answer}") == (reasoning.strip(),
                                                              answer.lstrip())


@given(plain)
def test_a_reply_without_a_block_is_unchanged_and_an_unclosed_one_is_all_reasoning(
        text: str) -> None:
    assert split_thinking(text) == ("", text)
    assert split_thinking(f"<think>{text}") == (text.strip(), "")


def test_only_a_leading_block_counts() -> None:
    text = "Final Answer: the tag <think> opens a block; </think> closes it"
    assert split_thinking(text) == ("", text)


class Replies:
    """A model answering from a list of (text, finish_reason, server reasoning)."""

    spec = "fake:thinking"
    supports_logprobs = False
    supports_native_tools = True

    def __init__(self, replies: Sequence[tuple[str, FinishReason, str]],
                 calls: Sequence[tuple[ToolCall, ...]] = (), fail: Exception | None = None,
                 fail_on: int = 0) -> None:
        self.replies, self.calls = list(replies), list(calls)
        self.fail, self.fail_on = fail, fail_on
        self.n = 0

    def generate(self, messages: Sequence[Message | dict[str, Any]], **kwargs: Any) -> Completion:
        self.n += 1
        if self.fail is not None and self.n == self.fail_on:
            raise self.fail
        text, finish, reasoning = self.replies[min(self.n, len(self.replies)) - 1]
        calls = self.calls[self.n - 1] if self.n <= len(self.calls) else ()
        return Completion(text=text, prompt_tokens=10, completion_tokens=7, latency_s=0.1,
                          finish_reason=finish, model=self.spec, tool_calls=calls,
                          reasoning=reasoning)

    def score(self, messages: Any, candidates: Any) -> list[Any]:
        raise NotImplementedError

    def close(self) -> None:
        return None


def test_a_tool_call_inside_the_reasoning_is_not_the_action(toolbox: FakeToolbox) -> None:
    model = Replies([(f"<think>I could send {CALL_CFO}, but no.</think>\n{CALL_CEO}", "stop", ""),
                     (f"Maybe {CALL_CFO}? No.</think>\nFinal Answer: Dana Reyes", "stop", "")])
    result = run_react(model, toolbox, "Who is the CEO?")
    assert toolbox.calls == [("fact_lookup", {"key": "ceo"})]
    assert result.final_answer == "Dana Reyes"
    first, last = result.steps
    assert "cfo" in (first.reasoning or "") and "cfo" in (last.reasoning or "")
    assert first.raw_response.startswith("<think>")  # the raw reply is kept whole
    assert all("<think>" not in m.content and "</think>" not in m.content
               for m in result.messages if m.role == "assistant")


def test_reasoning_the_server_returned_apart_is_kept(toolbox: FakeToolbox) -> None:
    model = Replies([(CALL_CEO, "stop", "The CEO is a fact: look it up."),
                     ("Final Answer: Dana Reyes", "stop", "")])
    result = run_react(model, toolbox, "Who is the CEO?")
    assert result.steps[0].reasoning == "The CEO is a fact: look it up."
    assert result.steps[1].reasoning is None


def test_a_step_keeps_the_servers_timings_beside_the_wall_time(toolbox: FakeToolbox) -> None:
    timed = ServerTimings(prompt_s=0.2, eval_s=0.5)

    class Timed(Replies):
        def generate(self, messages: Sequence[Message | dict[str, Any]],
                     **kwargs: Any) -> Completion:
            return super().generate(messages, **kwargs).model_copy(
                update={"latency_s": 0.7, "wall_s": 0.9, "timings": timed})

    result = run_react(Timed([(CALL_CEO, "stop", ""), ("Final Answer: Dana Reyes", "stop", "")]),
                       toolbox, "Who is the CEO?")
    step = result.steps[0]
    assert (step.latency_s, step.wall_s, step.timings) == (0.7, 0.9, timed)
    stored_before = step.model_dump(mode="json", exclude={"wall_s", "timings"})
    assert Step.model_validate(stored_before).timings is None  # an older record still loads


def test_a_reply_cut_inside_its_reasoning_is_truncated_not_a_format_failure(
        toolbox: FakeToolbox) -> None:
    model = Replies([("<think>The user wants the CEO. Let me think about which", "length", "")])
    result = run_react(model, toolbox, "Who is the CEO?")
    assert result.outcome is Outcome.TRUNCATED and "token cap" in (result.error or "")
    assert len(result.steps) == 1


def test_empty_content_with_server_thinking_cut_by_the_cap_is_truncated(
        toolbox: FakeToolbox) -> None:
    result = run_react(Replies([("", "length", "Okay, the user asks")]), toolbox, "CEO?")
    assert result.outcome is Outcome.TRUNCATED
    assert result.steps[0].reasoning == "Okay, the user asks"


def test_a_cut_reply_whose_action_was_read_goes_on(toolbox: FakeToolbox) -> None:
    model = Replies([(f"{CALL_CEO}\nThought: and then I", "length", ""),
                     ("Final Answer: Dana Reyes", "stop", "")])
    result = run_react(model, toolbox, "Who is the CEO?")
    assert result.outcome is None and result.final_answer == "Dana Reyes"


def test_native_final_answer_carries_no_reasoning_and_a_cut_reply_is_truncated(
        toolbox: FakeToolbox) -> None:
    call = (ToolCall(name="fact_lookup", arguments={"key": "ceo"}, id="c1"),)
    model = Replies([("<think>look it up</think>", "tool_calls", ""),
                     ("<think>It says Dana.</think>\n\nDana Reyes", "stop", "")], calls=[call])
    result = run_native(model, toolbox, "Who is the CEO?")
    assert result.final_answer == "Dana Reyes"
    assert result.steps[-1].reasoning == "It says Dana."
    cut = run_native(Replies([("<think>It says", "length", "")]), FakeToolbox(), "CEO?")
    assert cut.outcome is Outcome.TRUNCATED


def test_overflow_is_context_overflow_but_a_first_prompt_that_does_not_fit_is_not_the_models(
        toolbox: FakeToolbox) -> None:
    overflow = ContextOverflowError("context_truncated: 1026 of at least 2100 prompt tokens")
    later = run_react(Replies([(CALL_CEO, "stop", "")], fail=overflow, fail_on=2), toolbox,
                      "Who is the CEO?")
    assert later.outcome is Outcome.CONTEXT_OVERFLOW and "context_truncated" in later.error
    first = run_react(Replies([(CALL_CEO, "stop", "")], fail=overflow, fail_on=1),
                      FakeToolbox(), "Who is the CEO?")
    assert first.outcome is Outcome.BACKEND_ERROR


@pytest.mark.parametrize("loop", [run_react, run_native])
def test_a_configuration_fault_is_raised_not_stored(loop: Any, toolbox: FakeToolbox) -> None:
    fault = ConfigurationFault("the server answered 404: model 'qwen9' not found",
                               "ollama pull qwen9")
    with pytest.raises(ConfigurationFault):
        loop(Replies([(CALL_CEO, "stop", "")], fail=fault, fail_on=1), toolbox, "CEO?")
