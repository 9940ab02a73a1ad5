"""How a study's records travel: the exports beside its page and ``--export`` (stores to
``*.jsonl.gz``), ``import`` (exports to new stores, for a fresh clone) and ``--merge`` (another
machine's stores or exports into this one's, refusing a key stored with other content).

This module only routes: which trial goes to which Part A block, which HumanEval result to
which directory. Reading, comparing and writing records is the stores' own
(:mod:`slmbench.agents.store`, :mod:`slmbench.microtasks.store`,
:mod:`slmbench.agents.runner.merge`)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from slmbench.agents import store as run_store
from slmbench.agents.humaneval import VARIANT, ProblemResult
from slmbench.agents.records import Trial, TrialKey
from slmbench.agents.runner.merge import check_one_harness, put_trials
from slmbench.agents.runner.plan import plan_of
from slmbench.agents.store import DB_NAME, RunStore, StoredTrial
from slmbench.core import jsonl
from slmbench.core.errors import ConfigError
from slmbench.microtasks import store as reading_store
from slmbench.microtasks.store import ReadingStore, StoredReading
from slmbench.study.export import ImportSummary
from slmbench.study.spec import (
    HUMANEVAL_EXPORT,
    READINGS_EXPORT,
    READINGS_NAME,
    TRIALS_EXPORT,
    Study,
    part_a_experiment,
)

IMPORT_HINT = "pass the folder beside a study page, e.g. docs/results/reference-study"
_MERGE_HINT = ("each --merge folder is a study's `out` made from this study file on another "
               "machine (part-a/<n>/run.sqlite, part-b/readings.sqlite, "
               "humaneval/<name>/run.sqlite), or a folder of its exports (trials.jsonl.gz, "
               "readings.jsonl.gz, humaneval.jsonl.gz) from `slmbench study FILE --export DIR` "
               "or beside its page")
_STUDY_HINT = "pass the study file the page was made from"


def _route_trials(study: Study, trials: Sequence[Trial], path: Path) -> dict[Path, list[Trial]]:
    """Each trial into the Part A block whose grid plans its key (the only block, if one)."""
    if not study.part_a:
        raise ConfigError(f"{path} holds Part A trials but study {study.name!r} has no "
                          "[part_a]", _STUDY_HINT)
    plans = [{p.key for p in plan_of(part_a_experiment(study, b)).trials}
             for b in range(len(study.part_a))]
    out: dict[Path, list[Trial]] = {study.part_a_dir(b): [] for b in range(len(study.part_a))}
    for t in trials:
        block = next((b for b, keys in enumerate(plans) if t.key in keys),
                     0 if len(plans) == 1 else None)
        if block is None:
            raise ConfigError(f"{path}: {run_store.trial_name(t.key)} is in no Part A block of "
                              f"{study.name!r}", _STUDY_HINT)
        out[study.part_a_dir(block)].append(t)
    return {d: ts for d, ts in out.items() if ts}


def _route_humaneval(study: Study, path: Path) -> list[tuple[Path, StoredTrial]]:
    """The HumanEval export ``path`` into the study's HumanEval directories: each row into the
    directory its ``run`` names; rows without one (exports written before rows named their
    directory) by model, in the order the export lists them, one a directory, or all into the
    only one."""
    rows = jsonl.read_jsonl_gz(path, IMPORT_HINT)
    found = jsonl.validated(ProblemResult, path, [{k: v for k, v in r.items()
                                                   if k not in ("model", "run")} for r in rows],
                            IMPORT_HINT)
    dirs = study.humaneval
    named = {d.name: d for d in dirs}
    if all("run" in r for r in rows):
        if unknown := sorted({str(r["run"]) for r in rows} - named.keys()):
            raise ConfigError(f"{path} holds HumanEval results of {unknown[0]!r}, which is no "
                              f"`humaneval` directory of study {study.name!r}",
                              "pass the study file the export was made from")
        where = [named[str(r["run"])] for r in rows]
    else:
        models = list(dict.fromkeys(str(r.get("model")) for r in rows))
        if len(dirs) != 1 and len(dirs) != len(models):
            raise ConfigError(f"{path} holds {len(models)} HumanEval model(s); study "
                              f"{study.name!r} lists {len(dirs)} HumanEval director(ies)",
                              "list one `humaneval` directory per model, or one for them all")
        by_model = {m: dirs[0] if len(dirs) == 1 else dirs[i] for i, m in enumerate(models)}
        where = [by_model[str(r.get("model"))] for r in rows]
    return [(target, StoredTrial(key=TrialKey(model=str(row["model"]), task=r.task_id,
                                              variant=VARIANT),
                                 outcome="pass" if r.passed else "fail",
                                 record=json.loads(r.model_dump_json()), created_at=0.0))
            for row, r, target in zip(rows, found, where, strict=True)]


def _exports_in(folder: Path) -> dict[str, Path]:
    """The export files ``folder`` holds, by name (none: it is a study ``out``)."""
    return {n: folder / n for n in (TRIALS_EXPORT, READINGS_EXPORT, HUMANEVAL_EXPORT)
            if (folder / n).is_file()}


def _folder_trials(folder: Path) -> list[Trial]:
    """Every trial of ``folder``: its ``trials.jsonl.gz`` if it is an exports folder, else every
    store under ``folder/part-a/*/``."""
    if exports := _exports_in(folder):
        dump = exports.get(TRIALS_EXPORT)
        return [] if dump is None else run_store.read_trials(dump, IMPORT_HINT)
    out: list[Trial] = []
    for db in sorted((folder / "part-a").glob(f"*/{DB_NAME}")):
        with RunStore(db.parent) as store:
            out += jsonl.validated(Trial, db, [t.record for t in store.trials()], IMPORT_HINT)
    return out


