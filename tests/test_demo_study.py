"""The demo is a small study file shipped with the package (``slmbench/study/demo.toml``), and
each of its phases is announced with the time elapsed and an estimate."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

from slmbench.agents.runner.config import DEMO_MODEL, demo_dir
from slmbench.agents.runner.plan import plan_of
from slmbench.agents.tools.faults import FAULT_KINDS
from slmbench.study import PlanRow, demo_study
from slmbench.study.demo import estimate
from slmbench.study.spec import part_a_experiment

ROOT = Path(__file__).resolve().parents[1]


def test_the_shipped_demo_file_parses_and_plans_the_demo_grid() -> None:
    study = demo_study(DEMO_MODEL)
    # one run directory, a pure function of the model: Part A's store in it, Part B beside
    assert study.out == study.part_a_dir(0) == demo_dir(DEMO_MODEL)
    assert study.part_b_dir == demo_dir(DEMO_MODEL) / "part-b"
    exp = part_a_experiment(study, 0)
    assert (exp.name, exp.models, exp.suites, exp.tasks) == ("demo", [DEMO_MODEL], ["quick"], [])
    assert (exp.temperatures, exp.repeats, exp.skip_code_tasks) == ([0.7], 1, False)
    # base, one rewording of each kind, and every fault the harness can inject
    assert exp.variants == ["base", "paraphrase", "para1", *(f"fault:{k}" for k in FAULT_KINDS)]
    plan = plan_of(exp)
    # 19 as before, and the level-1 trials of the two quick families whose base is harder
    assert exp.levels == [1]
    assert sorted((p.key.task, p.key.level) for p in plan.trials if p.key.level != "base") == [
        ("CM-1", "1"), ("MR-1", "1")]
    assert len(plan.trials) == 21
    assert sorted(p.key.variant for p in plan.trials if p.key.task == "RR-1") == [
        "base", "para1", "paraphrase"]
    [b] = study.part_b
    assert (b.models, b.tasks, b.prompts, b.limit, b.sequential) == (
        [DEMO_MODEL], ["approval", "tools"], ["p0"], 60, True)
    # the file travels with the package
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert "study/demo.toml" in pyproject["tool"]["setuptools"]["package-data"]["slmbench"]


def test_the_demo_options_replace_the_files_part_a_values(tmp_path: Path) -> None:
    study = demo_study("scripted:echo", out=tmp_path / "d", suite="reliability",
                       tasks=["IR-1"], temperature=0.0, repeats=2, skip_code_tasks=True)
    exp = part_a_experiment(study, 0)
    assert study.out == exp.out == tmp_path / "d"
    assert (exp.suites, exp.tasks, exp.temperatures, exp.repeats, exp.skip_code_tasks) == (
        ["reliability"], ["IR-1"], [0.0], 2, True)
    assert study.part_b[0].models == ["scripted:echo"]
    # options not given keep the file's values
    assert part_a_experiment(demo_study("scripted:echo", temperature=None), 0).temperatures == [0.7]


def _row(**given: object) -> PlanRow:
    return PlanRow.model_validate({"block": "A1", "model": "llamacpp:m?n_ctx=8", "unit": "trial",
                                   "planned": 19, "stored": 4, **given})


def test_an_estimate_comes_from_the_runs_own_trials_else_a_measured_figure(
        tmp_path: Path) -> None:
    measured = tmp_path / "study_throughput.json"
    # the run's own stored trials first
    own = estimate(_row(seconds_per=2.5, measured_n=4), measured)
    assert own == ("19 trials planned, 4 stored; about 0:00:38 of model time "
                   "(15 x 2.50 s a trial: the mean of the 4 trials this run stored)")
    # none stored and no figure: no number
    assert estimate(_row(stored=0), measured) == (
        "19 trials planned, 0 stored; no estimate: no trial of llamacpp:m?n_ctx=8 stored yet, "
        f"and none of its runtime measured in {measured}")
    # a benchmark's measured figure of the same runtime (its spec without options)
    measured.write_text(json.dumps({
        "in_process": {"model": "llamacpp:m", "part_a_s": 100.0, "trials": 10,
                       "part_b_s": 30.0, "readings": 20},
        "server": {"model": "llamaserver:m", "part_a_s": 1.0, "trials": 10}}), encoding="utf-8")
    assert estimate(_row(stored=0), measured) == (
        "19 trials planned, 0 stored; about 0:03:10 of model time "
        f"(19 x 10.00 s a trial: measured on llamacpp:m in {measured})")
    reading = _row(unit="reading", planned=120, stored=20, at_most=True)
    assert estimate(reading, measured) == (
        "at most 120 readings planned, 20 stored; at most about 0:02:30 of model time "
        f"(100 x 1.50 s a reading: measured on llamacpp:m in {measured})")
    assert estimate(_row(model="llamaserver:other"), measured).endswith(
        f"none of its runtime measured in {measured}")
    assert estimate(_row(stored=19), measured) == (
        "19 trials planned, 19 stored; nothing left to run")
    assert estimate(reading.model_copy(update={"settled": True}), measured) == (
        "at most 120 readings planned, 20 stored; nothing left to read")
