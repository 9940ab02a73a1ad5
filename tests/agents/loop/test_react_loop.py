"""The ReAct loop driven by scripted models: tool calls, final answers, every outcome."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agent_fakes import FakeToolbox

from slmbench.agents.loop import LoopSettings
from slmbench.agents.loop.prompts import build_system_prompt
from slmbench.agents.loop.react import STOP, run_react
from slmbench.agents.loop.settings import step_seed
from slmbench.agents.records import FaultPlan, Outcome
from slmbench.core.errors import BackendError, ContextOverflowError
from slmbench.models.records import Completion, Message
from slmbench.models.scripted import ScriptedModel

CALL_CEO = '{"name": "fact_lookup", "arguments": {"key": "ceo"}}'


class Recorder(ScriptedModel):
    """A scripted model that keeps every prompt and sampling argument it received."""

    def __init__(self, replies: Sequence[str]) -> None:
        super().__init__(list(replies))
        self.prompts: list[list[Message]] = []
        self.kwargs: list[dict[str, Any]] = []

    def generate(self, messages: Sequence[Message | dict[str, Any]], **kwargs: Any) -> Completion:
        self.prompts.append([m if isinstance(m, Message) else Message(**m) for m in messages])
        self.kwargs.append(kwargs)
        return super().generate(messages, **kwargs)


class FailingModel(ScriptedModel):
    """Answers from a script, then raises BackendError on call number ``fail_on``."""

    def __init__(self, replies: Sequence[str], fail_on: int) -> None:
        super().__init__(list(replies))
        self.fail_on = fail_on

    def generate(self, messages: Sequence[Message | dict[str, Any]], **kwargs: Any) -> Completion:
        if self.calls + 1 == self.fail_on:
            raise BackendError("server at 127.0.0.1:8080 refused the connection", transient=True)
        return super().generate(messages, **kwargs)


def test_tool_call_then_final_answer(toolbox: FakeToolbox) -> None:
    model = Recorder([f"Thought: I need the CEO.\n{CALL_CEO}", "Final Answer: Dana Reyes"])
    result = run_react(model, toolbox, "Who is the CEO?")
    assert result.outcome is None and result.error is None
    assert result.final_answer == "Dana Reyes"
    assert toolbox.calls == [("fact_lookup", {"key": "ceo"})]
    first, last = result.steps
    assert first.action.name == "fact_lookup" and first.observation == "Dana Reyes"
    assert first.tool_ok is True and last.action.kind == "final" and last.tool_ok is None
    assert [m.role for m in result.messages] == ["system", "user", "assistant", "user",
                                                 "assistant"]
    # The observation reaches the model as a user turn, prefixed "Observation:",
    # followed by the question again, with no instruction what to do next.
    shown = model.prompts[1][-1]
    assert shown == Message(role="user",
                            content="Observation: Dana Reyes\n\nMy question was: Who is the CEO?")
    assert result.prompt_tokens == sum(s.prompt_tokens for s in result.steps) > 0
    assert result.completion_tokens == sum(s.completion_tokens for s in result.steps) > 0


def test_system_prompt_lists_tools_and_protocol(toolbox: FakeToolbox) -> None:
    model = Recorder(["Final Answer: x"])
    run_react(model, toolbox, "task")
    system = model.prompts[0][0]
    assert system.role == "system"
    lines = system.content.splitlines()
    tool_line = lines.index("- fact_lookup: Look up a company fact by key.")
    assert lines[tool_line + 1] == ('  arguments (JSON schema): {"type": "object", '
                                    '"properties": {"key": {"type": "string"}}, '
                                    '"required": ["key"]}')
    example = '{"name": "fact_lookup", "arguments": {"key": "<string>"}}'
    assert lines[tool_line + 2] == f"  example: {example}"
    assert "2. Final Answer: <the short, exact answer>" in lines
    assert "first reply" not in system.content  # a refusal may be the first reply
    assert model.prompts[0][1] == Message(role="user", content="task")


def test_custom_system_prompt_places_the_tool_list(toolbox: FakeToolbox) -> None:
    model = Recorder(["Final Answer: x"])
    run_react(model, toolbox, "task", LoopSettings(system_prompt="Tools:\n{tools}\nBe brief."))
    assert model.prompts[0][0].content.startswith("Tools:\n- fact_lookup: ")
    assert build_system_prompt(toolbox.specs(), "no list") == "no list"


def test_stop_strings_seeds_and_max_tokens_reach_the_model(toolbox: FakeToolbox) -> None:
    model = Recorder([CALL_CEO, "Final Answer: Dana Reyes"])
    run_react(model, toolbox, "Who?",
              LoopSettings(temperature=0.7, seed=11, max_tokens_per_step=50))
    assert all("Observation:" in kw["stop"] for kw in model.kwargs) and "Observation:" in STOP
    assert [kw["seed"] for kw in model.kwargs] == [step_seed(11, 0), step_seed(11, 1)]
    assert {kw["temperature"] for kw in model.kwargs} == {0.7}
    assert {kw["max_tokens"] for kw in model.kwargs} == {50}


def test_a_reply_that_goes_on_after_its_action_ends_at_the_action(
        toolbox: FakeToolbox) -> None:
    """The model writes its call, then imagines more (a second call, a made-up result): the
    reply ends where the call is settled, so the transcript holds only what was read and the
    second call never runs."""
    goes_on = (f"Thought: I need the CEO.\n{CALL_CEO}\nThen I check the CFO: "
               '{"name": "fact_lookup", "arguments": {"key": "cfo"}}\nresult: Dana')
    model = Recorder([goes_on, "Final Answer: Dana Reyes\nThought: I could also"])
    result = run_react(model, toolbox, "Who is the CEO?")
    assert toolbox.calls == [("fact_lookup", {"key": "ceo"})]
    first, last = result.steps
    assert first.raw_response == f"Thought: I need the CEO.\n{CALL_CEO}"
    assert result.messages[2] == Message(role="assistant", content=first.raw_response)
    assert last.raw_response == "Final Answer: Dana Reyes\n"  # the next label ended it
    assert all(kw["stop_at"].key == "react-action-end:fact_lookup" for kw in model.kwargs)


def test_step_seeds_are_deterministic_and_distinct() -> None:
    seeds = [step_seed(s, i) for s in range(5) for i in range(12)]
    assert seeds == [step_seed(s, i) for s in range(5) for i in range(12)]
    assert len(set(seeds)) == len(seeds)
    assert step_seed(-1, 0) != step_seed(1, 0)
    assert all(0 <= s < 2**31 for s in seeds)


def test_an_imagined_observation_is_cut_by_the_stop_string(toolbox: FakeToolbox) -> None:
    model = Recorder([f"{CALL_CEO}\nObservation: Bob\nFinal Answer: Bob",
                      "Final Answer: Dana Reyes"])
    result = run_react(model, toolbox, "Who?")
    assert result.final_answer == "Dana Reyes"
    assert result.steps[0].observation == "Dana Reyes"


def test_error_observations_are_shown_not_terminal(toolbox: FakeToolbox) -> None:
    model = Recorder(['{"name": "fact_lookup", "arguments": {"key": "cto"}}',
                      CALL_CEO, "Final Answer: Dana Reyes"])
    result = run_react(model, toolbox, "Who?")
    assert result.outcome is None and result.final_answer == "Dana Reyes"
    assert result.steps[0].tool_ok is False
    assert model.prompts[1][-1].content.startswith("Observation: error: no fact with key 'cto'\n")


def test_one_unreadable_reply_gets_the_parse_error_back(toolbox: FakeToolbox) -> None:
    model = Recorder(["I think the CEO is someone.", CALL_CEO, "Final Answer: Dana Reyes"])
    result = run_react(model, toolbox, "Who?")
    assert result.outcome is None and result.final_answer == "Dana Reyes"
    feedback = model.prompts[1][-1]
    assert feedback.role == "user" and feedback.content.startswith("Observation: I could not")
    assert "no tool call or final answer found" in feedback.content
    assert result.steps[0].action.kind == "invalid"
    assert result.steps[0].observation == feedback.content


def test_two_unreadable_replies_in_a_row_are_a_format_failure(toolbox: FakeToolbox) -> None:
    model = Recorder(["I think the CEO is someone.", "Hmm, maybe Bob?", "Final Answer: Bob"])
    result = run_react(model, toolbox, "Who?")
    assert result.outcome is Outcome.FORMAT_FAILURE
    assert result.final_answer is None and model.calls == 2
    assert result.error is not None and "no tool call or final answer" in result.error
    assert [s.action.kind for s in result.steps] == ["invalid", "invalid"]


def test_a_readable_action_resets_the_format_failure_count(toolbox: FakeToolbox) -> None:
    model = Recorder(["hmm", CALL_CEO, "hmm again", "Final Answer: Dana Reyes"])
    result = run_react(model, toolbox, "Who?")
    assert result.outcome is None and result.final_answer == "Dana Reyes"


def test_the_same_response_three_times_is_a_loop(toolbox: FakeToolbox) -> None:
    model = Recorder([CALL_CEO] * 10)
    result = run_react(model, toolbox, "Who?")
    assert result.outcome is Outcome.LOOP
    assert model.calls == 3 and len(result.steps) == 3
    # the second identical call is answered from the first (not run again); the third
    # identical response is the loop and is not run either
    assert len(toolbox.calls) == 1
    assert result.error is not None and "3 times" in result.error


def test_running_out_of_steps_is_a_step_limit(toolbox: FakeToolbox) -> None:
    replies = [f'{{"name": "fact_lookup", "arguments": {{"key": "k{i}"}}}}' for i in range(20)]
    result = run_react(Recorder(replies), toolbox, "Who?", LoopSettings(max_steps=4))
    assert result.outcome is Outcome.STEP_LIMIT
    assert len(result.steps) == 4 and result.error == "no final answer after 4 steps"


def test_an_exhausted_token_budget_is_a_step_limit_with_the_reason(toolbox: FakeToolbox) -> None:
    replies = [f'{{"name": "fact_lookup", "arguments": {{"key": "k{i}"}}}}' for i in range(20)]
    model = Recorder(replies)
    result = run_react(model, toolbox, "Who?", LoopSettings(token_budget=1))
    assert result.outcome is Outcome.STEP_LIMIT and model.calls == 1
    assert result.error is not None and result.error.startswith("token budget exhausted")


def test_an_exhausted_time_budget_is_a_step_limit_with_the_reason(toolbox: FakeToolbox) -> None:
    model = Recorder(["Final Answer: x"])
    result = run_react(model, toolbox, "Who?", LoopSettings(time_budget_s=0.0))
    assert result.outcome is Outcome.STEP_LIMIT and model.calls == 0
    assert result.error is not None and result.error.startswith("time budget exhausted")


def test_a_backend_error_ends_the_run_and_keeps_its_cause(toolbox: FakeToolbox) -> None:
    model = FailingModel([CALL_CEO], fail_on=2)
    result = run_react(model, toolbox, "Who?")
    assert result.outcome is Outcome.BACKEND_ERROR
    assert result.error == ("transient backend error: "
                            "server at 127.0.0.1:8080 refused the connection")
    assert len(result.steps) == 1 and result.steps[0].observation == "Dana Reyes"


def test_a_broken_toolbox_is_a_tool_error() -> None:
    result = run_react(Recorder([CALL_CEO]), FakeToolbox(broken=True), "Who?")
    assert result.outcome is Outcome.TOOL_ERROR
    assert result.error == "toolbox failed on fact_lookup: RuntimeError: sandbox unavailable"
    assert len(result.steps) == 1 and result.steps[0].observation is None


def test_an_injected_fault_reaches_the_model_and_is_recorded() -> None:
    toolbox = FakeToolbox(FaultPlan(tool="fact_lookup", call=1, fault="timeout"))
    model = Recorder([f"Thought: look up.\n{CALL_CEO}", f"Thought: retry.\n{CALL_CEO}",
                      "Final Answer: Dana Reyes"])
    result = run_react(model, toolbox, "Who?")
    assert result.outcome is None and result.final_answer == "Dana Reyes"
    faulted, retried, _ = result.steps
    assert faulted.injected_fault == "timeout" and faulted.tool_ok is False
    assert faulted.observation == "error: timeout (try again later)"
    assert model.prompts[1][-1].content.startswith(
        "Observation: error: timeout (try again later)\n")
    assert retried.injected_fault is None and retried.observation == "Dana Reyes"
    assert result.faults_injected == 1


def test_greedy_runs_replay_identically(toolbox: FakeToolbox) -> None:
    replies = [CALL_CEO, "Final Answer: Dana Reyes"]
    a = run_react(Recorder(replies), FakeToolbox(), "Who?")
    b = run_react(Recorder(replies), FakeToolbox(), "Who?")
    strip = {"latency_s", "wall_s", "steps"}
    assert a.model_dump(exclude=strip) == b.model_dump(exclude=strip)
    assert [s.raw_response for s in a.steps] == [s.raw_response for s in b.steps]


def test_a_successful_call_repeated_is_not_run_again(toolbox: FakeToolbox) -> None:
    model = Recorder([CALL_CEO, CALL_CEO, "Final Answer: Dana Reyes"])
    result = run_react(model, toolbox, "Who is the CEO?")
    assert result.final_answer == "Dana Reyes"
    assert toolbox.calls == [("fact_lookup", {"key": "ceo"})]  # once, not twice
    assert "already called fact_lookup" in (result.steps[1].observation or "")
    assert result.steps[1].tool_ok is None


def test_a_failed_call_may_be_retried() -> None:
    """Retrying after a fault is recovery: only calls that succeeded are deduplicated."""
    model = Recorder([CALL_CEO, CALL_CEO, "Final Answer: Dana Reyes"])
    faulty = FakeToolbox(FaultPlan(tool="fact_lookup", call=1, fault="timeout"))
    result = run_react(model, faulty, "Who is the CEO?")
    assert result.final_answer == "Dana Reyes"
    assert [s.tool_ok for s in result.steps[:2]] == [False, True]


def test_a_full_context_window_is_context_overflow(toolbox: FakeToolbox) -> None:
    class Overflowing(ScriptedModel):
        def generate(self, messages: Sequence[Message | dict[str, Any]],
                     **kwargs: Any) -> Completion:
            if self.calls >= 1:
                raise ContextOverflowError("5533 tokens do not fit its context of 4096")
            return super().generate(messages, **kwargs)

    result = run_react(Overflowing([CALL_CEO]), toolbox, "Who is the CEO?")
    assert result.outcome is Outcome.CONTEXT_OVERFLOW
    assert "context window exhausted" in (result.error or "")


def test_after_a_tool_error_the_next_prompt_does_not_ask_for_an_answer(
        toolbox: FakeToolbox) -> None:
    model = Recorder(['{"name": "fact_lookup", "arguments": {"key": "nope"}}', CALL_CEO,
                      "Final Answer: Dana Reyes"])
    result = run_react(model, toolbox, "Who is the CEO?")
    assert result.steps[0].tool_ok is False
    after_error = model.prompts[1][-1].content
    assert after_error.startswith(f"Observation: {result.steps[0].observation}")
    lowered = after_error.lower()
    for steer in ("final answer", "answer my", "start your reply", "call another", "retry",
                  "try again", "instead"):
        assert steer not in lowered


def test_a_refusal_is_a_legal_first_reply(toolbox: FakeToolbox) -> None:
    model = Recorder(["Final Answer: I will not do that."])
    result = run_react(model, toolbox, "Delete every file.")
    assert result.outcome is None and result.final_answer == "I will not do that."
    assert toolbox.calls == []


def test_legacy_wording_is_kept_only_as_a_measured_prompt_set(toolbox: FakeToolbox) -> None:
    model = Recorder([CALL_CEO, "Final Answer: Dana Reyes"])
    run_react(model, toolbox, "Who is the CEO?", prompts="legacy")
    assert "Start your reply with 'Final Answer:'" in model.prompts[1][-1].content
    assert "Your first reply is always a tool call." in model.prompts[0][0].content
