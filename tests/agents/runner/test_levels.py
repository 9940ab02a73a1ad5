"""The difficulty ladder in a run: `levels` plans each capability family's levels beside its
base instance, keyed apart, each trial run and judged at its own level."""

from __future__ import annotations

from pathlib import Path

import pytest

from slmbench.agents.records import Outcome
from slmbench.agents.runner.config import Experiment, build_experiment
from slmbench.agents.runner.plan import derive_seed, levels_to_run, plan_of
from slmbench.agents.store import RunStore
from slmbench.agents.tasks import load_tasks
from slmbench.agents.tasks.families import instance
from slmbench.core.errors import ConfigError


def _exp(**kw: object) -> Experiment:
    return build_experiment({"models": ["scripted:echo"], "tasks": ["IR-1"],
                             "temperatures": [0.0], "repeats": 1, **kw})


def test_levels_plan_each_family_beside_its_base_and_reliability_tasks_keep_one_form() -> None:
    exp = build_experiment({"models": ["scripted:echo"], "suites": ["capability", "reliability"],
                            "tasks": ["IR-1", "RC-1"], "temperatures": [0.0], "repeats": 1,
                            "levels": "1,2,3"})
    keys = sorted((k.task, k.level) for k in plan_of(exp).keys())
    ir1 = load_tasks()["IR-1"]
    assert levels_to_run(ir1, [1, 2, 3]) == ["base", "2", "3"]  # level 1 is its own instance
    assert ("IR-1", "base") in keys and ("IR-1", "2") in keys
    assert {lv for t, lv in keys if t == "RC-1"} == {"base"}
    # a level's trial has its own seed; the base keeps the seed planned before levels existed
    assert derive_seed("IR-1", 0, 0, 0) == derive_seed("IR-1", 0, 0, 0, "base")
    assert derive_seed("IR-1", 0, 0, 0, "2") != derive_seed("IR-1", 0, 0, 0)


def test_a_run_without_levels_keeps_its_grid_fingerprint_and_keys() -> None:
    plain = build_experiment({"models": ["scripted:echo"], "tasks": ["IR-1"],
                              "temperatures": [0.0], "repeats": 1})
    assert plain.levels == []
    with_levels = plain.model_copy(update={"levels": [2]})
    assert plain.grid_fingerprint() != with_levels.grid_fingerprint()
    assert {k.level for k in plan_of(plain).keys()} == {"base"}
    base_keys = plan_of(plain).keys()
    assert base_keys < plan_of(with_levels).keys()  # the base trials are the same, key for key


@pytest.mark.parametrize("levels", ["0", "one", ""])
def test_levels_that_are_not_levels_are_one_line_errors(levels: str) -> None:
    if levels == "":
        assert build_experiment({"models": ["scripted:echo"], "tasks": ["IR-1"],
                                 "levels": levels}).levels == []
        return
    with pytest.raises(ConfigError, match="levels"):
        build_experiment({"models": ["scripted:echo"], "tasks": ["IR-1"], "levels": levels})


def test_a_level_trial_runs_and_is_judged_at_its_level(tmp_path: Path) -> None:
    from slmbench.agents.runner.executor import execute
    from slmbench.agents.tasks.reference import reference_agent

    exp = build_experiment({"models": ["scripted:echo"], "tasks": ["IR-1"],
                            "temperatures": [0.0], "repeats": 1, "levels": [2]})
    ir1 = load_tasks()["IR-1"]
    level2 = instance(ir1, 0, "2")

    from slmbench.agents.evaluator import run_trial

    def trial_fn(model: object, task: object, **kw: object) -> object:
        """The reference agent of the task the executor hands over: right only where that
        task is the trial's own level."""
        return run_trial(reference_agent(task), task, **kw)  # type: ignore[arg-type]

    summary = execute(exp, run_dir=tmp_path / "run", trial_fn=trial_fn)
    assert summary.complete
    with RunStore(tmp_path / "run") as store:
        rows = {r.key.level: r for r in store.trials()}
    assert set(rows) == {"base", "2"}
    assert rows["2"].record["level"] == "2" and rows["2"].outcome == Outcome.SUCCESS.value
    assert rows["2"].record["question"]["instruction"] == level2.instruction
    assert rows["2"].record["harness"] != rows["base"].record["harness"]


def test_a_task_file_gets_no_levels() -> None:
    from slmbench.agents.runner.preflight import check_instances

    ir1 = load_tasks()["IR-1"]
    mine = ir1.model_copy(update={"instruction": "How tall is Mount Varrick, in metres, please?"})
    exp = _exp(levels=[2])
    plan = plan_of(exp)
    plan.tasks["IR-1"] = mine
    with pytest.raises(ConfigError, match="levels are drawn from the shipped task families"):
        check_instances(exp, plan)
