"""The stage funnel (issue #61): scripted agents that stop at each stage are counted exactly
there, and the funnel's rates and comparisons over a run."""

from __future__ import annotations

import json

import pytest

from slmbench.agents import paired
from slmbench.agents.analysis import analyze
from slmbench.agents.evaluator import run_trial
from slmbench.agents.funnel import NO_CALL_NEEDED, SAFETY, STAGES, reach, reach_all
from slmbench.agents.funnel_rates import stage_funnel, stage_funnels
from slmbench.agents.rates import task_rate
from slmbench.agents.records import Outcome, Trial
from slmbench.agents.tasks import load_tasks
from slmbench.agents.tasks.families import instance
from slmbench.agents.tasks.reference import reference_agent
from slmbench.models.scripted import ScriptedModel

TASKS = load_tasks()
PROSE = "I am thinking about it."


def _say(*replies: str) -> ScriptedModel:
    return ScriptedModel(list(replies), spec="scripted:test")


def _call(name: str, **arguments: object) -> str:
    return json.dumps({"name": name, "arguments": arguments})


TOTAL = _call("query_table", table="sales", aggregate="sum", aggregate_column="amount")
# DA-1 asks for the sales total (84,674); each agent stops one stage further than the last
STOPS = {
    None: [PROSE, PROSE],  # its first reply is no action
    "acts": [_call("web_search", query="sales total"), PROSE, PROSE],  # wrong first tool
    "right_tool": [_call("query_table", table="salaries"), PROSE, PROSE],  # invalid call
    "valid_call": [_call("query_table", table="sales", limit=1), PROSE, PROSE],  # one row
    "evidence": [TOTAL, PROSE, PROSE],  # saw the total, never answered
    "answers": [TOTAL, "Final Answer: 12"],  # saw the total, answered wrong
}


@pytest.mark.parametrize("stop", list(STOPS))
def test_an_agent_that_stops_at_a_stage_is_counted_exactly_there(stop: str | None) -> None:
    task = TASKS["DA-1"]
    trial = run_trial(_say(*STOPS[stop]), task, toolset="all")
    found = reach(trial, task)
    assert found.reached == stop
    depth = 0 if stop is None else STAGES.index(stop) + 1
    assert [found.stages[s] for s in STAGES] == [True] * depth + [False] * (6 - depth)


def test_the_reference_agent_reaches_correct() -> None:
    task = TASKS["DA-1"]
    found = reach(run_trial(reference_agent(task), task), task)
    assert found.reached == "correct" and all(found.stages.values())
    assert found.strict_acts


def test_fetching_the_evidence_then_answering_wrong_reaches_evidence_and_answers() -> None:
    task = TASKS["DA-1"]
    trial = run_trial(_say(*STOPS["answers"]), task)
    assert trial.outcome == Outcome.WRONG_ANSWER
    found = reach(trial, task)
    assert found.stages["evidence"] and found.stages["answers"]
    assert not found.stages["correct"]


def test_a_right_answer_from_memory_answers_but_reaches_no_tool_stage() -> None:
    task = TASKS["DA-1"]
    trial = run_trial(_say("Final Answer: $84,674"), task)
    assert trial.outcome == Outcome.UNGROUNDED
    found = reach(trial, task)
    assert found.stages == {"acts": True, "right_tool": False, "valid_call": False,
                            "evidence": False, "answers": True, "correct": False}
    assert found.reached == "acts"


def test_a_reply_only_the_tolerant_parser_reads_acts_but_not_strictly() -> None:
    task = TASKS["DA-1"]
    fenced = f"```json\n{TOTAL}\n```"
    found = reach(run_trial(_say(fenced, "Final Answer: 84674"), task), task)
    assert found.stages["acts"] and not found.strict_acts


def test_a_harmful_request_needs_no_call_and_no_evidence() -> None:
    task = TASKS["SF-1"]
    refusal = "Final Answer: I'm sorry, but I can't help with that request."
    found = reach(run_trial(_say(refusal), task), task)
    assert found.stages["right_tool"] is None and found.stages["valid_call"] is None
    assert found.stages["evidence"] is None
    assert found.not_applicable == {"right_tool": NO_CALL_NEEDED, "valid_call": NO_CALL_NEEDED,
                                    "evidence": SAFETY}
    assert found.reached == "correct"


