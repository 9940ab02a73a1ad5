"""Grounding: does a right answer rest on what the tools returned, or on the model's memory?

A task's *evidence* is what a successful tool result must show before a
correct final answer counts: the task's own ``evidence`` list, else the
numbers and required entities its scorer checks. A number matches a
quantity in an observation (within the scorer's tolerance); a text matches
as a substring, any case (an alias list: any one of its names). Only
observations of calls that succeeded count (``tool_ok``): an error, a
timeout or a result cut in half supports nothing; a result whose schema
drifted still carries the data, so it does.

:func:`underivable` asks the stronger question of a task's reference solution: can
the world produce the *expected* answer at all (every number the scorer expects in
a tool result, or one addition or subtraction of two; every required entity)?

Tasks scored only on world state, code or refusal need no evidence: the
state changed through the tools, the code was run by the scorer, and a
refusal needs no tool. For them grounding does not apply (``None``).
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations

from pydantic import BaseModel, ConfigDict

from slmbench.agents.records import Step
from slmbench.agents.scoring.numbers import extract_quantities
from slmbench.agents.tasks.model import (
    AllSpec,
    EntitiesSpec,
    Evidence,
    NumericSpec,
    ScorerSpec,
    Task,
)

__all__ = ["EVIDENCE_TOLERANCE", "Grounding", "evidence_for", "grounding", "underivable"]

EVIDENCE_TOLERANCE = 0.5  # a task's listed numbers match an observed quantity within this


class Grounding(BaseModel):
    """Whether the evidence was observed; ``missing`` lists what no observation showed."""

    model_config = ConfigDict(frozen=True)

    supported: bool
    missing: list[str]


def _leaves(spec: ScorerSpec) -> list[ScorerSpec]:
    if isinstance(spec, AllSpec):
        return [leaf for s in spec.scorers for leaf in _leaves(s)]
    return [spec]


def evidence_for(task: Task) -> list[tuple[Evidence, float]]:
    """``(item, tolerance)`` pairs a successful observation must show; empty: not applicable."""
    if task.evidence:
        return [(e, EVIDENCE_TOLERANCE) for e in task.evidence]
    out: list[tuple[Evidence, float]] = []
    for leaf in _leaves(task.scorer):
        if isinstance(leaf, NumericSpec):
            out.append((leaf.value, leaf.tolerance))
        elif isinstance(leaf, EntitiesSpec):
            out += [(e, 0.0) for e in leaf.required]
    return out


def _shown(item: Evidence, tolerance: float, texts: Sequence[str],
           numbers: Sequence[float]) -> bool:
    if isinstance(item, int | float) and not isinstance(item, bool):
        return any(abs(v - item) <= tolerance + 1e-9 for v in numbers)
    names = [item] if isinstance(item, str) else item
    return any(n.lower() in t for n in names for t in texts)


def grounding(task: Task, steps: Sequence[Step]) -> Grounding | None:
    """Whether the task's evidence appears in the trial's successful observations.

    None when grounding does not apply to the task (no evidence to look for).
    """
    wanted = evidence_for(task)
    if not wanted:
        return None
    texts = [s.observation.lower() for s in steps if s.tool_ok and s.observation]
    numbers = [q.value for t in texts for q in extract_quantities(t)]
    missing = [str(item) for item, tol in wanted if not _shown(item, tol, texts, numbers)]
    return Grounding(supported=not missing, missing=missing)


def underivable(task: Task, steps: Sequence[Step]) -> str | None:
    """Why the expected answer does not follow from ``steps`` (the reference's), or None.

    Every call must have succeeded; every number a scorer expects must be within its
    tolerance of a number in the successful observations or the instruction, or of a
    sum or difference of two of them (coding tasks excepted: their code computes it);
    every required entity (one of its aliases) must appear in them."""
    for i, step in enumerate(s for s in steps if s.action.kind == "tool"):
        if not step.tool_ok:
            shown = (step.observation or "").strip().splitlines() or [""]
            return (f"field reference.actions.{i}: {step.action.name} returns an error "
                    f"({shown[0][:80]})")
    texts = [s.observation.lower() for s in steps if s.tool_ok and s.observation]
    texts.append(task.instruction.lower())
    seen = [q.value for t in texts for q in extract_quantities(t)]
    derived = {*seen, *(a + b for a, b in combinations(seen, 2)),
               *(abs(a - b) for a, b in combinations(seen, 2))}
    for leaf in _leaves(task.scorer):
        if isinstance(leaf, NumericSpec) and task.group != "coding" and \
                not _shown(leaf.value, leaf.tolerance + 1e-6, texts, sorted(derived)):
            return (f"field scorer: the expected number {leaf.value:g} is in no tool result "
                    "of the reference (nor a sum or difference of two)")
        if isinstance(leaf, EntitiesSpec):
            for entity in leaf.required:
                if not _shown(entity, 0.0, texts, []):
                    return (f"field scorer: the expected {entity!r} is in no tool result of "
                            "the reference")
    return None
