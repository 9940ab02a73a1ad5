"""A study's exports: everything its stores hold as ``*.jsonl.gz`` (``--export``, and beside
its page), the form its records travel in (read back by :mod:`slmbench.study.carry`)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from slmbench.agents.humaneval import results
from slmbench.agents.loading import load_trials
from slmbench.agents.records import Trial
from slmbench.agents.store import DB_NAME, RunStore, export_trials
from slmbench.core import jsonl
from slmbench.core.errors import ConfigError
from slmbench.study.spec import (
    HUMANEVAL_EXPORT,
    READINGS_EXPORT,
    TRIALS_EXPORT,
    Study,
)


class ImportSummary(BaseModel):
    """What :func:`import_exports`, :func:`merge_stores` or :func:`export_study` wrote:
    records per store (or export) file."""

    model_config = ConfigDict(frozen=True)

    stores: dict[str, int]


def stored_trials(study: Study) -> list[Trial]:
    """Every trial stored in the study's Part A blocks, block by block."""
    return [t for block in range(len(study.part_a))
            if (study.part_a_dir(block) / DB_NAME).is_file()
            for t in load_trials(study.part_a_dir(block))]


def export_humaneval(run_dirs: Sequence[Path], path: Path) -> int:
    """Every stored HumanEval problem result (reply, sanitised code, verdict), one per line,
    with its model and the name of its run directory (``run``), where an import puts it;
    how many."""
    rows = []
    for run_dir in run_dirs:
        with RunStore(run_dir) as store:
            rows += [json.dumps({"model": m, "run": run_dir.name, **r.model_dump(mode="json")},
                                sort_keys=True)
                     for m in store.models() for r in results(store, m)]
    jsonl.write_jsonl_gz(path, rows)
    return len(rows)


def export_study(study: Study, dest: Path) -> ImportSummary:
    """Write every record the study's stores hold, as the exports beside a page do
    (``trials.jsonl.gz``, ``readings.jsonl.gz``, ``humaneval.jsonl.gz``), into ``dest``: the
    form a study's progress travels in, to another machine or into a commit, and is read back
    by :func:`~slmbench.study.carry.merge_stores`. Loads no model and writes no page.
    ConfigError if nothing is stored. Returns the records written per export file."""
    trials = stored_trials(study)
    readings = 0
    if study.readings_path.is_file():
        with study.readings() as store:
            readings = store.count()
    humaneval = [d for d in study.humaneval if (d / DB_NAME).is_file()]
    if not trials and not readings and not humaneval:
        raise ConfigError(f"study {study.name!r} has nothing stored under {study.out}",
                          "run the study (or merge its stores) before exporting it")
    written: dict[str, int] = {}
    if trials:
        written[str(dest / TRIALS_EXPORT)] = export_trials(trials, dest / TRIALS_EXPORT)
    if readings:
        with study.readings() as store:
            written[str(dest / READINGS_EXPORT)] = store.export(dest / READINGS_EXPORT)
    if humaneval:
        written[str(dest / HUMANEVAL_EXPORT)] = export_humaneval(humaneval,
                                                                 dest / HUMANEVAL_EXPORT)
    return ImportSummary(stores=written)
