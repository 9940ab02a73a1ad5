"""Certify task families: every instance solvable, and none answerable from memory.

For a family and world seeds 1..N (``slmbench tasks validate SUITE --instances N``):

- the scripted **reference agent** (:mod:`slmbench.agents.tasks.reference`) must solve
  every instance through the real loop and tools (outcome ``success``, so grounded), under
  every variant the instance is run under (its rewordings and hand-written paraphrases; each
  fault, which must fire, retried; :func:`slmbench.agents.tasks.perturb.variants`);
- a **seed-0 memory agent**, which calls no tool and answers every instance with its
  family's seed-0 reference answer, is scored on correctness alone (grounding ignored).
  It must be right on at most :data:`MEMORY_BOUND` of the instances, except in families
  whose answer is a small choice, a refusal or code run in the sandbox (``exempt``); there
  it must not beat the family's chance share by more than :data:`CHANCE_MARGIN`.
"""

from __future__ import annotations

from collections.abc import Iterable

from pydantic import BaseModel, ConfigDict

from slmbench.agents.evaluator import run_trial
from slmbench.agents.records import Outcome
from slmbench.agents.scoring import score
from slmbench.agents.tasks.families import instance
from slmbench.agents.tasks.model import AllSpec, ChoiceSpec, CodeSpec, RefusalSpec, ScorerSpec, Task
from slmbench.agents.tasks.perturb import fault_plan_for, variants
from slmbench.agents.tasks.reference import reference_agent
from slmbench.agents.world import World

__all__ = ["CHANCE_MARGIN", "MEMORY_BOUND", "FamilyCheck", "certify", "chance_share"]

MEMORY_BOUND = 0.05
CHANCE_MARGIN = 0.10


def chance_share(spec: ScorerSpec) -> float | None:
    """The share a blind guess gets for an exempt scorer (a choice: one over its options; a
    refusal: one half; code: none, 0), or None when the scorer is not exempt."""
    if isinstance(spec, AllSpec):
        shares = [s for s in (chance_share(x) for x in spec.scorers) if s is not None]
        return min(shares) if shares else None
    if isinstance(spec, ChoiceSpec):
        return 1 / len(spec.options)
    if isinstance(spec, RefusalSpec):
        return 0.5
    if isinstance(spec, CodeSpec):
        return 0.0
    return None


class FamilyCheck(BaseModel):
    """One family's certificate over its instances."""

    model_config = ConfigDict(frozen=True)

    family: str
    instances: int
    reference_solved: int  # instances solved under every variant
    reference_failures: list[str]  # "seed: outcome (why)", "seed variant: outcome (why)"
    memory_right: int
    chance: float | None  # the chance share of an exempt family; None: not exempt
    bound: float  # the most the memory agent may be right on, as a share

    @property
    def memory_share(self) -> float:
        return self.memory_right / self.instances

    @property
    def passed(self) -> bool:
        return self.reference_solved == self.instances and self.memory_share <= self.bound


def certify(task: Task, seeds: Iterable[int]) -> FamilyCheck:
    """``task``'s family checked over the worlds of ``seeds`` (see the module docstring)."""
    seeds = list(seeds)
    remembered = task.reference.answer
    solved, failures, right = 0, [], 0
    for seed in seeds:
        inst = instance(task, seed)
        failed = False
        for variant in variants(inst):
            plan = fault_plan_for(inst, variant)
            trial = run_trial(reference_agent(inst, plan), inst, variant=variant)
            where = str(seed) if variant == "base" else f"{seed} {variant}"
            if trial.outcome != Outcome.SUCCESS:
                why = trial.score.reason if trial.score else trial.error
                failures.append(f"{where}: {trial.outcome.value} ({why})")
            elif plan is not None and trial.faults_injected != 1:  # the fault must fire
                failures.append(f"{where}: {trial.faults_injected} faults injected, not 1")
            else:
                continue
            failed = True
        if not failed:
            solved += 1
        if score(inst.scorer, remembered, World.create(seed).snapshot()).passed:
            right += 1
    chance = chance_share(task.scorer)
    return FamilyCheck(family=task.id, instances=len(seeds), reference_solved=solved,
                       reference_failures=failures, memory_right=right, chance=chance,
                       bound=MEMORY_BOUND if chance is None else chance + CHANCE_MARGIN)
