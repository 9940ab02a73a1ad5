"""The difficulty ladder's rates (issue #61, "Pages"): success per level with its task-level
interval, the highest level held, and a run's other numbers untouched by its level trials."""

from __future__ import annotations

import pytest

from slmbench.agents.analysis import analyze
from slmbench.agents.ladder_rates import level_ladder, level_ladders, split
from slmbench.agents.records import FaultPlan, Outcome, Trial
from slmbench.agents.summary import HOLDS_AT
from slmbench.agents.tasks import load_tasks
from slmbench.agents.tasks.families import levels
from slmbench.agents.tasks.families.levels import Form, Ladder
from slmbench.core import stats
from slmbench.core.errors import ConfigError

TASKS = load_tasks()
MODEL = "scripted:a"
FAMILIES = [f"X-{i}" for i in range(1, 13)]  # 12 made-up families, each with levels 1 to 3
THREE = Ladder(base=1, forms={2: Form(template={}), 3: Form(template={})})


def _trial(task: str, ok: bool, *, level: str = "base", instance: int = 0, repeat: int = 0,
           model: str = MODEL, suite: str = "capability", variant: str = "base",
           outcome: Outcome | None = None, fault: bool = False) -> Trial:
    return Trial(model=model, task_id=task, suite=suite, variant=variant, level=level,
                 instance=instance, repeat=repeat, seed=1000 * instance + repeat,
                 outcome=outcome or (Outcome.SUCCESS if ok else Outcome.WRONG_ANSWER),
                 final_answer="x",
                 fault_plan=FaultPlan(tool="web_search", fault="timeout") if fault else None)


@pytest.fixture
def made_up(monkeypatch: pytest.MonkeyPatch) -> None:
    """Ladders for the made-up families (the real ones are written elsewhere)."""
    monkeypatch.setattr(levels, "LADDERS", {f: THREE for f in FAMILIES})


def _ladder_run(level_ok: dict[int, list[bool]]) -> list[Trial]:
    """Two instances of each made-up family at each level; ``level_ok[n][i]``: whether family
    i passes level n (both instances alike)."""
    return [_trial(f, ok, level="base" if n == 1 else str(n), instance=k)
            for n, oks in level_ok.items() for f, ok in zip(FAMILIES, oks, strict=True)
            for k in range(2)]


def test_each_levels_rate_is_the_task_level_rate_of_its_families(made_up: None) -> None:
    oks = {1: [True] * 12, 2: [i % 3 != 0 for i in range(12)], 3: [False] * 12}
    (lad,) = level_ladders(_ladder_run(oks))
    assert lad.model == MODEL and lad.levels_run == [1, 2, 3]
    for r in lad.levels:
        assert r.trials == 24 and r.tasks == 12 and r.families == sorted(FAMILIES)
        assert r.successes == 2 * sum(oks[r.level])
        assert r.generated == (0 if r.level == 1 else 24)  # level 1 is the base instance
        # the family is the task: its two instances one cluster of two trials
        assert r.rate == stats.task_level_rate(sorted((2, 2 * ok) for ok in oks[r.level]))
    two = next(r for r in lad.levels if r.level == 2)
    assert two is not None and two.rate.estimate == pytest.approx(8 / 12)
    assert two.rate.tasks == 12 and two.rate.trials_per_task == 2


def test_the_highest_level_held_is_the_highest_lower_bound_at_half(made_up: None) -> None:
    """Level 2 passed by every family is held; level 3, passed by none, is not."""
    (lad,) = level_ladders(_ladder_run({1: [True] * 12, 2: [True] * 12, 3: [False] * 12}))
    low = {r.level: r.rate.low for r in lad.levels}
    assert low[2] is not None and low[2] >= HOLDS_AT
    assert low[3] is not None and low[3] < HOLDS_AT
    assert lad.held == 2
    assert [r.holds for r in lad.levels] == [True, True, False]


