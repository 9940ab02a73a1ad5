"""``slmbench run`` / ``slmbench resume`` from the command line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from slmbench.agents.store import RunStore
from slmbench.cli.main import app
from slmbench.core.errors import ConfigError

RUN = ["run", "--model", "scripted:echo", "--task", "IR-1", "--task", "SF-2",
       "--temperature", "0,0.7", "--repeats", "2"]


def test_run_then_resume_and_rerun_run_nothing_more(tmp_path: Path) -> None:
    out = tmp_path / "run"
    first = CliRunner().invoke(app, [*RUN, "--out", str(out)])
    assert first.exit_code == 0, first.output
    assert "run: 8 trials planned, 0 already stored, 8 to run" in first.output
    assert "complete: 8/8 trials stored (8 run now" in first.output
    for line in ("trials", "success", "backend errors", "retries", "trials/min", "tokens/s"):
        assert line in first.output  # the summary table's columns
    resumed = CliRunner().invoke(app, ["resume", str(out)])
    assert resumed.exit_code == 0, resumed.output
    assert "complete: 8/8 trials stored (0 run now" in resumed.output
    again = CliRunner().invoke(app, [*RUN, "--out", str(out)])
    assert "run: 8 trials planned, 8 already stored, 0 to run" in again.output
    with RunStore(out) as store:
        saved = store.get_meta("experiment")
    assert saved["tasks"] == ["IR-1", "SF-2"] and saved["temperatures"] == [0.0, 0.7]
    assert json.loads((out / "reports" / "scripted_echo.json").read_text())["stored"] == 8


def test_experiment_file_with_flag_overrides(tmp_path: Path) -> None:
    exp = tmp_path / "exp.toml"
    exp.write_text(f'models = ["scripted:silent"]\ntasks = ["IR-1"]\ntemperatures = [0.0]\n'
                   f'repeats = 3\nout = "{tmp_path / "run"}"\n', encoding="utf-8")
    result = CliRunner().invoke(app, ["run", str(exp), "--repeats", "1"])
    assert result.exit_code == 0, result.output
    assert "complete: 1/1 trials stored" in result.output


def test_user_errors_are_one_line_plus_a_hint(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["resume", str(tmp_path)])
    assert isinstance(result.exception, ConfigError)
    assert "is not a run directory" in str(result.exception)
    result = CliRunner().invoke(app, ["run", "--suite", "capability"])
    assert isinstance(result.exception, ConfigError)
    assert str(result.exception) == "no model to run"
    proc = subprocess.run([sys.executable, "-m", "slmbench.cli.main", "run", "-m",
                           "scripted:echo", "--task", "ZZ-9", "--out", str(tmp_path / "x")],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert proc.stderr.splitlines()[0].startswith("error: no task 'ZZ-9' in suite(s) capability")
    assert proc.stderr.splitlines()[1].startswith("what to do:")
    assert "Traceback" not in proc.stderr
