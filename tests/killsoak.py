"""SIGKILL a real ``slmbench`` process at random moments (the soak tests of issue #21).

Each killed session is a process running the CLI's entry point, forked from a server that
imported the CLI once (``forked_cli``), so twenty kills do not cost twenty imports; the
finishing run of a soak is launched from scratch (``python -m slmbench.cli.main``).
"""

from __future__ import annotations

import random
import signal
import sqlite3
import subprocess
import tempfile
import time
from pathlib import Path

import forked_cli
from forked_cli import CLI

KILLS = 20


def slmbench(*args: str) -> list[str]:
    return [*CLI, *args]


def stored(db: Path, table: str) -> int:
    """Rows in ``table`` of the SQLite file ``db`` (0 before it or its schema exists)."""
    if not db.exists():
        return 0
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5) as conn:
            return conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]
    except sqlite3.OperationalError:  # the schema is not created yet
        return 0


def run_until_killed(argv: list[str], db: Path, table: str, rng: random.Random,
                     at_least: int, env: dict[str, str] | None = None) -> int:
    """Start ``argv`` (an :func:`slmbench` command line), let it store ``at_least`` more
    rows, SIGKILL it a random moment later."""
    assert tuple(argv[:len(CLI)]) == CLI, argv
    before = stored(db, table)
    with tempfile.NamedTemporaryFile("r", encoding="utf-8") as err:
        proc = forked_cli.start(argv[len(CLI):], env=env, stderr=err.name)
        try:
            for _ in range(1200):  # bounded: at most ~120 s
                if stored(db, table) >= before + at_least or proc.exitcode is not None:
                    break
                time.sleep(0.05)
            time.sleep(rng.uniform(0.0, 0.05))  # land anywhere inside a trial or reading
            proc.kill()
        finally:
            proc.join(timeout=60)
        assert proc.exitcode == -signal.SIGKILL, err.read()
    return stored(db, table)


def soak(argv: list[str], db: Path, table: str, planned: int,
         env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """SIGKILL ``argv`` KILLS times mid-run, then let it finish; returns the finishing run."""
    rng = random.Random(20260)
    counts = [run_until_killed(argv, db, table, rng, at_least=rng.randint(1, 6), env=env)
              for _ in range(KILLS)]
    assert counts == sorted(counts) and counts[-1] < planned  # every kill was mid-run
    done = subprocess.run(argv, capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr
    return done