def test_held_is_the_highest_held_level_even_above_one_not_held(made_up: None) -> None:
    (lad,) = level_ladders(_ladder_run({1: [False] * 12, 2: [True] * 12}))
    assert lad.held == 2


def test_no_level_held(made_up: None) -> None:
    """Two of three families pass each level: a point at 67%, a lower bound far below 50%."""
    few = {1: [True, True, False] + [False] * 9, 2: [True, False, True] + [False] * 9}
    trials = [t for t in _ladder_run(few) if t.task_id in FAMILIES[:3]]
    (lad,) = level_ladders(trials)
    assert all(r.rate.estimate == pytest.approx(2 / 3) for r in lad.levels)
    assert all(not r.holds for r in lad.levels)
    assert lad.held is None


def test_out_of_scope_and_not_the_models_trials_are_dropped(made_up: None) -> None:
    kept = [_trial(f, True, level="2") for f in FAMILIES[:4]]
    dropped = [_trial("X-1", False, level="2", suite="reliability"),
               _trial("X-1", False, level="2", variant="paraphrase_1"),
               _trial("X-1", False, level="2", fault=True),
               _trial("X-1", False, level="2", outcome=Outcome.BACKEND_ERROR),
               _trial("DA-1", False, level="2")]  # a family with no ladder here
    lad = level_ladder(MODEL, kept + dropped)
    (two,) = lad.levels
    assert two.trials == 4 and two.successes == 4 and two.tasks == 4


def test_a_run_without_generated_levels_has_no_ladder(made_up: None) -> None:
    base = _ladder_run({1: [True] * 12})
    assert level_ladders(base) == []
    # only the configurations that ran a generated level have one
    other = [_trial(f, True, model="scripted:b") for f in FAMILIES]
    ladders = level_ladders(_ladder_run({1: [True] * 12, 2: [True] * 12}) + other)
    assert [lad.model for lad in ladders] == [MODEL]


def _base_run() -> list[Trial]:
    return [_trial(f, (i + r) % 3 != 0, instance=i, repeat=r, model=m)
            for m in ("scripted:a", "scripted:b") for f in ("IR-1", "IR-2", "DA-1", "DA-2")
            for i in range(3) for r in range(2)]


def test_level_trials_move_no_other_number_of_the_summary() -> None:
    """IR-1 (base level 1, a generated level 2): adding its level-2 trials, failures every one
    of them, changes the summary's ladder and nothing else."""
    base = _base_run()
    alone = analyze(base, tasks=TASKS)
    assert alone.ladder == []
    level2 = [_trial("IR-1", False, level="2", instance=i, repeat=r, model="scripted:a")
              for i in range(3) for r in range(2)]
    mixed = analyze([*base[:10], *level2, *base[10:]], tasks=TASKS)
    ignore = {"created_at", "ladder"}
    assert mixed.model_dump(exclude=ignore) == alone.model_dump(exclude=ignore)
    (lad,) = mixed.ladder
    assert lad.model == "scripted:a" and lad.levels_run == [1, 2]
    one, two = lad.levels
    # every family of the run is at level 1 by its base (IR-1, IR-2, DA-1, DA-2 all are)
    assert one.families == ["DA-1", "DA-2", "IR-1", "IR-2"] and one.generated == 0
    assert one.trials == 24
    assert two.families == ["IR-1"] and two.generated == 6 and two.successes == 0
    assert two.rate == stats.task_level_rate([(6, 0)])
    assert lad.held is None


def test_the_split_keeps_base_trials_for_every_other_figure() -> None:
    base = _base_run()
    level2 = [_trial("IR-1", True, level="2")]
    assert split([*level2, *base]) == (base, level2)


def test_a_run_of_generated_levels_only_is_refused() -> None:
    with pytest.raises(ConfigError, match="no trial of a base instance"):
        analyze([_trial("IR-1", True, level="2")], tasks=TASKS)
