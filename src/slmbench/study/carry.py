"""How a study's records travel: the exports beside its page and ``--export`` (stores to
``*.jsonl.gz``), ``import`` (exports to new stores, for a fresh clone) and ``--merge`` (another
machine's stores or exports into this one's, refusing a key stored with other content).

This module only routes: which trial goes to which Part A block, which HumanEval result to
which directory, and every store checked before any is written. Reading, comparing and writing
records is the stores' own (:meth:`RunStore.merge <slmbench.agents.store.RunStore.merge>`,
:meth:`ReadingStore.merge <slmbench.microtasks.store.ReadingStore.merge>`, and
:func:`~slmbench.agents.runner.merge.merge_trials` for a Part A block's harness)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path

from slmbench.agents import store as run_store
from slmbench.agents.humaneval import ProblemResult, carried, result_name
from slmbench.agents.records import Trial
from slmbench.agents.runner.merge import merge_trials
from slmbench.agents.runner.plan import plan_of
from slmbench.agents.store import DB_NAME, Carried, RunStore
from slmbench.core import jsonl, sqlite
from slmbench.core.errors import ConfigError
from slmbench.microtasks import store as reading_store
from slmbench.microtasks.store import ReadingStore, StoredReading
from slmbench.study.export import ImportSummary
from slmbench.study.spec import (
    HUMANEVAL_EXPORT,
    READINGS_EXPORT,
    TRIALS_EXPORT,
    Study,
    part_a_experiment,
    readings_in,
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


def _route_humaneval(study: Study, path: Path) -> list[tuple[Path, Carried]]:
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
    return [(target, carried(str(row["model"]), r))
            for row, r, target in zip(rows, found, where, strict=True)]


def _exports_in(folder: Path) -> dict[str, Path]:
    """The export files ``folder`` holds, by name (none: it is a study ``out``)."""
    return {n: folder / n for n in (TRIALS_EXPORT, READINGS_EXPORT, HUMANEVAL_EXPORT)
            if (folder / n).is_file()}


def _held(study: Study, folder: Path
          ) -> tuple[list[Trial], list[StoredReading], list[tuple[Path, Carried]]]:
    """The trials, readings and HumanEval results (by this study's directory) of ``folder``:
    its exports if it holds any, else its stores as a study ``out`` lays them out
    (``part-a/*/``, ``part-b/readings.sqlite``, ``humaneval/<name>`` for each directory of the
    same name)."""
    if exports := _exports_in(folder):
        dumps = [exports.get(n) for n in (TRIALS_EXPORT, READINGS_EXPORT, HUMANEVAL_EXPORT)]
        return ([] if dumps[0] is None else run_store.read_trials(dumps[0], IMPORT_HINT),
                [] if dumps[1] is None else reading_store.read_export(dumps[1], IMPORT_HINT),
                [] if dumps[2] is None else _route_humaneval(study, dumps[2]))
    trials: list[Trial] = []
    for db in sorted((folder / "part-a").glob(f"*/{DB_NAME}")):
        with RunStore(db.parent) as store:
            trials += jsonl.validated(Trial, db, [t.record for t in store.trials()], IMPORT_HINT)
    readings: list[StoredReading] = []
    if (path := readings_in(folder)).is_file():
        with ReadingStore(path) as stored_readings:
            readings = stored_readings.carried()
    humaneval: list[tuple[Path, Carried]] = []
    for target in study.humaneval:
        if (db := folder / "humaneval" / target.name / DB_NAME).is_file():
            with RunStore(db.parent) as store:
                stored = list(store.trials())
            humaneval += [(target, carried(t.key.model, r)) for t, r in zip(stored, jsonl.validated(
                ProblemResult, db, [t.record for t in stored], IMPORT_HINT), strict=True)]
    return trials, readings, humaneval


def _merge(study: Study, folders: Sequence[Path], *, into_new: bool = False) -> ImportSummary:
    """Merge what ``folders`` hold into the store of this study each record is routed to; the
    records written per store. Every store is checked before any is written: ConfigError
    (nothing written) on a malformed folder, a record a store refuses, and (``into_new``) when a
    target store exists. A store this call creates is removed again if writing fails."""
    trials: dict[Path, list[tuple[Path, Sequence[Trial]]]] = {}
    humaneval: dict[Path, list[tuple[Path, Sequence[Carried]]]] = {}
    readings: list[tuple[Path, Sequence[StoredReading]]] = []
    for folder in folders:
        others, found, results_ = _held(study, folder)
        for target, ts in (_route_trials(study, others, folder) if others else {}).items():
            trials.setdefault(target, []).append((folder, ts))
        for target in dict.fromkeys(d for d, _ in results_):
            humaneval.setdefault(target, []).append((folder, [r for d, r in results_
                                                              if d == target]))
        readings += [(folder, found)] if found else []
    blocks = [study.part_a_dir(b) for b in range(len(study.part_a))]
    merges: dict[Path, Callable[..., int]] = {
        **{d / DB_NAME: partial(merge_trials, part_a_experiment(study, blocks.index(d)), d, found)
           for d, found in sorted(trials.items())},
        **{d / DB_NAME: partial(RunStore.merge, d, found, name=result_name)
           for d, found in sorted(humaneval.items())}}
    if readings:
        path = study.readings_path
        merges[path] = partial(ReadingStore.merge, path, readings)
    if into_new and (taken := [t for t in merges if t.exists()]):
        raise ConfigError(f"{taken[0]} exists; import never overwrites a store",
                          "import into a new --out directory, or delete the old stores")
    new = {target: n for target, merge in merges.items() if (n := merge(dry_run=True))}
    with sqlite.removed_on_error(new):
        return ImportSummary(stores={str(t): merges[t](dry_run=False) for t in new})


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
    return _merge(study, [exports], into_new=True)  # every target is new


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
                and not readings_in(folder).is_file() \
                and not any((folder / "humaneval").glob(f"*/{DB_NAME}")):
            raise ConfigError(f"--merge {folder} holds no study store", _MERGE_HINT)
    return _merge(study, folders)
