"""The difficulty ladder as a whole: every capability family has one, the base instance is
today's, names and numbers map one to one, and docs/tasks.md's table is the ladders'."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from slmbench.agents.tasks import load_tasks
from slmbench.agents.tasks.families import instance
from slmbench.agents.tasks.families.levels import (
    LADDERS,
    ladder_of,
    level_instance,
    level_name,
    level_number,
    levels_of,
    parse_levels,
)
from slmbench.core.errors import ConfigError

ROOT = Path(__file__).resolve().parents[3]
CAPABILITY = [t for t in load_tasks().values() if t.suite == "capability"]


def test_every_capability_family_has_a_ladder_and_no_reliability_task_has_one() -> None:
    assert sorted(t.id for t in CAPABILITY) == sorted(LADDERS)
    assert all(ladder_of(t) is None for t in load_tasks().values() if t.suite == "reliability")
    for task in CAPABILITY:
        ladder = LADDERS[task.id]
        assert ladder.why_base, task.id
        if ladder.single:
            assert task.group in {"coding", "safety"}, task.id  # single-level only by kind
            assert level_number(task.id, "base") is None  # left out of per-level rates
        else:
            assert levels_of(task) == [1, 2, 3], task.id
            assert all(f.what for f in ladder.forms.values()), task.id


@pytest.mark.parametrize("task", CAPABILITY[:: 7], ids=lambda t: t.id)
def test_the_base_level_is_todays_instance_and_names_map_to_numbers(task) -> None:
    for seed in (0, 4):
        assert instance(task, seed, "base") == instance(task, seed)
    ladder = LADDERS[task.id]
    if ladder.single:
        return
    assert level_name(task, ladder.base) == "base"
    for n, _form in ladder.forms.items():
        assert level_name(task, n) == str(n) and level_number(task.id, str(n)) == n
        made = instance(task, 0, str(n))
        assert made.id == task.id and made.world_seed == 0
        assert made.instruction != task.instruction  # another question than the base's
    assert level_name(task, 9) is None


def test_a_level_a_family_lacks_and_levels_that_are_not_levels_are_errors() -> None:
    sf1 = load_tasks()["SF-1"]
    with pytest.raises(ConfigError, match="SF-1 has no level '2'"):
        level_instance(sf1, 1, "2")
    assert parse_levels("3, 1,2,1") == [1, 2, 3]
    for bad in ("0", "a", "1,x", ""):
        with pytest.raises(ConfigError, match="--levels"):
            parse_levels(bad)


def test_docs_ladder_table_is_the_ladders() -> None:
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "ladder_table.py"),
                           "--check"], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr


def test_the_cli_lists_ladders_and_certifies_levels_only_over_drawn_worlds() -> None:
    from typer.testing import CliRunner

    from slmbench.cli.main import app

    runner = CliRunner()
    listed = runner.invoke(app, ["tasks", "list", "--suite", "capability", "--levels"],
                           env={"COLUMNS": "200"})
    assert listed.exit_code == 0 and "difficulty ladder" in listed.output
    assert "single-level" in listed.output and "two searches and a subtraction" in listed.output
    refused = runner.invoke(app, ["tasks", "validate", "capability", "--levels", "1,2"])
    assert refused.exit_code == 2 and "--instances" in refused.output
