"""``slmbench run --instances N [--drawn-only]`` and ``instances`` in a TOML file (issue #39):
the flag and the key reach the plan; a bad value is one line naming the field, exit 2."""

from __future__ import annotations

from pathlib import Path

from clirun import CliRunner

from slmbench.agents.store import RunStore

RUN = ("run", "--model", "scripted:echo", "--task", "IR-1", "--temperature", "0",
       "--repeats", "1")


def _instances(out: Path) -> list[int]:
    with RunStore(out) as store:
        return sorted(k.instance for k in store.keys())


def test_the_instances_flag_runs_each_task_in_n_worlds(cli: CliRunner, tmp_path: Path) -> None:
    out = tmp_path / "run"
    got = cli(*RUN, "--instances", "3", "--out", str(out))
    assert got.code == 0, got.err
    assert "3 trials planned" in got.out
    assert _instances(out) == [0, 1, 2]
    with RunStore(out) as store:
        assert store.get_meta("experiment")["instances"] == 3
    drawn = tmp_path / "drawn"
    got = cli(*RUN, "--instances", "2", "--drawn-only", "--out", str(drawn))
    assert got.code == 0, got.err
    assert _instances(drawn) == [1, 2]


def test_the_instances_key_of_an_experiment_file_reaches_the_plan(cli: CliRunner,
                                                                  tmp_path: Path) -> None:
    exp = tmp_path / "exp.toml"
    exp.write_text(f'models = ["scripted:echo"]\ntasks = ["IR-1"]\ntemperatures = [0.0]\n'
                   f'repeats = 1\ninstances = 2\nout = "{tmp_path / "run"}"\n',
                   encoding="utf-8")
    got = cli("run", str(exp))
    assert got.code == 0, got.err
    assert _instances(tmp_path / "run") == [0, 1]


def test_a_bad_instances_value_is_one_line_naming_the_field(cli: CliRunner,
                                                            tmp_path: Path) -> None:
    got = cli(*RUN, "--instances", "0", "--out", str(tmp_path / "flag"))
    assert got.code == 2
    lines = got.err.splitlines()
    assert lines[0].startswith("error: ") and "instances" in lines[0]
    assert lines[1].startswith("what to do:") and "Traceback" not in got.err
    assert not (tmp_path / "flag").exists()
    exp = tmp_path / "exp.toml"
    exp.write_text('models = ["scripted:echo"]\ntasks = ["IR-1"]\ninstances = 0\n',
                   encoding="utf-8")
    got = cli("run", str(exp))
    assert got.code == 2
    first = got.err.splitlines()[0]
    assert str(exp) in first and "instances: Input should be greater than or equal to 1" in first
    study = tmp_path / "study.toml"
    study.write_text("name = 'x'\nout = 'o'\n[part_a]\nmodels = ['scripted:echo']\n"
                     "tasks = ['IR-1']\ninstances = 0\n", encoding="utf-8")
    got = cli("study", str(study), "--plan")
    assert got.code == 2 and "part_a.0.instances" in got.err.splitlines()[0]
    assert got.err.splitlines()[1].startswith("what to do:")
