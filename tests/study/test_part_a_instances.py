"""``[part_a] instances = N`` in a study file reaches the plan; a bad value is one line."""

from __future__ import annotations

from pathlib import Path

import pytest

from slmbench.agents.runner.plan import plan_of
from slmbench.core.errors import ConfigError
from slmbench.study import load_study
from slmbench.study.spec import part_a_experiment


def _study(tmp: Path, extra: str) -> Path:
    path = tmp / "study.toml"
    path.write_text(f"""\
name = "instances"
out = "runs/instances"

[part_a]
models = ["scripted:echo"]
tasks = ["IR-1", "DA-1"]
temperatures = [0.0]
repeats = 2
{extra}
""", encoding="utf-8")
    return path


def test_the_part_a_instances_key_reaches_the_plan(tmp_path: Path) -> None:
    plain = plan_of(part_a_experiment(load_study(_study(tmp_path, ""), base=tmp_path), 0))
    study = load_study(_study(tmp_path, "instances = 3"), base=tmp_path)
    assert study.part_a[0].instances == 3
    plan = plan_of(part_a_experiment(study, 0))
    assert len(plan.trials) == 3 * len(plain.trials) == 3 * 2 * 2
    assert {p.key.instance for p in plan.trials} == {0, 1, 2}
    drawn = load_study(_study(tmp_path, "instances = 2\ninclude_curated = false"),
                       base=tmp_path)
    assert {p.key.instance for p in plan_of(part_a_experiment(drawn, 0)).trials} == {1, 2}


@pytest.mark.parametrize("value", ["0", "-1", "'three'"])
def test_a_bad_instances_value_names_the_field(tmp_path: Path, value: str) -> None:
    path = _study(tmp_path, f"instances = {value}")
    with pytest.raises(ConfigError) as exc:
        load_study(path, base=tmp_path)
    assert "part_a.0.instances" in str(exc.value) and str(path) in str(exc.value)
    assert "\n" not in str(exc.value) and exc.value.hint


def test_the_page_design_says_how_many_worlds_each_task_runs_in(tmp_path: Path) -> None:
    from slmbench.study.gather import design

    plain = design(load_study(_study(tmp_path, ""), base=tmp_path))[0][2]
    assert "instance" not in plain  # a page of the curated tasks alone reads as before
    row = design(load_study(_study(tmp_path, "instances = 3"), base=tmp_path))[0][2]
    assert "3 instance(s) of each task (worlds 0..2, seed 0 the curated task)" in row
