"""One trial end to end: task -> fresh world -> agent loop -> scorer -> :class:`Trial`.

``run_trial`` never raises for model or tool failures: a backend error, an
unreadable response, a loop or running out of steps become the trial's
outcome. A final answer is scored by the task's scorer against the answer
and the world after the trial:

* the scorer passes -> ``success`` (on a task that should be refused, a
  refusal is what passes), unless no successful tool result shows the task's
  evidence -> ``ungrounded`` (a right answer from memory or a guess;
  :mod:`slmbench.agents.scoring.grounding`);
* it fails and the answer is a refusal on a task that should not be refused
  -> ``refused``;
* otherwise -> ``wrong_answer``.

The agent gets the tools the task lists (``toolset="task"``) or all ten
(``toolset="all"``, the seed's setting). Each trial records its toolset, prompt
set, harness fingerprint (:mod:`slmbench.agents.harness`) and forensics
(:mod:`slmbench.agents.forensics`) and the backend's ``settings`` (what it sent: pinned
sampling, think mode, context window) and the ``question`` it was asked (its instance's
instruction, tools, reference solution, evidence and scorer:
:mod:`slmbench.agents.questions`). ``Trial.world_state`` keeps the
parts of the world the trial changed (top-level keys of ``World.snapshot()``
whose value differs from a fresh world), for audits; :func:`rescore` rebuilds
the full state from it to score a stored trial again without the model.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from slmbench.agents.forensics import diagnose
from slmbench.agents.harness import fingerprint, offered_tools
from slmbench.agents.loop.prompts import DEFAULT_PROMPTS
from slmbench.agents.loop.react import run_react
from slmbench.agents.loop.settings import AgentResult, LoopSettings
from slmbench.agents.questions import question_for, question_of
from slmbench.agents.records import FaultPlan, Outcome, Score, Step, Trial
from slmbench.agents.scoring import (
    RefusalJudge,
    classify,
    dumped,
    grounding,
    score,
    underivable,
)
from slmbench.agents.tasks import SHIPPED_SUITES, load_suite
from slmbench.agents.tasks.model import Task
from slmbench.agents.tasks.perturb import fault_plan_for, instruction_for, variants
from slmbench.agents.tools.toolbox import WorldToolbox
from slmbench.agents.world import World
from slmbench.agents.world.core import fresh_snapshot
from slmbench.core.errors import ConfigError
from slmbench.models.base import Model, settings_of

__all__ = ["check_derivable", "judge", "load_task_file", "rescore", "run_trial", "variants",
           "world_after", "world_changes"]

Scaffold = Literal["react", "native"]


def world_changes(world: World, seed: int) -> dict[str, Any]:
    """Top-level parts of the world's snapshot that differ from a fresh world of ``seed``."""
    fresh = fresh_snapshot(seed)  # shared, read only
    return {k: v for k, v in world.snapshot().items() if fresh.get(k) != v}


def world_after(trial: Trial, seed: int) -> dict[str, Any]:
    """The full post-trial snapshot, rebuilt from a fresh world and ``trial.world_state``."""
    return {**World.create(seed).snapshot(), **trial.world_state}


def judge(task: Task, answer: str | None, state: dict[str, Any],
          steps: Sequence[Step] = (), refusal_judge: RefusalJudge | None = None,
          request: str | None = None) -> tuple[Outcome, Score]:
    """Outcome and score of a final answer (``state``: the full post-trial snapshot;
    ``steps``: the trial's steps, whose successful observations must ground the answer;
    ``refusal_judge``: labels refusals of ``request``'s answer instead of the rules)."""
    label_of = None
    if refusal_judge is not None:
        label_of = functools.partial(refusal_judge, request or task.instruction)
    result = score(task.scorer, answer, state, label_of)
    if result.passed:
        if (dump := dumped(task, answer, steps)) is not None:
            return Outcome.DUMPED, result.model_copy(update={"reason": f"{result.reason}; "
                                                                      f"dumped: {dump}"})
        found = grounding(task, steps)
        if found is not None and not found.supported:
            why = f"{result.reason}; ungrounded: no tool result shows {', '.join(found.missing)}"
            return Outcome.UNGROUNDED, result.model_copy(update={"reason": why})
        return Outcome.SUCCESS, result
    label = label_of(answer or "") if label_of else classify(answer).label
    if task.expected_behaviour in (None, "comply") and label == "refuse":
        return Outcome.REFUSED, result
    return Outcome.WRONG_ANSWER, result


def rescore(trial: Trial, family: Task, *, generator: int | None = None) -> Trial:
    """Score a stored trial again (e.g. after a scorer fix) without running the model.

    The trial is judged against the question it was asked
    (:func:`slmbench.agents.questions.question_of`: the one it recorded, never what today's
    binders would draw; ``family`` is its task as planned, ``generator`` the
    ``GENERATOR_VERSION`` its run recorded, for a record made before trials recorded their
    question), in that question's world. Trials that ended in a terminal outcome (no final
    answer) are returned unchanged.
    """
    if trial.score is None:  # a terminal outcome: there is no answer to score
        return trial
    task = question_of(trial, family, generator=generator)
    outcome, verdict = judge(task, trial.final_answer, world_after(trial, task.world_seed),
                             trial.steps)
    return trial.model_copy(update={"outcome": outcome, "score": verdict})


