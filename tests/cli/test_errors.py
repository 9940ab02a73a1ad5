"""Errors a user sees: one line and a hint, exit 2, with their own text printed as written."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import yaml
from clirun import CliRunner


def test_square_brackets_in_a_file_name_survive_the_error_line(
        cli: CliRunner, home: Path, tmp_path: Path) -> None:
    bad = tmp_path / "tasks[v2].yaml"
    bad.write_text("tasks: [", encoding="utf-8")
    result = cli("tasks", "validate", str(bad))
    assert result.code == 2
    assert "tasks[v2].yaml" in result.err


def test_a_hint_naming_an_extra_keeps_its_brackets(
        cli: CliRunner, home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # as if the hf extra were not installed: the hint is `pip install 'slmbench[hf]'`
    monkeypatch.setitem(sys.modules, "slmbench.models.hf", None)
    result = cli("run", "-m", "hf:/no/such/model", "-s", "capability", "--out",
                 str(tmp_path / "run"))
    assert result.code == 2
    assert "pip install 'slmbench[hf]'" in result.err


def test_the_cli_says_it_in_one_line_and_exits_2(cli: CliRunner, home: Path,
                                                 tmp_path: Path) -> None:
    task = {"id": "XX-1", "group": "data_analysis", "instruction": "How many products?",
            "tools": ["calculator"], "difficulty": 1, "scorer": {"kind": "numeric", "value": 10},
            "reference": {"answer": "There are 10 products."}}
    path = tmp_path / "mine.yaml"
    path.write_text(yaml.safe_dump({"suite": "capability", "tasks": [task]}), encoding="utf-8")
    out = tmp_path / "run"
    for argv in (("tasks", "validate", str(path)), ("tasks", "list", "--file", str(path)),
                 ("run", "-s", str(path), "-m", "scripted:echo", "--out", str(out))):
        result = cli(*argv)
        assert result.code == 2, argv
        assert "unknown tool 'calculator'" in result.err and "parse and validate" not in result.out
        assert f"{path}: task XX-1: field tools.0" in result.err
    assert not out.exists()  # `run -s` wrote nothing


def test_a_native_crash_inside_a_command_says_where_instead_of_nothing(tmp_path: Path) -> None:
    """A backend's native kernel that dies (this machine's AMX matmul did, silently, in the
    middle of a study) leaves the signal and the Python stack on stderr."""
    import subprocess

    crash = ("import ctypes\n"
             "from slmbench.cli import main as m\n"
             "@m.app.command('crash')\n"
             "def crash() -> None:\n"
             "    ctypes.string_at(0)  # reads address 0: SIGSEGV in native code\n"
             "m.main(['crash'])\n")
    done = subprocess.run([sys.executable, "-c", crash], capture_output=True, text=True,
                          timeout=120, cwd=tmp_path)
    assert done.returncode != 0
    assert "Segmentation fault" in done.stderr and "in crash" in done.stderr
