"""A trial records the question it was asked, and analysis judges it against that question
(issue #59, part 1): never against what a newer binder would draw for the same instance."""

from __future__ import annotations

import json
from typing import Any

import pytest

from slmbench.agents import questions
from slmbench.agents.evaluator import rescore, run_trial
from slmbench.agents.loading import load_trials
from slmbench.agents.questions import question_of
from slmbench.agents.records import TRIAL_SCHEMA_VERSION, Outcome, Trial
from slmbench.agents.store import RunStore, carried, export_trials, read_trials
from slmbench.agents.tasks import load_tasks
from slmbench.agents.tasks.families import has_template, instance
from slmbench.agents.tasks.model import NumericSpec, Task
from slmbench.agents.tasks.reference import reference_agent
from slmbench.agents.world.generate import GENERATOR_VERSION
from slmbench.core.errors import ConfigError

FAMILY = load_tasks()["DA-1"]  # numeric: the sales total of each world
SEED = 3


def _ran() -> tuple[Task, Trial]:
    """The reference solution of DA-1's instance 3, run as the executor runs it."""
    inst = instance(FAMILY, SEED)
    return inst, run_trial(reference_agent(inst), inst, instance=SEED, family=FAMILY)


def _schema_3(trial: Trial) -> dict[str, Any]:
    """``trial`` as a record written before trials recorded their question."""
    record = json.loads(trial.model_dump_json())
    del record["question"]
    return {**record, "schema_version": 3}


def _other_total(task: Task) -> dict[str, Any]:
    """``task``'s scorer expecting another sales total (what a newer binder might draw)."""
    assert isinstance(task.scorer, NumericSpec)
    return task.scorer.model_copy(update={"value": task.scorer.value + 1000}).model_dump(
        mode="json")


def test_a_new_trial_records_the_question_it_was_asked() -> None:
    inst, trial = _ran()
    assert has_template(FAMILY) and inst.scorer != FAMILY.scorer  # a drawn question
    q = trial.question
    assert q is not None and trial.schema_version == TRIAL_SCHEMA_VERSION == 5
    assert (q.generator, q.world_seed) == (GENERATOR_VERSION, SEED)
    assert q.scorer == inst.scorer.model_dump(mode="json")
    assert q.answer == inst.reference.answer
    assert [(c.tool, c.arguments) for c in q.reference] == \
        [(a.tool, a.arguments) for a in inst.reference.actions]
    assert (q.instruction, q.tools) == (inst.instruction, inst.tools)
    # it travels with the trial, and it is the task analysis gets back
    back = Trial.model_validate_json(trial.model_dump_json())
    assert back == trial and question_of(back, FAMILY) == inst


def test_a_schema_3_record_loads_without_a_question(tmp_path) -> None:
    _, trial = _ran()
    with RunStore(tmp_path) as store:
        store.put(trial.key, trial.outcome.value, _schema_3(trial))
    [old] = load_trials(tmp_path)
    assert old.question is None and old.schema_version == 3
    assert old.model_copy(update={"question": trial.question,
                                  "schema_version": 5}) == trial


def test_an_old_record_is_rebound_only_by_the_binders_that_made_it() -> None:
    inst, trial = _ran()
    old = Trial.model_validate(_schema_3(trial))
    assert question_of(old, FAMILY) == inst  # its harness is this checkout's
    assert question_of(old, FAMILY, generator=GENERATOR_VERSION) == inst
    foreign = old.model_copy(update={"harness": "0123456789abcdef"})
    with pytest.raises(ConfigError, match=r"records no question.*harness 0123456789abcdef"):
        question_of(foreign, FAMILY)
    with pytest.raises(ConfigError, match=f"made by generator {GENERATOR_VERSION + 1}"):
        question_of(old, FAMILY, generator=GENERATOR_VERSION + 1)


def test_rescore_judges_the_recorded_question_not_a_newer_binders(monkeypatch) -> None:
    inst, trial = _ran()
    assert trial.outcome == Outcome.SUCCESS
    # a newer binder draws another total for the same instance
    newer = Task.model_validate({**inst.model_dump(mode="json"), "scorer": _other_total(inst)})
    monkeypatch.setattr(questions, "instance", lambda family, seed: newer)
    assert rescore(trial, FAMILY) == trial  # judged against what it was asked
    # a record without its question, made by this harness, is judged as the binders draw now
    assert rescore(Trial.model_validate(_schema_3(trial)), FAMILY).outcome == \
        Outcome.WRONG_ANSWER
    # a trial asked another question than today's binding is judged against its own
    assert trial.question is not None
    asked = trial.model_copy(update={"question": trial.question.model_copy(
        update={"scorer": _other_total(inst)})})
    again = rescore(asked, FAMILY)
    assert again.outcome == Outcome.WRONG_ANSWER and again.score is not None
    assert not again.score.passed


def test_a_stored_old_trial_and_its_backfilled_export_are_one_trial(tmp_path) -> None:
    _, trial = _ran()
    old = Trial.model_validate(_schema_3(trial))
    backfilled = old.model_copy(update={"question": trial.question})
    run = tmp_path / "run"
    assert RunStore.merge(run, [(tmp_path / "a", carried([old]))]) == 1
    assert RunStore.merge(run, [(tmp_path / "b", carried([backfilled]))]) == 0
    # the other way round: a store holding the question, an export without it
    other = tmp_path / "other"
    assert RunStore.merge(other, [(tmp_path / "b", carried([backfilled]))]) == 1
    assert RunStore.merge(other, [(tmp_path / "a", carried([old]))]) == 0
    # but two questions for one trial are two contents: refused
    assert trial.question is not None
    moved = backfilled.model_copy(update={"question": trial.question.model_copy(
        update={"answer": "another answer"})})
    with pytest.raises(ConfigError, match="different content"):
        RunStore.merge(other, [(tmp_path / "c", carried([moved]))])


def test_rewriting_an_export_from_an_old_store_keeps_its_questions(tmp_path) -> None:
    _, trial = _ran()
    old = Trial.model_validate(_schema_3(trial))
    backfilled = old.model_copy(update={"question": trial.question})
    dump = tmp_path / "trials.jsonl.gz"
    export_trials([backfilled], dump)
    export_trials([old], dump)  # a page regenerated from a store of schema 3 records
    assert read_trials(dump, "") == [backfilled]
    # another trial under the same key (here, another answer) is not given its question
    other = old.model_copy(update={"final_answer": "something else"})
    export_trials([other], dump)
    assert read_trials(dump, "") == [other]
