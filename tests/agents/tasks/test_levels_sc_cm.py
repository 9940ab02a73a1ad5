"""The scheduling and communication ladders (``families/levels/scheduling.py``,
``communication.py``): every generated level certifies over the worlds a study draws, and
each family has levels 1, 2 and 3 (its base among them)."""

from __future__ import annotations

import pytest

from slmbench.agents.certify import certify
from slmbench.agents.tasks import Task, load_suite
from slmbench.agents.tasks.families import instance
from slmbench.agents.tasks.families.levels import LADDERS, levels_of

FAMILIES = {t.id: t for s in ("capability", "capability-extra") for t in load_suite(s)
            if t.id.startswith(("SC-", "CM-"))}
LEVELS = [(f, n) for f in sorted(FAMILIES) for n in sorted(LADDERS[f].forms)]


def test_every_family_has_a_ladder() -> None:
    assert sorted(FAMILIES) == sorted([*(f"SC-{i}" for i in range(1, 9)),
                                       *(f"CM-{i}" for i in range(1, 9))])
    assert all(f in LADDERS for f in FAMILIES)


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_each_ladder_covers_levels_1_to_3(family: str) -> None:
    ladder = LADDERS[family]
    assert levels_of(FAMILIES[family])[:3] == [1, 2, 3]
    assert ladder.why_base and all(form.what for form in ladder.forms.values())


@pytest.mark.parametrize(("family", "level"), LEVELS, ids=[f"{f}-L{n}" for f, n in LEVELS])
def test_every_level_certifies_over_seeds_1_to_3(family: str, level: int) -> None:
    task: Task = FAMILIES[family]
    check = certify(task, range(1, 4), level=str(level))
    assert check.passed, check.reasons


@pytest.mark.parametrize(("family", "level"), LEVELS, ids=[f"{f}-L{n}" for f, n in LEVELS])
def test_every_level_is_solved_in_the_curated_world(family: str, level: int) -> None:
    """Seed 0 (the curated world) has an instance too, and its reference solves it."""
    inst = instance(FAMILIES[family], 0, str(level))
    assert inst.difficulty == level and inst.world_seed == 0
    check = certify(FAMILIES[family], [0], level=str(level), agents=())
    assert check.reference_solved == 1, check.reference_failures
