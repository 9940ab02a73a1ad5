"""The question a trial was asked: recorded when it runs, and the one way analysis gets it back.

A trial of a drawn instance is judged against what the family's binders drew for its world.
Binders change (``GENERATOR_VERSION``, ``agents/world/generate.py``); a stored trial must
still be judged against the question it was asked, never against what today's binders would
draw for the same (task, instance). So every trial records its :class:`Question`
(:func:`question_for`, filled by ``agents/evaluator.py``'s ``run_trial``), and
:func:`question_of` is how analysis (``rescore`` among it) gets a stored trial's task:

* a trial that recorded its question: that question, over the family's other fields (suite,
  group, dimension, difficulty, faults), which no binder changes;
* an older record (trial schema 3 or below, made before trials recorded it): the instance
  rebound by today's binders, but only where they are the ones that made it: the run recorded
  today's ``GENERATOR_VERSION`` (``generator``, e.g. from a study's exports), or the trial's
  harness fingerprint (which hashes ``GENERATOR_VERSION`` and the task's content and family
  template, ``agents/harness.py``) is the one its family has today. Otherwise a
  :class:`~slmbench.core.errors.ConfigError` says which trial cannot be judged.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from slmbench.agents.harness import fingerprint
from slmbench.agents.records import Question, ReferenceCall, Trial
from slmbench.agents.tasks.families import instance
from slmbench.agents.tasks.model import Task
from slmbench.agents.world.generate import GENERATOR_VERSION
from slmbench.core.errors import ConfigError

__all__ = ["as_task", "made_here", "question_for", "question_of"]


def question_for(task: Task, generator: int | None = GENERATOR_VERSION) -> Question:
    """The facts of ``task`` (an instance as it runs) that a trial records as its question;
    ``generator``: the ``GENERATOR_VERSION`` of the binders that drew it."""
    return Question(
        generator=generator, world_seed=task.world_seed, instruction=task.instruction,
        paraphrases=list(task.paraphrases), tools=list(task.tools),
        reference=[ReferenceCall(tool=a.tool, arguments=a.arguments)
                   for a in task.reference.actions],
        answer=task.reference.answer,
        evidence=task.model_dump(mode="json")["evidence"],
        scorer=task.scorer.model_dump(mode="json"))


def as_task(question: Question, family: Task) -> Task:
    """``family`` (the task as planned) asking ``question``: the recorded facts over the
    family's other fields."""
    asked: dict[str, Any] = {
        "world_seed": question.world_seed, "instruction": question.instruction,
        "paraphrases": question.paraphrases, "tools": question.tools,
        "reference": {"actions": [c.model_dump(mode="json") for c in question.reference],
                      "answer": question.answer},
        "evidence": question.evidence, "scorer": question.scorer}
    return Task.model_validate({**family.model_dump(mode="json"), **asked})


def _fingerprint(family: Task, toolset: str, prompts: str, scaffold: str) -> str:
    return _hashed(family.model_dump_json(), toolset, prompts, scaffold)


@cache
def _hashed(family: str, toolset: str, prompts: str, scaffold: str) -> str:
    return fingerprint([Task.model_validate_json(family)], toolset=toolset, prompts=prompts,
                       scaffold=scaffold)


def made_here(trial: Trial, family: Task) -> bool:
    """Whether ``trial`` was made by this checkout's harness for ``family``: its recorded
    fingerprint is the family's here (so today's binders, task content and template)."""
    return trial.harness is not None and trial.harness == _fingerprint(
        family, trial.toolset, trial.prompts, trial.scaffold)


def question_of(trial: Trial, family: Task, *, generator: int | None = None) -> Task:
    """The task ``trial`` was asked (see the module docstring). ``family`` is its task as
    planned (the curated task; an instance of it is rebound from the family's template);
    ``generator`` the ``GENERATOR_VERSION`` the trial's run recorded, if it did.

    ConfigError when the trial recorded no question and today's binders are not known to be
    the ones that made it."""
    if family.id != trial.task_id:
        raise ValueError(f"trial of {trial.task_id} asked about family {family.id}")
    if trial.question is not None:
        return as_task(trial.question, family)
    if generator == GENERATOR_VERSION or (generator is None and made_here(trial, family)):
        return instance(family, trial.instance)
    made_by = (f"generator {generator}" if generator is not None
               else f"harness {trial.harness}")
    raise ConfigError(
        f"trial {trial.model} {trial.task_id} instance {trial.instance} records no question, "
        f"and it was made by {made_by}, not this checkout's (generator {GENERATOR_VERSION}, "
        f"harness {_fingerprint(family, trial.toolset, trial.prompts, trial.scaffold)})",
        "judge it with the slmbench that made it, or backfill its export's questions with "
        "that version (scripts/backfill_questions.py)")
