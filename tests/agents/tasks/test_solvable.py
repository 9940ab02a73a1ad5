"""Every shipped task is solvable from the seeded world, and its scorer cannot be fooled.

The reference agent replays each task's intended tool calls through the real
ReAct loop and toolbox (under every variant, faults included) and must
succeed on all of them; an always-wrong agent must succeed on none; and
near-miss answers must fail. A task the world cannot answer, or a scorer
loose enough to pass a wrong answer, fails here.
"""

from __future__ import annotations

import pytest

from slmbench.agents.evaluator import judge, run_trial
from slmbench.agents.records import Outcome
from slmbench.agents.scoring import underivable
from slmbench.agents.tasks import Task, load_tasks
from slmbench.agents.tasks.model import AllSpec, EntitiesSpec, NumericSpec, ScorerSpec
from slmbench.agents.tasks.perturb import fault_plan_for, variants
from slmbench.agents.tasks.reference import reference_agent
from slmbench.agents.world import World
from slmbench.models.scripted import ScriptedModel

TASKS = load_tasks()
RUNS = [(t, v) for t in TASKS.values() for v in variants(t)]


def _leaves(spec: ScorerSpec) -> list[ScorerSpec]:
    return [leaf for s in spec.scorers for leaf in _leaves(s)] if isinstance(spec, AllSpec) \
        else [spec]


@pytest.mark.parametrize(("task", "variant"), RUNS, ids=[f"{t.id}-{v}" for t, v in RUNS])
def test_reference_agent_solves_every_task_and_variant(task: Task, variant: str) -> None:
    plan = fault_plan_for(task, variant)
    trial = run_trial(reference_agent(task, plan), task, variant=variant)
    assert trial.outcome == Outcome.SUCCESS, (trial.score, trial.error)
    assert set(trial.tool_sequence) == {a.tool for a in task.reference.actions}
    if plan is not None:  # the fault really fired and the agent saw it
        assert trial.faults_injected == 1
        faulted = next(s for s in trial.steps if s.injected_fault)
        assert faulted.injected_fault == plan.fault
        shown = f"Observation: {faulted.observation}\n"
        assert any(m.role == "user" and m.content.startswith(shown) for m in trial.messages)


def test_reference_runs_are_clean() -> None:
    """No reference step is an invalid call: every action validates against its tool."""
    for task in TASKS.values():
        trial = run_trial(reference_agent(task), task)
        assert all(s.tool_ok for s in trial.steps if s.action.kind == "tool"), task.id


@pytest.mark.parametrize("task", list(TASKS.values()), ids=lambda t: t.id)
def test_always_wrong_agent_solves_nothing(task: Task) -> None:
    model = ScriptedModel(lambda _msgs: "Final Answer: I am not sure, maybe 42.")
    for variant in variants(task):
        trial = run_trial(model, task, variant=variant)
        assert trial.outcome == Outcome.WRONG_ANSWER, (task.id, variant, trial.score)
        assert trial.score is not None and not trial.score.passed


def _near_misses(task: Task) -> list[str]:
    """Plausible wrong answers: other digits, other magnitudes, a wrong person."""
    answer = task.reference.answer
    misses = []
    for spec in _leaves(task.scorer):
        if isinstance(spec, NumericSpec):
            v = spec.value
            for wrong in (v / 100, v * 10, v + 1 + spec.tolerance, v - 9 - spec.tolerance):
                misses.append(f"The answer is {wrong:,.2f}".rstrip("0").rstrip("."))
            if spec.unit == "USD":
                misses.append(f"The answer is {v:,.0f} EUR")
        if isinstance(spec, EntitiesSpec):
            for wrong in spec.forbidden:
                names = spec.required[0]
                name = names if isinstance(names, str) else names[0]
                misses.append(answer.replace(name, wrong) if name in answer else wrong)
    return misses


@pytest.mark.parametrize("task", list(TASKS.values()), ids=lambda t: t.id)
def test_near_miss_answers_fail(task: Task) -> None:
    state = World.create(task.world_seed).snapshot()
    for miss in _near_misses(task):
        outcome, score = judge(task, miss, state)
        assert outcome != Outcome.SUCCESS, (task.id, miss, score.reason)


def test_near_misses_cover_every_answer_scored_task() -> None:
    covered = [t.id for t in TASKS.values() if _near_misses(t)]
    assert len(covered) >= 25


@pytest.mark.parametrize("task", [t for t in TASKS.values() if t.reference.actions],
                         ids=lambda t: t.id)
def test_answers_come_from_the_world(task: Task) -> None:
    """Expected numbers and entities appear in what the tools returned (or follow from
    two observed numbers by one addition or subtraction): the check task loading runs."""
    trial = run_trial(reference_agent(task), task)
    assert underivable(task, trial.steps) is None
