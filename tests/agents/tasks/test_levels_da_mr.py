"""The difficulty ladders of data analysis (DA-1..DA-8) and multi-step reasoning (MR-1..MR-8):
every generated level certifies over the worlds a study draws (seeds 1..3), its seed-0
instance builds and is solved, and each ladder covers levels 1 to 3."""

from __future__ import annotations

import pytest

from slmbench.agents.certify import certify
from slmbench.agents.tasks import Task, load_suite
from slmbench.agents.tasks.families.levels import (
    LADDERS,
    data_analysis,
    levels_of,
    multi_step_reasoning,
)

TASKS: dict[str, Task] = {t.id: t for suite in ("capability", "capability-extra")
                          for t in load_suite(suite)}
FAMILIES = sorted({**data_analysis.LADDERS, **multi_step_reasoning.LADDERS})
LEVELS = [(f, n) for f in FAMILIES for n in sorted(LADDERS[f].forms)]


def test_the_groups_families_all_have_a_ladder() -> None:
    ids = sorted(t.id for t in TASKS.values()
                 if t.group in ("data_analysis", "multi_step_reasoning"))
    assert ids == FAMILIES


@pytest.mark.parametrize("family", FAMILIES)
def test_each_ladder_covers_levels_1_to_3(family: str) -> None:
    ladder = LADDERS[family]
    assert {1, 2, 3} <= set(levels_of(TASKS[family]))
    assert ladder.why_base and all(form.what for form in ladder.forms.values())


@pytest.mark.parametrize(("family", "level"), LEVELS, ids=[f"{f}-L{n}" for f, n in LEVELS])
def test_level_certifies(family: str, level: int) -> None:
    task = TASKS[family]
    check = certify(task, range(1, 4), level=str(level))
    assert check.passed, check.reasons
    seed0 = certify(task, [0], level=str(level), agents=())
    assert seed0.reference_solved == 1, seed0.reasons
