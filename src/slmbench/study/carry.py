"""How a study's records travel: the exports beside its page and ``--export`` (stores to
``*.jsonl.gz``), ``import`` (exports to new stores, for a fresh clone) and ``--merge`` (another
machine's stores or exports into this one's, refusing a key stored with other content)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import (
    BaseModel,
    ConfigDict,
    ValidationError,
)

from slmbench.core import jsonl
from slmbench.core.errors import ConfigError
from slmbench.core.tomlfile import first_error
from slmbench.study.spec import (
    HUMANEVAL_EXPORT,
    READINGS_EXPORT,
    READINGS_NAME,
    TRIALS_EXPORT,
    Study,
    part_a_experiment,
)


def stored_trials(study: Study) -> list[Any]:
    """Every trial stored in the study's Part A blocks, block by block (as Trial records)."""
    from slmbench.agents.loading import load_trials
    from slmbench.agents.store import DB_NAME

    return [t for block in range(len(study.part_a))
            if (study.part_a_dir(block) / DB_NAME).is_file()
            for t in load_trials(study.part_a_dir(block))]


def export_trials(trials: Sequence[Any], assets: Path) -> Path:
    """Every trial as stored (one ``Trial`` JSON a line), into ``assets/trials.jsonl.gz``."""
    return jsonl.write_jsonl_gz(assets / TRIALS_EXPORT, [t.model_dump_json() for t in trials])


def export_readings(store: Any, assets: Path) -> Path:
    """Every raw reading of a readings store (its key fields and ``raw``), into
    ``assets/readings.jsonl.gz``."""
    return jsonl.write_jsonl_gz(assets / READINGS_EXPORT,
                                [json.dumps(r, sort_keys=True) for r in store.rows()])


def export_humaneval(run_dirs: list[Path], assets: Path) -> Path:
    """Every stored HumanEval problem result (reply, sanitised code, verdict), one per line,
    with its model and the name of its run directory (``run``), where an import puts it."""
    from slmbench.agents.humaneval import results
    from slmbench.agents.store import RunStore

    rows = []
    for run_dir in run_dirs:
        with RunStore(run_dir) as store:
            rows += [json.dumps({"model": m, "run": run_dir.name, **r.model_dump(mode="json")},
                                sort_keys=True)
                     for m in store.models() for r in results(store, m)]
    return jsonl.write_jsonl_gz(assets / HUMANEVAL_EXPORT, rows)


_IMPORT_HINT = "pass the folder beside a study page, e.g. docs/results/reference-study"


class ImportSummary(BaseModel):
    """What :func:`import_exports` wrote: records per store file."""

    model_config = ConfigDict(frozen=True)

    stores: dict[str, int]


def read_jsonl_gz(path: Path) -> list[dict[str, Any]]:
    """The JSON documents of an export beside a study page (:mod:`slmbench.core.jsonl`)."""
    return jsonl.read_jsonl_gz(path, _IMPORT_HINT)


def _validated(model: type[BaseModel], path: Path, rows: list[dict[str, Any]]) -> list[Any]:
    out = []
    for n, row in enumerate(rows, 1):
        try:
            out.append(model.model_validate(row))
        except ValidationError as exc:
            raise ConfigError(f"{path}: line {n} is not a {model.__name__}: "
                              f"{first_error(exc)}", _IMPORT_HINT) from None
    return out


def _route_trials(study: Study, trials: list[Any], path: Path) -> dict[Path, list[Any]]:
    """Each trial into the Part A block whose grid plans its key (the only block, if one)."""
    from slmbench.agents.runner.plan import plan_of

    if not study.part_a:
        raise ConfigError(f"{path} holds Part A trials but study {study.name!r} has no "
                          "[part_a]", "pass the study file the page was made from")
    plans = [{p.key for p in plan_of(part_a_experiment(study, b)).trials}
             for b in range(len(study.part_a))]
    out: dict[Path, list[Any]] = {study.part_a_dir(b): [] for b in range(len(study.part_a))}
    for t in trials:
        block = next((b for b, keys in enumerate(plans) if t.key in keys),
                     0 if len(plans) == 1 else None)
        if block is None:
            k = t.key
            raise ConfigError(f"{path}: trial {k.model} {k.task} {k.variant} T={k.temperature:g}"
                              f" repeat {k.repeat} is in no Part A block of {study.name!r}",
                              "pass the study file the page was made from")
        out[study.part_a_dir(block)].append(t)
    return {d: ts for d, ts in out.items() if ts}


