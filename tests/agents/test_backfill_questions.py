"""scripts/backfill_questions.py: an export's trials get the question the code that made them
asked, only where their harness fingerprint proves which code that was."""

from __future__ import annotations

import gzip
import importlib.util
import json
from pathlib import Path
from types import ModuleType

import pytest

from slmbench.agents.evaluator import run_trial
from slmbench.agents.records import Trial
from slmbench.agents.store import StoredTrial
from slmbench.agents.tasks import load_tasks
from slmbench.agents.tasks.families import instance
from slmbench.agents.tasks.reference import reference_agent
from slmbench.core.errors import ConfigError
from slmbench.core.jsonl import write_jsonl_gz

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "backfill_questions.py"
TASKS = load_tasks()


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("backfill_questions", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _old(trial: Trial) -> str:
    """``trial`` as a schema 3 export line (no question), as pydantic wrote it."""
    return trial.model_copy(update={"schema_version": 3}).model_dump_json(exclude={"question"})


def _lines(path: Path) -> list[str]:
    return gzip.decompress(path.read_bytes()).decode().splitlines()


def test_an_export_made_here_gets_its_questions_and_keeps_every_other_byte(tmp_path) -> None:
    backfill = _script()
    inst = instance(TASKS["DA-1"], 2)
    trial = run_trial(reference_agent(inst), inst, instance=2, family=TASKS["DA-1"])
    stored = StoredTrial(key=trial.key, outcome="success", record=json.loads(_old(trial)),
                         created_at=1.0).model_dump_json()
    dump = tmp_path / "trials.jsonl.gz"
    write_jsonl_gz(dump, [_old(trial), stored])
    assert backfill.main(["--check", str(dump)]) == 1
    assert backfill.backfill(dump, TASKS, []) == (2, 2)
    assert backfill.main(["--check", str(dump)]) == 0
    first, second = _lines(dump)
    assert first.startswith(_old(trial)[:-1])  # the question appended, the rest as it was
    filled = Trial.model_validate_json(first)
    assert filled.question == trial.question and filled.schema_version == 3
    assert StoredTrial.model_validate_json(second).record["question"] == \
        json.loads(first)["question"]
    before = dump.read_bytes()
    assert backfill.backfill(dump, TASKS, []) == (2, 0) and dump.read_bytes() == before


def test_a_trial_no_source_reproduces_stops_it_before_anything_is_written(tmp_path) -> None:
    backfill = _script()
    task = TASKS["IR-1"]
    trial = run_trial(reference_agent(task), task)
    foreign = trial.model_copy(update={"harness": "0123456789abcdef"})
    dump = tmp_path / "trials.jsonl.gz"
    write_jsonl_gz(dump, [_old(trial), _old(foreign)])
    before = dump.read_bytes()
    with pytest.raises(ConfigError, match=r"line 2: .* IR-1 .*harness 0123456789abcdef"):
        backfill.backfill(dump, TASKS, [])
    assert dump.read_bytes() == before
