"""A real ``slmbench run`` SIGKILLed at random moments, then resumed: no trial lost or doubled."""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from slmbench.agents.runner.config import build_experiment
from slmbench.agents.runner.executor import _default_suite_loader, _default_variants
from slmbench.agents.runner.plan import build_plan
from slmbench.agents.store import RunStore

MODEL = "scripted:echo?delay=0.02"
ARGS = ["--model", MODEL, "--suite", "capability", "--temperature", "0.3,0.7", "--repeats", "2"]
KILLS = 4


def slmbench(*args: str) -> list[str]:
    return [sys.executable, "-m", "slmbench.cli.main", *args]


def stored(db: Path) -> int:
    if not db.exists():
        return 0
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5) as conn:
            return conn.execute("SELECT COUNT(*) FROM trials").fetchone()[0]
    except sqlite3.OperationalError:  # the schema is not created yet
        return 0


def run_until_killed(out: Path, rng: random.Random, at_least: int) -> int:
    """Start a run, let it store ``at_least`` more trials, SIGKILL it a random moment later."""
    db = out / "run.sqlite"
    before = stored(db)
    proc = subprocess.Popen(slmbench("run", *ARGS, "--out", str(out)), stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, start_new_session=True)
    try:
        for _ in range(1200):  # bounded: at most ~120 s
            if stored(db) >= before + at_least or proc.poll() is not None:
                break
            time.sleep(0.1)
        time.sleep(rng.uniform(0.0, 0.05))  # land anywhere inside a trial
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(timeout=60)
    assert proc.returncode == -signal.SIGKILL, proc.stderr.read() if proc.stderr else ""
    return stored(db)


def test_sigkilled_run_resumes_to_exactly_the_planned_grid(tmp_path: Path) -> None:
    out = tmp_path / "run"
    exp = build_experiment({"models": [MODEL], "suites": ["capability"],
                            "temperatures": [0.3, 0.7], "repeats": 2})
    planned = build_plan(exp, load_suite=_default_suite_loader(),
                         variants=_default_variants()).keys()
    rng = random.Random(20260)
    counts = [run_until_killed(out, rng, at_least=rng.randint(3, 15)) for _ in range(KILLS)]
    assert counts == sorted(counts) and counts[-1] < len(planned)  # every kill was mid-run

    done = subprocess.run(slmbench("run", *ARGS, "--out", str(out)), capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert f"complete: {len(planned)}/{len(planned)} trials stored" in done.stdout

    with sqlite3.connect(out / "run.sqlite") as conn:
        rows = conn.execute("SELECT model, task, variant, temperature, seed, repeat, record"
                            " FROM trials").fetchall()
    keys = {r[:6] for r in rows}
    assert len(rows) == len(keys) == len(planned)  # none duplicated, none missing
    with RunStore(out) as store:
        assert store.keys() == planned
        assert len(store.get_meta("sessions")) == 1  # killed sessions never reached their end
    for row in rows:  # each stored record is the trial of its key
        record = json.loads(row[6])
        assert (record["task_id"], record["variant"], record["seed"], record["repeat"]) == \
            (row[1], row[2], row[4], row[5])
    assert sum(1 for _ in (out / "trials.jsonl").open()) == len(planned)
    report = json.loads((out / "reports" / "scripted_echo_delay_0.02.json").read_text())
    assert report["stored"] == report["planned"] == len(planned)
