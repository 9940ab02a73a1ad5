"""A readings store that is truncated, another app's SQLite or not SQLite at all is refused by
``slmbench eligibility`` in one line naming it, exit 2, and its bytes are left as they were
(the Part B twin of tests/agents/runner/test_disk_faults.py's run-store case)."""

from __future__ import annotations

import shutil
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from clirun import CliRunner

EXAMPLE = Path(__file__).parents[2] / "examples" / "my-tools.yaml"


@pytest.fixture
def task_file(tmp_path: Path) -> Iterator[Path]:
    for name in ("my-tools.yaml", "my-tools.jsonl"):
        shutil.copy(EXAMPLE.parent / name, tmp_path / name)
    yield tmp_path / "my-tools.yaml"
    from slmbench.microtasks import tasks as registry

    registry.unregister("my-tools")


@pytest.mark.parametrize("kind", ["truncated", "foreign", "garbage"])
def test_a_corrupt_or_foreign_readings_store_is_refused_and_never_modified(
        cli: CliRunner, home: Path, tmp_path: Path, task_file: Path, kind: str) -> None:
    store = tmp_path / "readings.sqlite"
    argv = ("eligibility", "-m", "scripted:echo", "--task-file", str(task_file),
            "--store", str(store), "--out", str(tmp_path / "out"))
    if kind == "truncated":
        first = cli(*argv)
        assert first.code == 0, first.out + first.err
        data = store.read_bytes()
        for side in tmp_path.glob("readings.sqlite-*"):
            side.unlink()
        store.write_bytes(data[: len(data) // 3])
    elif kind == "foreign":
        with sqlite3.connect(store) as conn:
            conn.execute("CREATE TABLE invoices (id INTEGER PRIMARY KEY, total REAL)")
    else:
        store.write_bytes(b"this is not a database\n" * 100)
    before = store.read_bytes()
    result = cli(*argv)
    assert result.code == 2, result.out + result.err
    lines = result.err.strip().splitlines()
    assert len(lines) == 2 and lines[0].startswith("error: ") and str(store) in lines[0]
    assert lines[1].startswith("what to do: ")
    assert "Traceback" not in result.out + result.err
    assert store.read_bytes() == before