def _folder_readings(folder: Path) -> list[StoredReading]:
    """Every reading of ``folder``: its ``readings.jsonl.gz``, or ``part-b/readings.sqlite``."""
    if exports := _exports_in(folder):
        dump = exports.get(READINGS_EXPORT)
        return [] if dump is None else reading_store.read_export(dump, IMPORT_HINT)
    path = folder / "part-b" / READINGS_NAME
    if not path.is_file():
        return []
    with ReadingStore(path) as store:
        return store.carried()


def _folder_humaneval(study: Study, folder: Path) -> dict[Path, list[StoredTrial]]:
    """Every HumanEval result of ``folder``, by this study's HumanEval directory: from its
    ``humaneval.jsonl.gz``, or from ``folder/humaneval/<name>`` (the layout of ``--out``) for
    each directory of the same name."""
    out: dict[Path, list[StoredTrial]] = {}
    if exports := _exports_in(folder):
        dump = exports.get(HUMANEVAL_EXPORT)
        for target, t in [] if dump is None else _route_humaneval(study, dump):
            out.setdefault(target, []).append(t)
        return out
    for target in study.humaneval:
        if (folder / "humaneval" / target.name / DB_NAME).is_file():
            with RunStore(folder / "humaneval" / target.name) as store:
                out[target] = list(store.trials())
    return out


def _record_json(record: dict[str, object]) -> str:
    return json.dumps(record, sort_keys=True)


def _humaneval_name(key: TrialKey) -> str:
    return f"HumanEval {key.model} {key.task}"


@dataclass(frozen=True)
class _New:
    """The records to write, by target store."""

    trials: dict[Path, list[Trial]]
    readings: list[StoredReading]
    humaneval: dict[Path, list[StoredTrial]]

    def stores(self, study: Study) -> list[Path]:
        return [d / DB_NAME for d in [*self.trials, *self.humaneval]] + (
            [study.part_b_dir / READINGS_NAME] if self.readings else [])


