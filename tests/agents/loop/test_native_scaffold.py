"""The native tool-calling scaffold, driven by a fake backend that returns tool calls."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
from agent_fakes import FakeToolbox

from slmbench.agents.loop import LoopSettings
from slmbench.agents.loop.native import run_native
from slmbench.agents.records import FaultPlan, Outcome
from slmbench.core.errors import ConfigError, LogprobsUnsupportedError
from slmbench.models.records import CandidateScore, Completion, Message, ToolCall
from slmbench.models.scripted import ScriptedModel

Reply = str | list[ToolCall]


class NativeFake:
    """A backend with native tool calling: each reply is text or a list of tool calls."""

    spec = "fake:native"
    supports_logprobs = False
    supports_native_tools = True

    def __init__(self, replies: Sequence[Reply]) -> None:
        self.replies = list(replies)
        self.prompts: list[list[Message]] = []
        self.tools: list[Any] = []

    def generate(self, messages: Sequence[Message | dict[str, Any]], *, temperature: float = 0.0,
                 seed: int = 0, max_tokens: int = 256, stop: Sequence[str] | None = None,
                 tools: Sequence[dict[str, Any]] | None = None,
                 stop_at: Any = None) -> Completion:
        self.prompts.append([m if isinstance(m, Message) else Message(**m) for m in messages])
        self.tools.append(tools)
        reply = self.replies[min(len(self.prompts), len(self.replies)) - 1]
        text, calls = (reply, ()) if isinstance(reply, str) else ("", tuple(reply))
        return Completion(text=text, prompt_tokens=10, completion_tokens=5, latency_s=0.01,
                          finish_reason="tool_calls" if calls else "stop", model=self.spec,
                          tool_calls=calls)

    def score(self, messages: Sequence[Message | dict[str, Any]],
              candidates: Sequence[str]) -> list[CandidateScore]:
        raise LogprobsUnsupportedError("fake:native has no log-probabilities")

    def close(self) -> None:
        return None


CEO = ToolCall(name="fact_lookup", arguments={"key": "ceo"}, id="c1")


def test_tool_calls_run_and_results_go_back_as_tool_messages(toolbox: FakeToolbox) -> None:
    model = NativeFake([[CEO], "Dana Reyes"])
    result = run_native(model, toolbox, "Who is the CEO?")
    assert result.outcome is None and result.final_answer == "Dana Reyes"
    assert result.scaffold == "native"
    assert model.tools[0] == [spec.openai_format() for spec in toolbox.specs()]
    assistant, tool_msg = model.prompts[1][-2:]
    assert assistant.role == "assistant" and assistant.tool_calls == (CEO,)
    assert tool_msg == Message(role="tool", content="Dana Reyes", tool_call_id="c1",
                               name="fact_lookup")
    assert result.steps[0].action.format == "native" and result.steps[0].tool_ok is True
    assert result.prompt_tokens == 20 and result.completion_tokens == 10


def test_every_call_of_a_response_runs_and_missing_ids_are_filled(toolbox: FakeToolbox) -> None:
    calls = [ToolCall(name="fact_lookup", arguments={"key": "ceo"}),
             ToolCall(name="fact_lookup", arguments={"key": "capital_of_france"})]
    model = NativeFake([calls, "Final Answer: Dana Reyes, Paris"])
    result = run_native(model, toolbox, "Two facts")
    assert result.final_answer == "Dana Reyes, Paris"  # a Final Answer: prefix is removed
    assert [s.observation for s in result.steps[:2]] == ["Dana Reyes", "Paris"]
    ids = [m.tool_call_id for m in model.prompts[1] if m.role == "tool"]
    assert ids == ["call_0_0", "call_0_1"]
    assert [c.id for c in model.prompts[1][2].tool_calls] == ids


def test_an_injected_fault_reaches_the_model_as_a_tool_message() -> None:
    toolbox = FakeToolbox(FaultPlan(tool="fact_lookup", call=1, fault="rate_limit"))
    model = NativeFake([[CEO], [CEO.model_copy(update={"id": "c2"})], "Dana Reyes"])
    result = run_native(model, toolbox, "Who?")
    assert result.steps[0].injected_fault == "rate_limit"
    assert model.prompts[1][-1].content == "error: rate_limit (try again later)"
    assert result.final_answer == "Dana Reyes" and result.faults_injected == 1


def test_empty_replies_are_a_format_failure_after_one_retry(toolbox: FakeToolbox) -> None:
    model = NativeFake(["", "  "])
    result = run_native(model, toolbox, "Who?")
    assert result.outcome is Outcome.FORMAT_FAILURE
    assert model.prompts[1][-1].role == "user" and "empty" in model.prompts[1][-1].content


def test_the_same_tool_call_three_times_is_a_loop(toolbox: FakeToolbox) -> None:
    model = NativeFake([[ToolCall(name="fact_lookup", arguments={"key": "ceo"}, id=f"c{i}")]
                        for i in range(5)])
    result = run_native(model, toolbox, "Who?")
    assert result.outcome is Outcome.LOOP and len(toolbox.calls) == 2


def test_step_limit_and_broken_toolbox(toolbox: FakeToolbox) -> None:
    replies = [[ToolCall(name="fact_lookup", arguments={"key": f"k{i}"})] for i in range(9)]
    limited = run_native(NativeFake(replies), toolbox, "Who?", LoopSettings(max_steps=3))
    assert limited.outcome is Outcome.STEP_LIMIT and len(limited.steps) == 3
    broken = run_native(NativeFake([[CEO]]), FakeToolbox(broken=True), "Who?")
    assert broken.outcome is Outcome.TOOL_ERROR and "sandbox unavailable" in (broken.error or "")


def test_a_model_without_native_tools_is_sent_to_the_react_scaffold(
    toolbox: FakeToolbox,
) -> None:
    with pytest.raises(ConfigError, match="no native tool calling") as info:
        run_native(ScriptedModel(["Final Answer: x"]), toolbox, "Who?")
    assert "react" in info.value.hint