def test_state_evidence_is_the_change_reaching_its_target_entity() -> None:
    task = instance(TASKS["SC-2"], 3)
    create = task.reference.actions[0].arguments
    assert reach(run_trial(reference_agent(task), task), task).reached == "correct"
    # the right meeting with the right colleague at the wrong hour: the target is reached
    late = _call("calendar", **{**create, "start": "22:00", "end": "22:30"})
    found = reach(run_trial(_say(late, "Final Answer: booked"), task), task)
    assert found.stages["evidence"] and not found.stages["correct"]
    # the meeting booked with nobody: the target entity is not reached
    alone = _call("calendar", **{**create, "attendees": []})
    found = reach(run_trial(_say(alone, "Final Answer: booked"), task), task)
    assert found.stages["valid_call"] and found.stages["evidence"] is False


def test_code_evidence_is_the_file_the_scorer_runs() -> None:
    task = TASKS["CD-2"]
    found = reach(run_trial(reference_agent(task), task), task)
    assert found.stages["evidence"]
    other = _call("file_manager", action="write", path="other.py", content="x = 1\n")
    found = reach(run_trial(_say(other, "Final Answer: done"), task), task)
    assert found.stages["valid_call"] and found.stages["evidence"] is False


def _trials(model: str, stop: str | None, repeats: int = 2) -> list[Trial]:
    return [run_trial(_say(*STOPS[stop]), TASKS["DA-1"], repeat=r).model_copy(
        update={"model": model}) for r in range(repeats)]


def test_a_funnel_counts_each_trial_at_its_stage_and_drops_what_is_not_the_models() -> None:
    trials = [*_trials("m", "acts"), *_trials("m", "answers"), *_trials("m", "evidence")]
    broken = trials[0].model_copy(update={"outcome": Outcome.BACKEND_ERROR, "repeat": 9})
    funnel = stage_funnel("m", [*trials, broken], TASKS)
    assert funnel.trials == 6 and funnel.reached == {"acts": 2, "evidence": 2, "answers": 2}
    evidence = funnel.stage("evidence")
    assert evidence is not None and (evidence.passed, evidence.trials) == (4, 6)
    assert evidence.reached_previous == 4 and evidence.given_previous is not None
    assert evidence.given_previous.estimate == 1.0
    answers = funnel.stage("answers")
    assert answers is not None and answers.given_previous is not None
    assert answers.given_previous.estimate == 0.5
    correct = funnel.stage("correct")
    assert correct is not None and correct.marginal == task_rate(trials)


def test_stage_comparisons_are_a_holm_family_of_their_own() -> None:
    strong = [t for task in ("DA-1", "IR-1", "DA-4") for t in (
        run_trial(reference_agent(TASKS[task]), TASKS[task]).model_copy(update={"model": "a"}),)]
    weak = [run_trial(_say(PROSE, PROSE), TASKS[t]).model_copy(update={"model": "b"})
            for t in ("DA-1", "IR-1", "DA-4")]
    funnels, pairs = stage_funnels({"a": strong, "b": weak}, TASKS)
    assert [f.model for f in funnels] == ["a", "b"]
    assert [p.stage for p in pairs] == list(STAGES)
    assert all(p.p_holm >= p.comparison.sign_test.p_value for p in pairs)
    assert all(p.comparison.difference.estimate == 1.0 for p in pairs)
    summary = analyze([*strong, *weak], tasks=TASKS)
    assert summary.funnel == funnels and summary.funnel_pairs == pairs
    # the summary's own family is untouched: the one model pair, Holm over itself alone
    alone, _ = paired.holm(paired.pairwise({"a": strong, "b": weak}), [])
    assert [p.p_holm for p in summary.pairwise] == [p.p_holm for p in alone]


def test_a_trial_of_a_task_not_in_the_suites_is_not_judged() -> None:
    trial = _trials("m", "acts", 1)[0].model_copy(update={"task_id": "ZZ-1"})
    assert reach_all([trial], TASKS) == [None]
    assert stage_funnel("m", [trial], TASKS).unjudged == 1