def _gather(study: Study, folders: Sequence[Path], *, into_new: bool = False) -> _New:
    """What ``folders`` hold that this study's stores do not; ConfigError (nothing written) on
    a malformed folder or a key stored with different content, and (``into_new``) when a
    target store exists."""
    trials: dict[Path, list[tuple[Path, list[Trial]]]] = {}
    humaneval: dict[Path, list[tuple[Path, list[StoredTrial]]]] = {}
    for folder in folders:
        if others := _folder_trials(folder):
            for target, ts in _route_trials(study, others, folder).items():
                trials.setdefault(target, []).append((folder, ts))
        for target, results_ in _folder_humaneval(study, folder).items():
            humaneval.setdefault(target, []).append((folder, results_))
    readings = [(f, _folder_readings(f)) for f in folders]
    every = _New({d: [] for d in trials}, [r for _, rs in readings for r in rs],
                 {d: [] for d in humaneval})
    if into_new and (taken := [t for t in every.stores(study) if t.exists()]):
        raise ConfigError(f"{taken[0]} exists; import never overwrites a store",
                          "import into a new --out directory, or delete the old stores")
    new_trials = {d: run_store.unstored(d, [(f, run_store.carried(ts)) for f, ts in found],
                                        run_store.trial_json) for d, found in trials.items()}
    new_humaneval = {d: run_store.unstored(
        d, [(f, [(t.key, _record_json(t.record), t) for t in ts]) for f, ts in found],
        _record_json, _humaneval_name) for d, found in humaneval.items()}
    return _New(trials={d: ts for d, ts in new_trials.items() if ts},
                readings=reading_store.unstored(study.part_b_dir / READINGS_NAME, readings),
                humaneval={d: ts for d, ts in new_humaneval.items() if ts})


def _write(study: Study, new: _New, source: str) -> ImportSummary:
    """Write ``new`` into the study's stores (trials of one harness per task only); a store
    this call creates is removed again if writing fails. The records written per store."""
    for run_dir, ts in new.trials.items():
        check_one_harness(run_dir, ts, source)
    created = [t for t in new.stores(study) if not t.exists()]
    blocks = [study.part_a_dir(b) for b in range(len(study.part_a))]
    written: dict[str, int] = {}
    try:
        for run_dir, ts in sorted(new.trials.items()):
            exp = part_a_experiment(study, blocks.index(run_dir))
            written[str(run_dir / DB_NAME)] = put_trials(exp, run_dir, ts)
        for run_dir, stored in sorted(new.humaneval.items()):
            with RunStore(run_dir) as store:
                written[str(store.path)] = store.put_many(
                    (t.key, t.outcome, t.record) for t in stored)
        if new.readings:
            with ReadingStore(study.part_b_dir / READINGS_NAME) as readings:
                written[str(readings.path)] = readings.put_carried(new.readings)
    except BaseException:
        for t in created:
            for leftover in (t, t.with_name(t.name + "-wal"), t.with_name(t.name + "-shm")):
                leftover.unlink(missing_ok=True)
        raise
    return ImportSummary(stores=written)


def import_exports(exports: Path, study: Study) -> ImportSummary:
    """Rebuild the study's stores from the exports beside its page (the inverse of the exports
    :func:`~slmbench.study.page.write_page` writes), so ``--page-only`` works on a clone with no
    store and no model.

    Part A trials go to the block whose grid plans them, Part B readings to the readings store
    as they were stored, HumanEval results to the study's HumanEval directories. Refuses (and
    writes nothing) when a target store exists or an export is malformed.
    """
    if not exports.is_dir():
        raise ConfigError(f"{exports} is not a folder", IMPORT_HINT)
    if not _exports_in(exports):
        raise ConfigError(f"{exports} holds none of {TRIALS_EXPORT}, {READINGS_EXPORT}, "
                          f"{HUMANEVAL_EXPORT}", IMPORT_HINT)
    every = _gather(study, [exports], into_new=True)  # every target is new
    return _write(study, every, str(exports))


def merge_stores(study: Study, folders: Sequence[Path]) -> ImportSummary:
    """Copy into this study's stores the trials, readings and HumanEval results another machine
    stored for the same study file, so one page shows both. Each folder is that machine's study
    ``out`` (its HumanEval results under ``humaneval/<name>``, as ``--out`` lays them out) or a
    folder of its exports (:func:`export_study`, or the exports beside its page).

    A record already here with the same content is skipped; the same key with different
    content (in two folders, or here and in a folder) is refused before anything is written.
    Returns the records written per store.
    """
    for folder in folders:
        if not folder.is_dir():
            raise ConfigError(f"--merge {folder} is not a folder", _MERGE_HINT)
        if not _exports_in(folder) and not any((folder / "part-a").glob(f"*/{DB_NAME}")) \
                and not (folder / "part-b" / READINGS_NAME).is_file() \
                and not any((folder / "humaneval").glob(f"*/{DB_NAME}")):
            raise ConfigError(f"--merge {folder} holds no study store", _MERGE_HINT)
    return _write(study, _gather(study, folders), " and ".join(map(str, folders)))
