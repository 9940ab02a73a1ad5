"""The difficulty ladder: each capability family's levels beside its ``base`` instance.

A family's *base* instance is today's (``families.instance(task, seed)``), byte-identical at
every seed; it sits at the level its structure has (:attr:`Ladder.base`). The other levels are
*forms* added beside it, each a template over the world (as ``<suite>.yaml``'s family
templates: the fields it overrides, ``{{name}}`` filled from the world's slots and the
form's binder) that gives an instance at any world seed, seed 0 included:

- level 1: one tool call, and an answer read directly from its result;
- level 2: two calls, or one call and a computation;
- level 3 and up: more hops, more rows, distractor entities.

A family with one level only says why (:attr:`Ladder.single`: a refusal, code written
against fixed tests, ...). Group modules hold the ladders (``levels/<group>.py``, each a
``LADDERS`` dict); :data:`LADDERS` joins them, and a test checks that every capability family
has one. ``docs/tasks.md`` ("Levels") says what each level of each kind is.

A trial's key names the level it ran (``"base"``, or a generated level's number as text): a
level-``n`` request of a family whose base is level ``n`` is its base instance
(:func:`level_name`), so one question never has two keys.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from slmbench.agents.tasks.families.levels import (
    coding,
    communication,
    data_analysis,
    decision_making,
    information_retrieval,
    multi_step_reasoning,
    safety,
    scheduling,
)
from slmbench.agents.tasks.families.levels.ladder import BASE, Form, Ladder
from slmbench.agents.tasks.families.render import fill
from slmbench.agents.tasks.model import Task
from slmbench.agents.world import World
from slmbench.core.errors import ConfigError

__all__ = ["BASE", "LADDERS", "Form", "Ladder", "form_of", "ladder_of", "level_instance",
           "level_name", "level_number", "levels_of", "parse_levels", "to_certify"]

LADDERS: Mapping[str, Ladder] = {
    **information_retrieval.LADDERS, **scheduling.LADDERS, **data_analysis.LADDERS,
    **communication.LADDERS, **multi_step_reasoning.LADDERS, **decision_making.LADDERS,
    **coding.LADDERS, **safety.LADDERS,
}


def ladder_of(task: Task | str) -> Ladder | None:
    """The ladder of a capability family (None: a reliability task, or an unknown id)."""
    return LADDERS.get(task if isinstance(task, str) else task.id)


def levels_of(task: Task) -> list[int]:
    """Every level ``task``'s family has, ascending (its base's among them); [] for a task
    with no ladder (a reliability task: it keeps its one form)."""
    ladder = ladder_of(task)
    return [] if ladder is None else sorted({ladder.base, *ladder.forms})


def level_name(task: Task, number: int) -> str | None:
    """The key's name for level ``number`` of ``task``'s family: ``"base"`` where its base
    instance is that level, the number as text for a generated form, None where the family
    has no such level."""
    ladder = ladder_of(task)
    if ladder is None:
        return None
    if number == ladder.base:
        return BASE
    return str(number) if number in ladder.forms else None


def level_number(task_id: str, name: str) -> int | None:
    """The level a key's ``name`` is for family ``task_id`` (``"base"``: its base's level);
    None for a task with no ladder or a single-level one (a refusal, code against fixed
    tests: no rung of the ladder, so no per-level rate counts it)."""
    ladder = LADDERS.get(task_id)
    if ladder is None or ladder.single:
        return None
    return ladder.base if name == BASE else int(name)


def parse_levels(text: str | Iterable[int | str], *, where: str = "--levels") -> list[int]:
    """``"1,2,3"`` (or a list) as distinct levels, ascending; ConfigError naming ``where``."""
    parts = [p.strip() for p in text.split(",")] if isinstance(text, str) else \
        [str(p).strip() for p in text]
    try:
        numbers = sorted({int(p) for p in parts if p})
    except ValueError:
        raise ConfigError(f"{where}: levels must be whole numbers, got {text!r}",
                          "write them as 1,2,3") from None
    if not numbers or numbers[0] < 1:
        raise ConfigError(f"{where}: levels start at 1, got {text!r}", "write them as 1,2,3")
    return numbers


def form_of(task_id: str, name: str) -> Form | None:
    """The generated form a key's level ``name`` runs for family ``task_id`` (None: the base,
    or a level the family lacks)."""
    ladder = LADDERS.get(task_id)
    return None if ladder is None or not name.isdigit() else ladder.forms.get(int(name))


def level_instance(task: Task, seed: int, name: str) -> Task:
    """Level ``name`` (a generated form's number as text) of ``task``'s family in the world
    of ``seed``: the form's template filled from that world, over the family's other fields.
    The base level is ``families.instance``'s, not this function's."""
    form = form_of(task.id, name)
    if form is None:
        raise ConfigError(f"{task.id} has no level {name!r}",
                          "`slmbench tasks list --levels` shows each family's levels")
    world = World.create(seed)
    values: dict[str, Any] = dict(world.slots)
    values.update(form.binder(world, random.Random(f"{task.id}/L{name}@{seed}")))
    filled = fill(form.template, values, where=f"{task.id} level {name} @{seed}")
    base = task.model_dump(mode="json", exclude_defaults=False)
    return Task.model_validate({**base, "paraphrases": [], "evidence": [],
                                "difficulty": min(int(name), 5), **filled,
                                "world_seed": seed})


def to_certify(task: Task, asked: Sequence[int] | None) -> list[tuple[str, str]]:
    """(level name, label) pairs to certify for ``task``: its base alone without --levels,
    else each asked level its ladder has ("1 (base)" where the base is that level)."""
    if asked is None:
        return [("base", "")]
    if ladder_of(task) is None:
        return [("base", "base")] if task.suite == "capability" else []
    out = []
    for n in asked:
        name = level_name(task, n)
        if name is not None:
            out.append((name, f"{n} (base)" if name == "base" else str(n)))
    return out
