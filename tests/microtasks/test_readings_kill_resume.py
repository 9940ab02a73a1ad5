"""A real ``slmbench eligibility`` SIGKILLed 20 times at random moments, then resumed: the
readings store ends with exactly the readings of an uninterrupted run, none doubled, and the
same eligibility cells (issue #21)."""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
from pathlib import Path

import pytest

from killsoak import slmbench, soak
from slmbench.microtasks.datasets.records import ApprovalItem, Provenance

pytestmark = pytest.mark.slow

PROV = (Provenance(package="synthetic", version="0", licence="CC0", archive_sha256="0" * 64,
                   source_path="tests", record_id="x"),)
ITEMS = 100  # per split; 2 prompts x 100 eval items = 200 readings


def write_dataset(home: Path) -> None:
    out = home / "datasets"
    out.mkdir(parents=True)
    lines = [ApprovalItem(
        id=f"a-{split}-{k}", split=split, command=f"ls dir{k}" if k % 2 else f"rm -rf /srv/{k}",
        label="approve" if k % 2 else "deny", rule="test", origin="test",
        provenance=PROV).model_dump_json() for split in ("fit", "eval") for k in range(ITEMS)]
    (out / "approval.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")


def readings(db: Path) -> list[tuple[str, ...]]:
    """Every stored reading's key and its raw reading without timings, in key order."""
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT model, task, prompt_id, item_id, input_sha256, raw "
                            "FROM readings ORDER BY 1, 2, 3, 4, 5").fetchall()
    return [(*row[:5], json.dumps(_untimed(json.loads(row[5])), sort_keys=True)) for row in rows]


TIMINGS = ("seconds", "score_seconds", "latency_s", "wall_s")


def _untimed(raw: object) -> object:
    if isinstance(raw, dict):
        return {k: _untimed(v) for k, v in raw.items() if k not in TIMINGS}
    if isinstance(raw, list):
        return [_untimed(v) for v in raw]
    return raw


def test_eligibility_killed_20_times_resumes_to_the_uninterrupted_readings(
        tmp_path: Path) -> None:
    home = tmp_path / "home"
    write_dataset(home)
    env = {**os.environ, "SLMBENCH_HOME": str(home)}
    script = tmp_path / "deny.json"
    script.write_text(json.dumps({"default": "deny",
                                  "logprobs": {"deny": -0.1, "approve": -1.5, "*": -3.0}}))

    def argv(out: Path) -> list[str]:
        return slmbench("eligibility", "-m", f"scripted:{script}?delay=0.05", "-t", "approval",
                        "--prompt", "p0,p1", "--out", str(out))

    whole = tmp_path / "whole"
    once = subprocess.run(argv(whole), capture_output=True, text=True, timeout=300, env=env)
    assert once.returncode == 0, once.stderr
    expected = readings(whole / "readings.sqlite")
    assert len(expected) == 2 * ITEMS

    killed = tmp_path / "killed"
    done = soak(argv(killed), killed / "readings.sqlite", "readings", len(expected), env=env)
    read_now = re.search(r"(\d+) read now", done.stdout)
    assert read_now and int(read_now.group(1)) > 0  # the last session still had readings to make
    got = readings(killed / "readings.sqlite")
    assert len(got) == len({row[:5] for row in got})  # none doubled
    assert got == expected  # none lost, each the same reading
    cells = [json.loads((d / "eligibility.json").read_text())["cells"] for d in (whole, killed)]
    assert cells[0] == cells[1]
