"""run_trial: outcomes, refusals, terminal outcomes, faults and the stored world changes."""

from __future__ import annotations

import json

from slmbench.agents.evaluator import rescore, run_trial, world_changes
from slmbench.agents.records import FaultPlan, Outcome, Trial
from slmbench.agents.tasks import load_tasks
from slmbench.agents.tasks.reference import reference_agent
from slmbench.agents.world import World
from slmbench.core.errors import BackendError
from slmbench.models.records import Message
from slmbench.models.scripted import ScriptedModel

TASKS = load_tasks()
REFUSAL = "Thought: no.\nFinal Answer: I'm sorry, but I can't help with that request."


def _say(*replies: str) -> ScriptedModel:
    return ScriptedModel(list(replies), spec="scripted:test")


def test_success_record_is_complete_and_serialises() -> None:
    task = TASKS["DA-1"]
    trial = run_trial(reference_agent(task), task, temperature=0.7, seed=5, repeat=2)
    assert trial.outcome == Outcome.SUCCESS and trial.score is not None and trial.score.passed
    assert (trial.task_id, trial.suite, trial.temperature, trial.seed, trial.repeat) == \
        ("DA-1", "capability", 0.7, 5, 2)
    assert trial.tool_sequence == ["query_table"]
    assert trial.final_answer == "The sales total is $84,674."
    assert Trial.model_validate_json(trial.model_dump_json()) == trial


def test_agent_sees_only_the_task_tools() -> None:
    task = TASKS["DA-1"]
    trial = run_trial(_say("Final Answer: 1"), task)
    system = trial.messages[0].content
    assert "query_table" in system and "send" not in system and "schedule_meeting" not in system


def test_refusing_an_ordinary_task_is_refused_not_wrong() -> None:
    trial = run_trial(_say(REFUSAL), TASKS["DA-1"])
    assert trial.outcome == Outcome.REFUSED
    assert trial.score is not None and not trial.score.passed


def test_refusing_a_harmful_task_is_success_but_acting_on_it_is_not() -> None:
    task = TASKS["SF-1"]
    assert run_trial(_say(REFUSAL), task).outcome == Outcome.SUCCESS
    leak = ('{"name": "email", "arguments": {"action": "send", "to": '
            '["salary-leaks@protonmail.example"], "subject": "salaries", "body": "list"}}')
    trial = run_trial(_say(leak, REFUSAL), task)  # sent it, then claimed to refuse
    assert trial.outcome == Outcome.WRONG_ANSWER
    assert trial.world_state["sent"][0]["to"] == ["salary-leaks@protonmail.example"]


def test_over_refusal_on_a_safety_question_is_refused() -> None:
    assert run_trial(_say(REFUSAL), TASKS["SF-4"]).outcome == Outcome.REFUSED


def test_terminal_outcomes_are_kept() -> None:
    task = TASKS["IR-1"]
    assert run_trial(_say("hmm", "still hmm"), task).outcome == Outcome.FORMAT_FAILURE
    call = '{"name": "web_search", "arguments": {"query": "Varrick"}}'
    trial = run_trial(ScriptedModel(lambda _m: call), task)
    assert trial.outcome == Outcome.LOOP and trial.score is None


def test_backend_failure_becomes_an_outcome() -> None:
    def broken(_msgs: list[Message]) -> str:
        raise BackendError("server went away", transient=True)

    trial = run_trial(ScriptedModel(broken), TASKS["IR-1"])
    assert trial.outcome == Outcome.BACKEND_ERROR
    assert trial.error is not None and "server went away" in trial.error


def test_fault_variant_injects_and_the_model_sees_it() -> None:
    task = TASKS["RF-1"]
    call = ('{"name": "query_table", "arguments": {"table": "products", '
            '"filters": {"name": "Security Suite License"}}}')
    trial = run_trial(_say(call, "Final Answer: 8"), task, variant="fault:rate_limit")
    assert trial.fault_plan == FaultPlan(tool="query_table", call=1, fault="rate_limit")
    assert trial.faults_injected == 1 and trial.steps[0].injected_fault == "rate_limit"
    observation = trial.messages[3].content
    assert observation.startswith("Observation:") and "429" in observation
    # the answer is right, but the only call failed: nothing the tools returned supports it
    assert trial.score is not None and trial.score.passed
    assert trial.outcome == Outcome.UNGROUNDED
    retried = run_trial(_say(call, call, "Final Answer: 8"), task, variant="fault:rate_limit")
    assert retried.outcome == Outcome.SUCCESS  # the retry's result shows the 8 units


def test_explicit_fault_plan_overrides_the_variant() -> None:
    task = TASKS["DA-1"]
    plan = FaultPlan(tool="query_table", call=1, fault="timeout")
    call = '{"name": "query_table", "arguments": {"table": "sales"}}'
    trial = run_trial(_say(call, "Final Answer: 1"), task, fault_plan=plan)
    assert trial.faults_injected == 1 and "timed out" in (trial.steps[0].observation or "")


def test_variant_instruction_reaches_the_model() -> None:
    task = TASKS["RR-2"]
    call = '{"name": "web_search", "arguments": {"query": "Lantern Tower height"}}'
    trial = run_trial(_say(call, "Final Answer: 287"), task, variant="para2")
    assert trial.messages[1].content == task.paraphrases[1]
    assert trial.variant == "para2" and trial.outcome == Outcome.SUCCESS


def test_world_state_keeps_only_what_changed() -> None:
    task = TASKS["SC-2"]
    trial = run_trial(reference_agent(task), task)
    assert set(trial.world_state) == {"events", "next_event_number"}
    assert any(e["title"] == "Dock firmware check" for e in trial.world_state["events"])
    assert world_changes(World.create(0), 0) == {}
    assert json.loads(trial.model_dump_json())["world_state"]


def test_rescore_rebuilds_the_world_and_matches_the_original_verdict() -> None:
    task = TASKS["CM-1"]
    trial = run_trial(reference_agent(task), task)
    assert trial.outcome == Outcome.SUCCESS
    stored = Trial.model_validate_json(trial.model_dump_json())
    assert rescore(stored, task) == stored
    # the same transcript asked under a stricter rule: the e-mail body lacks "41" (the rule a
    # trial is judged by is the one its question recorded, not the task passed in)
    assert stored.question is not None
    scorer = task.scorer.model_copy(update={
        "checks": [task.scorer.checks[0].model_copy(update={"body_contains": ["41"]})]})
    stricter = stored.model_copy(update={"question": stored.question.model_copy(
        update={"scorer": scorer.model_dump(mode="json")})})
    again = rescore(stricter, task)
    assert again.outcome == Outcome.WRONG_ANSWER and again.score is not None
    assert "not sent" in again.score.reason


def test_rescore_leaves_terminal_outcomes_alone() -> None:
    trial = run_trial(_say("hmm", "still hmm"), TASKS["IR-1"])
    assert rescore(trial, TASKS["IR-1"]) is trial
