"""Answers are answers: a right token inside a tool dump is ``dumped``, not a success."""

from __future__ import annotations

import json

from slmbench.agents.evaluator import rescore, run_trial
from slmbench.agents.records import Outcome, Trial
from slmbench.agents.scoring import answer_scored
from slmbench.agents.tasks import Task, load_suite
from slmbench.agents.tasks.families import instance
from slmbench.models.records import Message
from slmbench.models.scripted import ScriptedModel

TASKS = {t.id: t for s in ("capability", "capability-extra", "reliability")
         for t in load_suite(s)}


def _run(task: Task, answer: str, calls: list[tuple[str, dict[str, object]]] | None = None
         ) -> Trial:
    """A scripted agent: ``calls`` (default: the task's reference calls), then ``answer``."""
    script = calls if calls is not None else [(a.tool, a.arguments)
                                              for a in task.reference.actions]

    def respond(messages: list[Message]) -> str:
        turn = sum(1 for m in messages if m.role == "assistant")
        if turn < len(script):
            return json.dumps({"name": script[turn][0], "arguments": script[turn][1]})
        return f"Final Answer: {answer}"
    return run_trial(ScriptedModel(respond, spec="scripted:test"), task)


def test_a_json_object_or_list_holding_the_right_number_is_dumped() -> None:
    ir1 = instance(TASKS["IR-1"], 1)
    obj = json.dumps({"title": "height", "text": ir1.reference.answer})
    trial = _run(ir1, obj)
    assert trial.outcome == Outcome.DUMPED and "JSON object" in trial.score.reason
    assert _run(ir1, f"```json\n[{obj}]\n```").outcome == Outcome.DUMPED
    assert _run(ir1, f"Here is what I found: {obj}").outcome == Outcome.DUMPED
    assert _run(ir1, ir1.reference.answer).outcome == Outcome.SUCCESS  # the same, as an answer


def test_a_right_answer_quoting_a_result_sentence_stays_a_success() -> None:
    """IR-1's result sentence names the peak, its range and height: quoting it is fine."""
    ir1 = instance(TASKS["IR-1"], 1)
    trial = _run(ir1, "Mount Gruxim", [("web_search", {"query": "Mount Gruxim height"})])
    sentence = next(r["text"] for r in json.loads(trial.steps[0].observation)["results"]
                    if "6,317" in r["text"])
    quoted = sentence.replace(" (2019 survey)", "")
    assert _run(ir1, quoted).outcome == Outcome.SUCCESS
    # the whole sentence names the survey's year, another number the result showed
    with_year = _run(ir1, sentence)
    assert with_year.outcome == Outcome.DUMPED and "'2019'" in with_year.score.reason


def test_naming_another_candidate_number_date_or_entity_is_dumped() -> None:
    ir1 = instance(TASKS["IR-1"], 2)
    search = [("web_search", {"query": ir1.instruction})]
    trial = _run(ir1, "Mount Raellor", search)
    others = [r["text"] for r in json.loads(trial.steps[0].observation)["results"]]
    hedge = f"{ir1.reference.answer} Also: {others[1]}"
    assert _run(ir1, hedge, search).outcome == Outcome.DUMPED
    sc5 = instance(TASKS["SC-5"], 1)  # a date and a time: another date of the week is a dump
    assert _run(sc5, sc5.reference.answer).outcome == Outcome.SUCCESS
    moved = _run(sc5, sc5.reference.answer + " Your week also has meetings on 2025-03-10.")
    assert moved.outcome == Outcome.DUMPED and "10 March" in moved.score.reason
    ir3 = instance(TASKS["IR-3"], 1)
    assert _run(ir3, ir3.reference.answer).outcome == Outcome.SUCCESS


def test_only_families_scored_on_their_answer_alone_are_judged_for_dumps() -> None:
    assert answer_scored(TASKS["IR-1"]) and answer_scored(TASKS["RF-3"])
    assert not any(answer_scored(TASKS[f]) for f in ("DM-2", "SF-1", "CD-2", "SC-2"))
    dm2 = instance(TASKS["DM-2"], 1)
    answer = dm2.reference.answer.split(":")[0]
    assert _run(dm2, json.dumps({"answer": answer, "why": "stock"})).outcome == Outcome.SUCCESS


def test_rescore_moves_a_stored_dump() -> None:
    ir1 = instance(TASKS["IR-1"], 1)
    trial = _run(ir1, json.dumps({"title": "height", "text": ir1.reference.answer}))
    stored = trial.model_copy(update={"outcome": Outcome.SUCCESS})  # scored before the rule
    assert rescore(stored, ir1).outcome == Outcome.DUMPED
