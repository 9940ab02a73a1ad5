"""Real ``slmbench run`` and ``slmbench study`` processes SIGKILLed 20 times at random moments,
then resumed: every planned trial stored exactly once, none lost, none doubled (issue #21)."""

from __future__ import annotations

import json
import sqlite3
import subprocess
from pathlib import Path

import pytest

import killsoak
from killsoak import slmbench
from slmbench.agents.runner.config import build_experiment
from slmbench.agents.runner.plan import build_plan, default_suite_loader, default_variants
from slmbench.agents.store import RunStore

pytestmark = pytest.mark.slow

MODEL = "scripted:echo?delay=0.02"
GRID = {"models": [MODEL], "suites": ["capability"], "temperatures": [0.3, 0.7], "repeats": 2}
ARGS = ["--model", MODEL, "--suite", "capability", "--temperature", "0.3,0.7", "--repeats", "2"]


def soak(argv: list[str], db: Path, planned: int) -> subprocess.CompletedProcess[str]:
    return killsoak.soak(argv, db, "trials", planned)


def assert_exactly(run_dir: Path, planned: set) -> None:  # type: ignore[type-arg]
    with sqlite3.connect(run_dir / "run.sqlite") as conn:
        rows = conn.execute("SELECT model, task, variant, temperature, seed, repeat, record"
                            " FROM trials").fetchall()
    keys = {r[:6] for r in rows}
    assert len(rows) == len(keys) == len(planned)  # none duplicated, none missing
    with RunStore(run_dir) as store:
        assert store.keys() == planned
    for row in rows:  # each stored record is the trial of its key
        record = json.loads(row[6])
        assert (record["task_id"], record["variant"], record["seed"], record["repeat"]) == \
            (row[1], row[2], row[4], row[5])
    assert sum(1 for _ in (run_dir / "trials.jsonl").open()) == len(planned)


def planned_keys() -> set:  # type: ignore[type-arg]
    return build_plan(build_experiment(GRID), load_suite=default_suite_loader(),
                      variants=default_variants()).keys()


def test_a_run_killed_20_times_resumes_to_exactly_the_planned_grid(tmp_path: Path) -> None:
    out, planned = tmp_path / "run", planned_keys()
    done = soak(slmbench("run", *ARGS, "--out", str(out)), out / "run.sqlite", len(planned))
    assert f"complete: {len(planned)}/{len(planned)} trials stored" in done.stdout
    assert_exactly(out, planned)
    with RunStore(out) as store:
        assert len(store.get_meta("sessions")) == 1  # killed sessions never reached their end
    report = json.loads((out / "reports" / "scripted_echo_delay_0.02.json").read_text())
    assert report["stored"] == report["planned"] == len(planned)


def test_a_study_killed_20_times_resumes_to_exactly_the_planned_grid(tmp_path: Path) -> None:
    study = tmp_path / "study.toml"
    study.write_text(f"""name = "soak"
out = "{tmp_path / 'study'}"
page = "{tmp_path / 'page.md'}"

[[part_a]]
models = ["{MODEL}"]
suites = ["capability"]
temperatures = [0.3, 0.7]
repeats = 2
""", encoding="utf-8")
    run_dir, planned = tmp_path / "study" / "part-a" / "1", planned_keys()
    soak(slmbench("study", str(study)), run_dir / "run.sqlite", len(planned))
    assert_exactly(run_dir, planned)
    assert (tmp_path / "page.md").is_file()
