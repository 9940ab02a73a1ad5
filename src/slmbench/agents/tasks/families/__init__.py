"""Task families: each shipped task as a template over the world, instantiated per world seed.

An *instance* is (family, world seed). Seed 0 is the curated task of ``suites/*.yaml``,
unchanged. Any other seed fills the family's template (``<suite>.yaml`` beside this module,
:mod:`.render`) from that seed's world (``World.create(seed)``): its slots plus what the
family's binder (``bind_<suite>.py``; ``bind_capability_extra.py`` for the tasks of
``suites/capability-extra.yaml``; sharing :mod:`.terms`) computes from the world's
records, among them the expected answer. A task with no template (a code task written
against fixed tests, a refusal of a fixed request) is the same task in every world.

:func:`instance` gives one (at a level of the difficulty ladder, :mod:`.levels`);
:func:`certify` (``slmbench tasks validate --instances N``) checks a family over seeds 1..N.
"""

from __future__ import annotations

import random
from functools import cache
from importlib import resources
from typing import Any

import yaml

from slmbench.agents.tasks.families import (
    bind_capability,
    bind_capability_extra,
    bind_reliability,
)
from slmbench.agents.tasks.families.render import fill
from slmbench.agents.tasks.model import Task
from slmbench.agents.world import World

__all__ = ["has_template", "instance", "template_of", "values_for"]

# capability-extra's tasks are capability tasks (suite "capability"): one registry, two modules
_BINDERS = {"capability": {**bind_capability.BINDERS, **bind_capability_extra.BINDERS},
            "reliability": bind_reliability.BINDERS}


@cache
def _templates(suite: str) -> dict[str, Any]:
    path = resources.files("slmbench.agents.tasks.families").joinpath(f"{suite}.yaml")
    if not path.is_file():
        return {}
    loaded: dict[str, Any] = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    return loaded


def template_of(task: Task) -> dict[str, Any] | list[dict[str, Any]] | None:
    """The family template of a shipped task: one, or a list of forms its binder chooses
    from (``form``); None: the task is the same in every world."""
    return _templates(task.suite).get(task.id)


def has_template(task: Task) -> bool:
    return template_of(task) is not None


def values_for(task: Task, world: World) -> dict[str, Any]:
    """What ``task``'s template is filled with in ``world``: its slots, then its binder's."""
    values: dict[str, Any] = dict(world.slots)
    binder = _BINDERS.get(task.suite, {}).get(task.id)
    if binder is not None:
        values.update(binder(world, random.Random(f"{task.id}@{world.seed}")))
    return values


def instance(task: Task, seed: int, level: str = "base") -> Task:
    """``task``'s instance in the world of ``seed`` (seed 0: the curated task itself), at
    ``level``: ``"base"`` (today's instance), or a generated level's number as text
    (:mod:`.levels`; at seed 0 too, from the curated world)."""
    if level != "base":
        from slmbench.agents.tasks.families.levels import level_instance

        return level_instance(task, seed, level)
    if seed == 0:
        return task
    template = template_of(task)
    if template is None:
        return task.model_copy(update={"world_seed": seed})
    values = values_for(task, World.create(seed))
    if isinstance(template, list):  # a family of several forms: its binder draws one
        template = template[int(values["form"])]
    filled = fill(template, values, where=f"{task.id}@{seed}")
    base = task.model_dump(mode="json", exclude_defaults=False)
    return Task.model_validate({**base, **filled, "world_seed": seed})