def _route_humaneval(study: Study, rows: list[dict[str, Any]],
                     path: Path) -> dict[Path, list[tuple[str, Any]]]:
    """HumanEval results into the study's HumanEval directories: each row into the directory
    its ``run`` names; rows without one (exports written before rows named their directory)
    by model, in the order the export lists them, one a directory, or all into the only one."""
    from slmbench.agents.humaneval import ProblemResult

    results = _validated(ProblemResult, path, [{k: v for k, v in r.items()
                                                if k not in ("model", "run")} for r in rows])
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
    out: dict[Path, list[tuple[str, Any]]] = {}
    for row, result, target in zip(rows, results, where, strict=True):
        out.setdefault(target, []).append((str(row["model"]), result))
    return out


def _readings(path: Path) -> list[tuple[Any, ...]]:
    from slmbench.microtasks.readout import RawReading

    rows = read_jsonl_gz(path)
    keys = ("model", "task", "prompt_id", "item_id", "input_sha256")
    for n, row in enumerate(rows, 1):
        if not isinstance(row, dict) or any(not isinstance(row.get(k), str) for k in keys):
            raise ConfigError(f"{path}: line {n} is not a reading ({', '.join(keys)}, raw)",
                              _IMPORT_HINT)
    _validated(RawReading, path, [r.get("raw") for r in rows])
    # the raw outputs as stored, not re-dumped: a reading stored before a field existed stays so
    return [(*(r[k] for k in keys), json.dumps(r["raw"], sort_keys=True)) for r in rows]


