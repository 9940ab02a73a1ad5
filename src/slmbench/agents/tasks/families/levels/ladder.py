"""A family's ladder: the level of its base instance, and the forms of its other levels."""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from slmbench.agents.world import World

__all__ = ["BASE", "Form", "Ladder", "no_values"]

BASE = "base"  # the key's name for a family's base instance (today's, at every seed)


def no_values(world: World, rng: random.Random) -> dict[str, Any]:
    """A form whose template needs the world's slots only."""
    return {}


@dataclass(frozen=True)
class Form:
    """One generated level of a family: ``template`` (the task fields it overrides:
    instruction, tools, scorer, evidence, reference, and ``form`` lists are not allowed
    here) filled from the world's slots and what ``binder`` computes from the world (the
    expected answer among it, from the records directly, so that certification's reference
    run through the tools checks the two against each other)."""

    template: Mapping[str, Any]
    binder: Callable[[World, random.Random], dict[str, Any]] = no_values
    what: str = ""  # one line: what this level asks (docs/tasks.md, `tasks list --levels`)


@dataclass(frozen=True)
class Ladder:
    """A capability family's levels: its base instance's level, the generated ``forms`` by
    level, and ``single``: why the family has one level only (then ``forms`` is empty)."""

    base: int
    forms: Mapping[int, Form] = field(default_factory=dict)
    single: str | None = None
    why_base: str = ""  # why the base instance is level ``base`` (its calls, its computation)

    def __post_init__(self) -> None:
        if self.base < 1 or any(n < 1 for n in self.forms):
            raise ValueError("levels start at 1")
        if self.base in self.forms:
            raise ValueError(f"level {self.base} is the base instance; no form may repeat it")
        if bool(self.single) == bool(self.forms):
            raise ValueError("a ladder has forms, or says why it is single-level (not both)")