def _agent(model: Model, toolbox: WorldToolbox, instruction: str, scaffold: Scaffold,
           prompts: str, settings: LoopSettings) -> AgentResult:
    if scaffold == "native":
        from slmbench.agents.loop.native import run_native

        return run_native(model, toolbox, instruction, settings)
    return run_react(model, toolbox, instruction, settings, prompts=prompts)


def run_trial(
    model: Model,
    task: Task,
    *,
    temperature: float = 0.0,
    seed: int = 0,
    repeat: int = 0,
    instance: int = 0,
    level: str = "base",
    family: Task | None = None,
    variant: str = "base",
    fault_plan: FaultPlan | None = None,
    scaffold: Scaffold = "react",
    max_steps: int = 12,
    toolset: Literal["task", "all"] = "task",
    prompts: str = DEFAULT_PROMPTS,
    refusal_judge: RefusalJudge | None = None,
) -> Trial:
    """Run ``task`` once with ``model`` and score it. ``fault_plan`` defaults to the variant's.

    ``task`` is what runs, in the world of its ``world_seed``, judged in that world: for a drawn
    instance, ``slmbench.agents.tasks.families.instance(family, instance)``. ``instance`` is
    recorded in the trial, and ``level``, the difficulty ladder's (``task`` is then that level's
    instance); ``family`` (default ``task``) is the task as planned, whose fingerprint (with the
    level's form, for a generated level) is the trial's ``harness``, so every instance of a
    family at one level shares one harness.
    ``prompts`` names the ReAct prompt set; ``legacy`` exists only to measure it."""
    start = time.perf_counter()
    instruction = instruction_for(task, variant)
    plan = fault_plan if fault_plan is not None else fault_plan_for(task, variant)
    world = World.create(task.world_seed)
    toolbox = WorldToolbox(world, offered_tools(task.tools, toolset), fault_plan=plan)
    result = _agent(model, toolbox, instruction, scaffold, prompts,
                    LoopSettings(temperature=temperature, seed=seed, max_steps=max_steps))
    outcome, verdict = result.outcome, None
    if outcome is None:
        outcome, verdict = judge(task, result.final_answer, world.snapshot(), result.steps,
                                 refusal_judge, instruction)
    trial = Trial(
        model=model.spec, task_id=task.id, suite=task.suite, variant=variant,
        scaffold=scaffold, toolset=toolset, prompts=prompts,
        harness=fingerprint([family or task], toolset=toolset, prompts=prompts,
                            scaffold=scaffold, levels=[level]),
        temperature=temperature, seed=seed, repeat=repeat, instance=instance, level=level,
        outcome=outcome, final_answer=result.final_answer, score=verdict,
        steps=result.steps, messages=result.messages, fault_plan=plan,
        faults_injected=result.faults_injected, prompt_tokens=result.prompt_tokens,
        completion_tokens=result.completion_tokens, latency_s=result.latency_s,
        wall_s=time.perf_counter() - start, error=result.error,
        world_state=world_changes(world, task.world_seed),
        settings=settings_of(model), question=question_for(task),
    )
    return trial.model_copy(update={"forensics": diagnose(trial, task.tools)})


def reference_failures(tasks: list[Task]) -> list[Trial]:
    """Replay every task's reference solution under each of its variants; the trials that did
    not succeed (none: every task is solvable as written and its scorer accepts the answer)."""
    from slmbench.agents.tasks.reference import reference_agent

    failed = []
    for task in tasks:
        for variant in variants(task):
            trial = run_trial(reference_agent(task, fault_plan_for(task, variant)), task,
                              variant=variant)
            if trial.outcome != Outcome.SUCCESS:
                failed.append(trial)
    return failed


def check_derivable(tasks: Sequence[Task], source: object) -> None:
    """Raise ConfigError (naming ``source``, the task and the field) for the first task whose
    expected answer the seeded world cannot produce
    (:func:`slmbench.agents.scoring.grounding.underivable` on its reference replayed without
    faults). A task whose tools cannot run here (no sandbox) is not judged: that is the
    environment's, checked before a run."""
    from slmbench.agents.tasks.reference import reference_agent

    for task in tasks:
        trial = run_trial(reference_agent(task), task)
        if trial.outcome == Outcome.ENVIRONMENT_ERROR:
            continue
        why = underivable(task, trial.steps)
        if why is not None:
            raise ConfigError(
                f"{source}: task {task.id}: {why}",
                "an expected answer must come from the seeded world: call the tool that shows "
                "it in `reference.actions` (docs/extending.md)")


def load_task_file(path: str | Path) -> list[Task]:
    """A user's suite file (``load_suite``), each task's answer checked derivable from the
    world (:func:`check_derivable`); shipped suites and packs are checked by CI instead."""
    tasks = load_suite(path)
    if str(path) not in SHIPPED_SUITES and not str(path).startswith("pack:"):
        check_derivable(tasks, path)
    return tasks
