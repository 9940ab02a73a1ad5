"""The information-retrieval and decision-making ladders: every generated level certifies
(the reference solves it through the tools, and the no-skill bench stays in its bounds) over
seeds 1..3, its seed-0 instance builds and is solved, and each family has levels 1 to 3.
The 20-seed certification of each level is run by hand (``certify(task, range(1, 21),
level=...)``) when a form changes."""

from __future__ import annotations

import pytest

from slmbench.agents.certify import certify
from slmbench.agents.tasks import load_suite
from slmbench.agents.tasks.families import instance
from slmbench.agents.tasks.families.levels import decision_making, information_retrieval
from slmbench.agents.tasks.families.levels.ladder import Ladder

TASKS = {t.id: t for t in (*load_suite("capability"), *load_suite("capability-extra"))}
LADDERS: dict[str, Ladder] = {**information_retrieval.LADDERS, **decision_making.LADDERS}
FAMILIES = [*(f"IR-{n}" for n in range(1, 9)), *(f"DM-{n}" for n in range(1, 9))]
LEVELS = [(family, n) for family in FAMILIES for n in sorted(LADDERS[family].forms)]


@pytest.mark.parametrize("family", FAMILIES)
def test_each_family_has_levels_one_to_three(family: str) -> None:
    ladder = LADDERS[family]
    assert {1, 2, 3} <= {ladder.base, *ladder.forms}
    assert ladder.why_base
    assert all(form.what for form in ladder.forms.values())


@pytest.mark.parametrize(("family", "level"), LEVELS, ids=lambda v: str(v))
def test_every_level_certifies_over_three_seeds(family: str, level: int) -> None:
    check = certify(TASKS[family], range(1, 4), level=str(level))
    assert check.passed, check.reasons


@pytest.mark.parametrize(("family", "level"), LEVELS, ids=lambda v: str(v))
def test_every_level_has_a_solved_seed_zero_instance(family: str, level: int) -> None:
    task = instance(TASKS[family], 0, str(level))
    assert task.world_seed == 0 and task.difficulty == level
    check = certify(TASKS[family], [0], level=str(level), agents=[])
    assert check.reference_solved == 1, check.reference_failures