def _write_readings(path: Path, rows: list[tuple[Any, ...]]) -> None:
    """The readings exactly as exported, keyed by their stored input digest (nothing re-read).

    The file is made by :class:`ReadingStore` (schema, kind, version); the rows go in as
    ``ReadingStore.rows`` gave them out.
    """
    import sqlite3
    import time
    from contextlib import closing

    from slmbench.microtasks.store import ReadingStore

    ReadingStore(path).close()
    now = time.time()
    with closing(sqlite3.connect(path)) as conn, conn:
        conn.executemany("INSERT INTO readings(model, task, prompt_id, item_id, input_sha256,"
                         " raw, created_at) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                         [(*r, now) for r in rows])


def _check_one_harness(run_dir: Path, trials: list[Any], source: str) -> None:
    """ConfigError when writing ``trials`` into the store of ``run_dir`` would put trials of
    one task made by two harnesses (their per-task fingerprints, ``Trial.harness``) side by
    side: trials of different harnesses never mix in a store."""
    from slmbench.agents.store import DB_NAME, RunStore

    made: dict[str, set[str | None]] = {}
    for t in trials:
        made.setdefault(t.task_id, set()).add(t.harness)
    if (run_dir / DB_NAME).is_file():
        with RunStore(run_dir) as store:
            for t in store.trials():
                made.setdefault(t.key.task, set()).add(t.record.get("harness"))
    for task, found in sorted(made.items()):
        if len(found) > 1:
            shown = ", ".join(sorted(str(h) for h in found))
            raise ConfigError(f"{source} and {run_dir} hold trials of {task} made by several "
                              f"harnesses ({shown}); trials of different harnesses must not mix",
                              "merge only stores made by the same slmbench harness (prompts, "
                              "parser, tools, tasks), or keep them apart under another --out")


def _put_trials(study: Study, run_dir: Path, trials: list[Any]) -> int:
    """Store ``trials`` (new keys only) in a Part A block's store; how many were new.

    When every trial the store then holds was made by this checkout's harness (each trial's
    per-task fingerprint is the one its task has here), the store records the block's harness
    fingerprint, so ``slmbench study`` resumes it; otherwise it records ``merged-<digest of
    the trials' fingerprints>``, which a run refuses to add to (a page is still made from
    it)."""
    import hashlib

    from slmbench.agents.harness import fingerprint
    from slmbench.agents.runner.meta import harness_of
    from slmbench.agents.runner.plan import plan_of
    from slmbench.agents.store import RunStore

    block = [study.part_a_dir(b) for b in range(len(study.part_a))].index(run_dir)
    exp = part_a_experiment(study, block)
    plan = plan_of(exp)
    here = {tid: fingerprint([task], toolset=exp.toolset, prompts=exp.prompts,
                             scaffold=exp.scaffold) for tid, task in plan.tasks.items()}
    with RunStore(run_dir) as store:
        new = sum(store.put(t.key, t.outcome.value, t) for t in trials)
        if store.get_meta("harness_fingerprint") is None:
            made = {t.key.task: t.record.get("harness") for t in store.trials()}
            digest = hashlib.sha256(json.dumps(sorted(made.items())).encode()).hexdigest()[:8]
            store.set_meta("harness_fingerprint", harness_of(exp, plan) if all(
                h == here.get(task) for task, h in made.items()) else f"merged-{digest}")
    return new


def import_exports(exports: Path, study: Study) -> ImportSummary:
    """Rebuild the study's stores from the exports beside its page (the inverse of the exports
    :func:`~slmbench.study.page.write_page` writes), so ``--page-only`` works on a clone with no
    store and no model.

    Part A trials go to the block whose grid plans them, Part B readings to the readings store
    as they were stored, HumanEval results to the study's HumanEval directories. Refuses (and
    writes nothing) when a target store exists or an export is malformed.
    """
    if not exports.is_dir():
        raise ConfigError(f"{exports} is not a folder", _IMPORT_HINT)
    if not _exports_in(exports):
        raise ConfigError(f"{exports} holds none of {TRIALS_EXPORT}, {READINGS_EXPORT}, "
                          f"{HUMANEVAL_EXPORT}", _IMPORT_HINT)
    humaneval: dict[Path, list[Any]] = {}
    for target, t in _other_humaneval(study, exports):
        humaneval.setdefault(target, []).append(t)
    every = _New(trials=_route_trials(study, trials, exports) if (
                     trials := _other_trials(exports)) else {},
                 readings=_other_readings(exports), humaneval=humaneval)
    if taken := [t for t in every.stores(study) if t.exists()]:
        raise ConfigError(f"{taken[0]} exists; import never overwrites a store",
                          "import into a new --out directory, or delete the old stores")
    return _write(study, every, str(exports))  # every target is new: all of it is written


_MERGE_HINT = ("each --merge folder is a study's `out` made from this study file on another "
               "machine (part-a/<n>/run.sqlite, part-b/readings.sqlite, "
               "humaneval/<name>/run.sqlite), or a folder of its exports (trials.jsonl.gz, "
               "readings.jsonl.gz, humaneval.jsonl.gz) from `slmbench study FILE --export DIR` "
               "or beside its page")


def _exports_in(folder: Path) -> dict[str, Path]:
    """The export files ``folder`` holds, by name (none: it is a study ``out``)."""
    return {n: folder / n for n in (TRIALS_EXPORT, READINGS_EXPORT, HUMANEVAL_EXPORT)
            if (folder / n).is_file()}


def _other_trials(folder: Path) -> list[Any]:
    """Every trial of ``folder`` (as Trial records): its ``trials.jsonl.gz`` if it is an
    exports folder, else every store under ``folder/part-a/*/``."""
    from slmbench.agents.records import Trial
    from slmbench.agents.store import DB_NAME, RunStore

    if exports := _exports_in(folder):
        dump = exports.get(TRIALS_EXPORT)
        return [] if dump is None else _validated(Trial, dump, read_jsonl_gz(dump))
    out = []
    for db in sorted((folder / "part-a").glob(f"*/{DB_NAME}")):
        with RunStore(db.parent) as store:
            out += _validated(Trial, db, [t.record for t in store.trials()])
    return out


def _other_readings(folder: Path) -> list[tuple[Any, ...]]:
    """Every reading of ``folder`` (its ``readings.jsonl.gz``, or ``part-b/readings.sqlite``):
    its five key fields and raw JSON."""
    from slmbench.microtasks.store import ReadingStore

    if exports := _exports_in(folder):
        dump = exports.get(READINGS_EXPORT)
        return [] if dump is None else _readings(dump)
    path = folder / "part-b" / READINGS_NAME
    if not path.is_file():
        return []
    with ReadingStore(path) as store:
        return [(r["model"], r["task"], r["prompt_id"], r["item_id"], r["input_sha256"],
                 json.dumps(r["raw"], sort_keys=True)) for r in store.rows()]


def _other_humaneval(study: Study, folder: Path) -> list[tuple[Path, Any]]:
    """Every HumanEval result of ``folder``, as (this study's HumanEval directory, stored
    trial): from its ``humaneval.jsonl.gz``, or from ``folder/humaneval/<name>`` (the layout
    of ``--out``) for each directory of the same name."""
    from slmbench.agents.humaneval import VARIANT
    from slmbench.agents.records import TrialKey
    from slmbench.agents.store import DB_NAME, RunStore, StoredTrial

    if exports := _exports_in(folder):
        if (dump := exports.get(HUMANEVAL_EXPORT)) is None:
            return []
        return [(target, StoredTrial(
                    key=TrialKey(model=m, task=r.task_id, variant=VARIANT),
                    outcome="pass" if r.passed else "fail",
                    record=json.loads(r.model_dump_json()), created_at=0.0))
                for target, results in _route_humaneval(study, read_jsonl_gz(dump),
                                                        dump).items()
                for m, r in results]
    out = []
    for target in study.humaneval:
        source = folder / "humaneval" / target.name
        if (source / DB_NAME).is_file():
            with RunStore(source) as store:
                out += [(target, t) for t in store.trials()]
    return out


def _clash(what: str, where: Path, other: Path) -> ConfigError:
    return ConfigError(f"{what} is stored in {where} and in {other} with different content; "
                       "merging never overwrites a stored record",
                       "keep the record of one machine: delete the other's store (or that "
                       "model's block of it) and merge again, or merge into a fresh --out")


def _trial_name(t: Any) -> str:
    k = t.key
    return f"trial {k.model} {k.task} {k.variant} T={k.temperature:g} repeat {k.repeat}"


def _new_trials(study: Study, folders: list[Path]) -> dict[Path, list[Any]]:
    """Trials of ``folders`` not yet in this study's run stores, by target run directory;
    ConfigError if one key holds different records (in two folders, or here and there)."""
    from slmbench.agents.records import Trial
    from slmbench.agents.store import DB_NAME, RunStore

    found: dict[tuple[Path, Any], tuple[Any, str, Path]] = {}  # -> (trial, JSON, folder)
    for folder in folders:
        if not (others := _other_trials(folder)):
            continue
        for target, ts in _route_trials(study, others, folder).items():
            for t in ts:
                dump, seen = t.model_dump_json(), found.get((target, t.key))
                if seen is not None and seen[1] != dump:
                    raise _clash(_trial_name(t), seen[2], folder)
                found[(target, t.key)] = (t, dump, folder)
    out: dict[Path, list[Any]] = {}
    for target in dict.fromkeys(d for d, _ in found):
        mine = [v for (d, _), v in found.items() if d == target]
        if not (target / DB_NAME).is_file():
            out[target] = [t for t, _, _ in mine]
            continue
        with RunStore(target) as store:
            for t, dump, folder in mine:
                if (stored := store.get(t.key)) is None:
                    out.setdefault(target, []).append(t)
                elif Trial.model_validate(stored.record).model_dump_json() != dump:
                    raise _clash(_trial_name(t), target, folder)
    return out


def _new_readings(study: Study, folders: list[Path]) -> list[tuple[Any, ...]]:
    """Readings of ``folders`` not yet in this study's readings store; ConfigError if one key
    (model, task, prompt, item, input digest) holds different raw outputs."""
    from slmbench.microtasks.store import ReadingStore

    path = study.part_b_dir / READINGS_NAME
    here: dict[tuple[Any, ...], tuple[str, Path]] = {}
    if path.is_file():
        with ReadingStore(path) as store:
            here = {(r["model"], r["task"], r["prompt_id"], r["item_id"], r["input_sha256"]):
                    (json.dumps(r["raw"], sort_keys=True), path) for r in store.rows()}
    new: dict[tuple[Any, ...], tuple[str, Path]] = {}
    for folder in folders:
        for row in _other_readings(folder):
            key, raw = row[:5], row[5]
            seen = here.get(key) or new.get(key)
            if seen is None:
                new[key] = (raw, folder)
            elif seen[0] != raw:
                raise _clash(f"reading {' · '.join(key[:4])}", seen[1], folder)
    return [(*k, raw) for k, (raw, _) in new.items()]


def _new_humaneval(study: Study, folders: list[Path]) -> dict[Path, list[Any]]:
    """HumanEval results of ``folders`` not yet in this study's HumanEval directories, as
    stored trials; ConfigError if one key holds different results."""
    from slmbench.agents.store import DB_NAME, RunStore

    found: dict[tuple[Path, Any], tuple[Any, Path]] = {}
    for folder in folders:
        for target, t in _other_humaneval(study, folder):
            seen = found.get((target, t.key))
            if seen is not None and seen[0].record != t.record:
                raise _clash(f"HumanEval {t.key.model} {t.key.task}", seen[1], folder)
            found[(target, t.key)] = (t, folder)
    out: dict[Path, list[Any]] = {}
    for (target, key), (t, folder) in found.items():
        if (target / DB_NAME).is_file():
            with RunStore(target) as store:
                stored = store.get(key)
            if stored is not None:
                if stored.record != t.record:
                    raise _clash(f"HumanEval {key.model} {key.task}", target, folder)
                continue
        out.setdefault(target, []).append(t)
    return out


@dataclass(frozen=True)
class _New:
    """The records some folders hold that this study's stores do not, by target store."""

    trials: dict[Path, list[Any]]
    readings: list[tuple[Any, ...]]
    humaneval: dict[Path, list[Any]]

    def stores(self, study: Study) -> list[Path]:
        from slmbench.agents.store import DB_NAME

        return [d / DB_NAME for d in [*self.trials, *self.humaneval]] + (
            [study.part_b_dir / READINGS_NAME] if self.readings else [])


def _gather(study: Study, folders: list[Path]) -> _New:
    """What ``folders`` hold that this study's stores do not; ConfigError (nothing written) on
    a malformed folder or a key stored with different content."""
    return _New(trials=_new_trials(study, folders), readings=_new_readings(study, folders),
                humaneval=_new_humaneval(study, folders))


def _write(study: Study, new: _New, source: str) -> ImportSummary:
    """Write ``new`` into the study's stores (trials of one harness per task only); a store
    this call creates is removed again if writing fails. The records written per store."""
    from slmbench.agents.store import DB_NAME, RunStore

    for run_dir, ts in new.trials.items():
        _check_one_harness(run_dir, ts, source)
    created = [t for t in new.stores(study) if not t.exists()]
    written: dict[str, int] = {}
    try:
        for run_dir, ts in sorted(new.trials.items()):
            written[str(run_dir / DB_NAME)] = _put_trials(study, run_dir, ts)
        for run_dir, stored in sorted(new.humaneval.items()):
            with RunStore(run_dir) as store:
                written[str(store.path)] = sum(store.put(t.key, t.outcome, t.record)
                                               for t in stored)
        if new.readings:
            _write_readings(study.part_b_dir / READINGS_NAME, new.readings)
            written[str(study.part_b_dir / READINGS_NAME)] = len(new.readings)
    except BaseException:
        for t in created:
            for leftover in (t, t.with_name(t.name + "-wal"), t.with_name(t.name + "-shm")):
                leftover.unlink(missing_ok=True)
        raise
    return ImportSummary(stores=written)


def merge_stores(study: Study, folders: list[Path]) -> ImportSummary:
    """Copy into this study's stores the trials, readings and HumanEval results another machine
    stored for the same study file, so one page shows both. Each folder is that machine's study
    ``out`` (its HumanEval results under ``humaneval/<name>``, as ``--out`` lays them out) or a
    folder of its exports (:func:`export_study`, or the exports beside its page).

    A record already here with the same content is skipped; the same key with different
    content (in two folders, or here and in a folder) is refused before anything is written.
    Returns the records written per store.
    """
    from slmbench.agents.store import DB_NAME

    for folder in folders:
        if not folder.is_dir():
            raise ConfigError(f"--merge {folder} is not a folder", _MERGE_HINT)
        if not _exports_in(folder) and not any((folder / "part-a").glob(f"*/{DB_NAME}")) \
                and not (folder / "part-b" / READINGS_NAME).is_file() \
                and not any((folder / "humaneval").glob(f"*/{DB_NAME}")):
            raise ConfigError(f"--merge {folder} holds no study store", _MERGE_HINT)
    return _write(study, _gather(study, folders), " and ".join(map(str, folders)))


def export_study(study: Study, dest: Path) -> ImportSummary:
    """Write every record the study's stores hold, as the exports beside a page do
    (``trials.jsonl.gz``, ``readings.jsonl.gz``, ``humaneval.jsonl.gz``), into ``dest``: the
    form a study's progress travels in, to another machine or into a commit, and is read back
    by :func:`merge_stores`. Loads no model and writes no page. ConfigError if nothing is stored.
    Returns the records written per export file."""
    from slmbench.agents.humaneval import results
    from slmbench.agents.store import DB_NAME, RunStore
    from slmbench.microtasks.store import ReadingStore

    trials = stored_trials(study)
    path = study.part_b_dir / READINGS_NAME
    readings = 0
    if path.is_file():
        with ReadingStore(path) as store:
            readings = store.count()
    humaneval = [d for d in study.humaneval if (d / DB_NAME).is_file()]
    if not trials and not readings and not humaneval:
        raise ConfigError(f"study {study.name!r} has nothing stored under {study.out}",
                          "run the study (or merge its stores) before exporting it")
    written: dict[str, int] = {}
    if trials:
        written[str(export_trials(trials, dest))] = len(trials)
    if readings:
        with ReadingStore(path) as store:
            written[str(export_readings(store, dest))] = readings
    if humaneval:
        n = 0
        for d in humaneval:
            with RunStore(d) as store:
                n += sum(len(results(store, m)) for m in store.models())
        written[str(export_humaneval(humaneval, dest))] = n
    return ImportSummary(stores=written)
