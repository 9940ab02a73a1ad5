"""Helpers for CLI tests: run ``slmbench`` in-process and a throw-away model cache."""

from __future__ import annotations

from pathlib import Path

import pytest
from clirun import CliResult, CliRunner

from slmbench.cli.main import main


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh ``SLMBENCH_HOME``; wide terminal so tables are not wrapped."""
    monkeypatch.setenv("SLMBENCH_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("SLMBENCH_PIP_ARGS", raising=False)
    monkeypatch.setenv("COLUMNS", "220")
    return tmp_path / "home"


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str]) -> CliRunner:
    """Run ``slmbench ARGS...`` through the real entry point; return code and output."""

    def run(*argv: str) -> CliResult:
        capsys.readouterr()
        with pytest.raises(SystemExit) as exc:
            main(list(argv))
        captured = capsys.readouterr()
        code = exc.value.code if isinstance(exc.value.code, int) else 1
        return CliResult(code, captured.out, captured.err)

    return run
