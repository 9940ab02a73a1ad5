"""A full disk, a read-only run folder, a file where a folder should be, a store that is not
ours: one line and a hint, exit 2, and the store stays readable and resumable (issue #21)."""

from __future__ import annotations

import hashlib
import sqlite3
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

import forked_cli
from slmbench.agents.runner.config import build_experiment
from slmbench.agents.runner.plan import build_plan, default_suite_loader, default_variants
from slmbench.agents.store import RunStore

pytestmark = pytest.mark.slow

MODEL = "scripted:echo"
TASKS = ["IR-1", "IR-2", "IR-3", "SC-1", "SC-2", "DA-1", "DA-2", "CM-1", "MR-1", "DM-1"]
ARGS = ["--model", MODEL, "--suite", "capability", *(a for t in TASKS for a in ("--task", t))]


def slmbench(*args: str, fsize: int | None = None) -> subprocess.CompletedProcess[str]:
    """``slmbench ARGS`` in a process of its own (forked: no import each time; see
    tests/forked_cli.py), on a "disk" holding only ``fsize`` bytes per file if given."""
    return forked_cli.run(list(args), fsize=fsize, timeout=300)


def one_line_error(done: subprocess.CompletedProcess[str], says: str) -> None:
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert lines[0].startswith("error:") and says in lines[0], done.stderr
    assert lines[1].startswith("what to do:")


def planned() -> int:
    exp = build_experiment({"models": [MODEL], "suites": ["capability"], "tasks": TASKS})
    return len(build_plan(exp, load_suite=default_suite_loader(),
                          variants=default_variants()).keys())


def test_a_full_disk_stops_the_run_in_one_line_and_the_run_resumes(tmp_path: Path) -> None:
    out = tmp_path / "run"
    full = slmbench("run", *ARGS, "--out", str(out), fsize=200_000)
    one_line_error(full, "cannot write to")
    assert "resumes" in full.stderr
    with RunStore(out) as store:  # what was stored before the disk filled is intact
        kept = store.count()
    assert 0 < kept < planned()
    done = slmbench("run", *ARGS, "--out", str(out))
    assert done.returncode == 0, done.stderr
    with RunStore(out) as store:
        assert store.count() == planned()


@pytest.fixture
def immutable(tmp_path: Path) -> Iterator[list[Path]]:
    """Paths made immutable with chattr +i (root ignores permission bits), undone afterwards."""
    paths: list[Path] = []
    yield paths
    for p in paths:
        subprocess.run(["chattr", "-i", str(p)], check=False)


def test_a_read_only_run_folder_is_one_line_and_the_store_reads_once_writable(
        tmp_path: Path, immutable: list[Path]) -> None:
    out = tmp_path / "run"
    first = slmbench("run", *ARGS, "--out", str(out))
    assert first.returncode == 0, first.stderr
    for p in (out / "run.sqlite", out):
        subprocess.run(["chattr", "+i", str(p)], check=True)
        immutable.append(p)
    before = hashlib.sha256((out / "run.sqlite").read_bytes()).hexdigest()
    one_line_error(slmbench("run", *ARGS, "--out", str(out)), str(out))
    assert hashlib.sha256((out / "run.sqlite").read_bytes()).hexdigest() == before
    for p in immutable:
        subprocess.run(["chattr", "-i", str(p)], check=True)
    done = slmbench("run", *ARGS, "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert f"complete: {planned()}/{planned()} trials stored" in done.stdout


def test_an_out_that_is_a_file_is_one_line(tmp_path: Path) -> None:
    afile = tmp_path / "results"
    afile.write_text("not a folder", encoding="utf-8")
    one_line_error(slmbench("run", *ARGS, "--out", str(afile)), "is a file")
    assert afile.read_text(encoding="utf-8") == "not a folder"


@pytest.mark.parametrize("kind", ["truncated", "foreign", "garbage"])
def test_a_corrupt_or_foreign_store_is_refused_and_never_modified(tmp_path: Path,
                                                                 kind: str) -> None:
    out = tmp_path / "run"
    if kind == "truncated":
        assert slmbench("run", *ARGS, "--out", str(out)).returncode == 0
        data = (out / "run.sqlite").read_bytes()
        for side in out.glob("run.sqlite-*"):
            side.unlink()
        (out / "run.sqlite").write_bytes(data[: len(data) // 3])
    else:
        out.mkdir()
        if kind == "foreign":
            with sqlite3.connect(out / "run.sqlite") as conn:
                conn.execute("CREATE TABLE invoices (id INTEGER PRIMARY KEY, total REAL)")
        else:
            (out / "run.sqlite").write_bytes(b"this is not a database\n" * 100)
    before = (out / "run.sqlite").read_bytes()
    done = slmbench("run", *ARGS, "--out", str(out))
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.startswith("error:") and "run.sqlite" in done.stderr
    assert (out / "run.sqlite").read_bytes() == before
