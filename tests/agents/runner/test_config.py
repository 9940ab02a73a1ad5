"""Experiment files: valid ones load, broken ones fail with one clear line."""

from __future__ import annotations

from pathlib import Path

import pytest

from slmbench.agents.runner.config import Experiment, build_experiment, load_experiment
from slmbench.core.errors import ConfigError, ModelSpecError
from slmbench.models.spec import parse_spec

GOOD = """
name = "sweep"
models = ["scripted:echo", "openai:qwen@http://127.0.0.1:9/v1"]
suites = ["capability"]
temperatures = [0.3, 0.7, 1.0]
repeats = 2
out = "runs/sweep"

[concurrency]
"openai:qwen@http://127.0.0.1:9/v1" = 3

[retry]
attempts = 4
base_s = 0.1
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "exp.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_good_file_loads_every_field(tmp_path: Path) -> None:
    exp = load_experiment(write(tmp_path, GOOD))
    assert exp.name == "sweep"
    assert exp.temperatures == [0.3, 0.7, 1.0]
    assert exp.repeats == 2
    assert exp.retry.attempts == 4 and exp.retry.base_s == 0.1
    assert exp.out == Path("runs/sweep")
    assert exp.workers("openai:qwen@http://127.0.0.1:9/v1") == 3
    assert exp.workers("scripted:echo") == 1  # in-process: one trial at a time


def test_trials_in_flight_default_to_a_managed_servers_slots_and_deterministic_is_one() -> None:
    served, other = "llamaserver:qwen2.5-coder-0.5b?slots=6", "ollama:qwen2.5:7b"
    exp = build_experiment({"models": [served, other], "tasks": ["IR-1"]})
    assert exp.workers(served) == 6 and exp.workers(other) == 4
    assert build_experiment({"models": [served], "tasks": ["IR-1"],
                             "default_concurrency": 2}).workers(served) == 2
    one = build_experiment({"models": [served, other], "tasks": ["IR-1"], "deterministic": True,
                            "concurrency": {other: 8}})
    assert one.workers(served) == one.workers(other) == 1


def test_flags_override_the_file(tmp_path: Path) -> None:
    exp = load_experiment(write(tmp_path, GOOD), {"repeats": 5, "temperatures": [0.0],
                                                  "suites": None})
    assert exp.repeats == 5 and exp.temperatures == [0.0]
    assert exp.suites == ["capability"]  # a flag not given (None) keeps the file's value


@pytest.mark.parametrize(("text", "expected"), [
    ('models = ["scripted:echo"\nsuites = ["x"]', ":2:1: Unclosed array (not valid TOML)"),
    ('models = ["scripted:echo"]\nsuites = ["x"]\nrepeats = "three"', "repeats: Input should be"),
    ('models = ["scripted:echo"]\nsuites = ["x"]\nbogus = 1', "bogus: Extra inputs"),
    ('models = ["scripted:echo"]\nsuites = ["x"]\ntemperatures = [3.0]', "outside [0, 2]"),
    ('models = []\nsuites = ["x"]', "models: List should have at least 1 item"),
    ('models = ["scripted:echo"]', "name at least one suite or task id"),
    ('models = ["scripted:echo"]\nsuites = ["x"]\n[concurrency]\n"ollama:m" = 2',
     "concurrency names a model the experiment does not run: ollama:m"),
    ('models = ["scripted:echo"]\nsuites = ["x"]\n[retry]\nattempts = 0',
     "retry.attempts: Input should be greater than or equal to 1"),
])
def test_broken_files_fail_with_one_clear_line(tmp_path: Path, text: str, expected: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as info:
        load_experiment(path)
    message = str(info.value)
    assert expected in message
    assert str(path) in message
    assert "\n" not in message
    assert info.value.hint


def test_toml_syntax_error_names_the_line(tmp_path: Path) -> None:
    path = write(tmp_path, 'models = ["scripted:echo"]\nsuites = [x]\n')
    with pytest.raises(ConfigError) as info:
        load_experiment(path)
    assert str(info.value).startswith(f"{path}:2:11: ")


def test_a_malformed_model_spec_names_the_file_and_the_field(tmp_path: Path) -> None:
    path = write(tmp_path, 'models = ["scripted:echo", "gpt:4"]\nsuites = ["x"]')
    with pytest.raises(ConfigError) as info:
        load_experiment(path)
    assert str(info.value).startswith(f"{path}: models: entry 1: unknown model backend 'gpt'")
    assert "\n" not in str(info.value) and info.value.hint
    with pytest.raises(ModelSpecError, match="unknown model backend 'gpt'"):  # parsed alone
        parse_spec("gpt:4")


def test_an_unknown_task_id_names_the_file_and_the_field(tmp_path: Path) -> None:
    path = write(tmp_path, 'models = ["scripted:echo"]\ntasks = ["IR-1", "IR-99"]')
    with pytest.raises(ConfigError) as info:
        load_experiment(path)
    message = str(info.value)
    assert message.startswith(f"{path}: field tasks.1: no task 'IR-99'"), message
    assert "did you mean" in info.value.hint
    assert load_experiment(write(tmp_path, 'models = ["scripted:echo"]\ntasks = ["IR-1"]'))


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        load_experiment(tmp_path / "nope.toml")


def test_default_out_dir_is_stable_and_tracks_the_grid() -> None:
    a = build_experiment({"models": ["scripted:echo"], "suites": ["quick"]})
    b = build_experiment({"models": ["scripted:silent"], "suites": ["quick"]})
    c = build_experiment({"models": ["scripted:echo"], "suites": ["quick"], "repeats": 1})
    assert a.out_dir() == b.out_dir()  # same grid, so the same run (models can be added)
    assert a.out_dir() != c.out_dir()
    assert a.out_dir().parent == Path("runs")
    named = Experiment(models=["scripted:echo"], suites=["quick"], name="mine")
    assert named.out_dir() == Path("runs/mine")


def test_duplicates_are_dropped() -> None:
    exp = build_experiment({"models": ["scripted:echo", "scripted:echo"], "suites": ["x"],
                            "temperatures": [0.3, 0.30001, 0.7]})
    assert exp.models == ["scripted:echo"]
    assert exp.temperatures == [0.3, 0.7]
