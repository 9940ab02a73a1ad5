"""The run store: one SQLite database (WAL) per run directory.

One row per trial, keyed by :class:`TrialKey` — (model, task, variant,
temperature, seed, repeat, instance) — holding the full trial record as JSON. Writes
are idempotent: a key already stored is never written again, so a killed and
resumed run can neither lose a finished trial nor store one twice. A second
table caches model responses so re-scoring never re-queries a model.

Records travel between stores (another machine's, a committed export): exported and imported
by :func:`export_trials` / :func:`read_trials` (``trials.jsonl.gz``: one ``Trial`` JSON a line),
and merged by :meth:`RunStore.merge` (what a store lacks, in one transaction, refusing a key
stored with other content).

A trial record of schema 3 or below (``TRIAL_SCHEMA_VERSION``) reads with ``question=None``
(``slmbench.agents.questions.question_of`` rebinds it where the binders are the run's); a merge
compares it with the same trial backfilled with its question as equal, whichever side lacks it.
The store records the ``GENERATOR_VERSION`` of its run in its meta (``generator``).

Schema 2 added ``instance`` (the world seed of the task's instance) to the key. A schema 1
store is migrated when opened (its trials are instance 0, the curated tasks), and a record or
export written before the field existed reads as instance 0 (the field's default). Schema 3
added ``level`` (the difficulty ladder's level): a schema 1 or 2 store migrates on open, its
trials at ``base`` (the family's own instance), as a record without the field reads.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import ExitStack, suppress
from pathlib import Path
from typing import Any, NamedTuple

from pydantic import BaseModel, ConfigDict

from slmbench.agents.records import Trial, TrialKey
from slmbench.core import jsonl, sqlite
from slmbench.core.errors import ConfigError
from slmbench.core.sqlite import Store, StoreKind, writing

# 2: the task's instance in the key; 3: the ladder's level (older stores migrate on open)
SCHEMA_VERSION = 3
DB_NAME = "run.sqlite"

_TRIALS = """
CREATE TABLE IF NOT EXISTS {name} (
    model       TEXT NOT NULL,
    task        TEXT NOT NULL,
    variant     TEXT NOT NULL,
    temperature REAL NOT NULL,
    seed        INTEGER NOT NULL,
    repeat      INTEGER NOT NULL,
    instance    INTEGER NOT NULL DEFAULT 0,
    level       TEXT NOT NULL DEFAULT 'base',
    outcome     TEXT NOT NULL,
    record      TEXT NOT NULL,
    created_at  REAL NOT NULL,
    PRIMARY KEY (model, task, variant, temperature, seed, repeat, instance, level)
)"""
_INDEX = "CREATE INDEX IF NOT EXISTS trials_by_model ON trials (model, task)"
_SCHEMA = f"""{_TRIALS.format(name="trials")};
{_INDEX};
CREATE TABLE IF NOT EXISTS cache (
    key        TEXT PRIMARY KEY,
    value      TEXT NOT NULL,
    created_at REAL NOT NULL
);
"""
_KEY = "model, task, variant, temperature, seed, repeat, instance, level"
_ROW = f"{_KEY}, outcome, record, created_at"
_WHERE_KEY = ("model=? AND task=? AND variant=? AND temperature=? AND seed=? AND repeat=?"
              " AND instance=? AND level=?")


def _rebuilt(instance: str) -> tuple[str, ...]:
    """The trials table rebuilt with today's key, its trials at the base level (and at
    ``instance``: ``0`` from schema 1, the column itself from schema 2)."""
    return (
        _TRIALS.format(name="trials_new"),
        "INSERT INTO trials_new (model, task, variant, temperature, seed, repeat, instance,"
        f" level, outcome, record, created_at) SELECT model, task, variant, temperature, seed,"
        f" repeat, {instance}, 'base', outcome, record, created_at FROM trials",
        "DROP TABLE trials",
        "ALTER TABLE trials_new RENAME TO trials",
        _INDEX,
    )


# schema 1 -> 3: ``instance`` (0) and ``level`` in the key; 2 -> 3: ``level`` ('base')
_MIGRATIONS = {1: _rebuilt("0"), 2: _rebuilt("instance")}
_STORE = StoreKind(kind="slmbench-run", name="run store", noun="slmbench run store",
                   table="trials", schema=_SCHEMA, version=SCHEMA_VERSION,
                   hint="point at a run directory made by `slmbench run`",
                   migrations=_MIGRATIONS)


_INSERT = (f"INSERT INTO trials({_ROW}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
           " ON CONFLICT DO NOTHING")


class StoredTrial(BaseModel):
    """A trial row as read back from the store."""

    model_config = ConfigDict(frozen=True)

    key: TrialKey
    outcome: str
    record: dict[str, Any]
    created_at: float


class Carried(NamedTuple):
    """A record as it travels into a run store: its key, outcome and record (a ``Trial``, or
    another record a run stores, such as a HumanEval problem's result)."""

    key: TrialKey
    outcome: str
    record: BaseModel


class RunStore(Store):
    """SQLite-backed store of a run's trials, metadata and response cache.

    Safe to share between threads of one process; several processes may open
    the same run (WAL), and the primary key keeps every trial unique.
    """

    def __init__(self, run_dir: str | Path) -> None:
        self.run_dir = Path(run_dir)
        if self.run_dir.exists() and not self.run_dir.is_dir():
            raise ConfigError(f"run directory {self.run_dir} is a file",
                              "give --out (or `out` in the experiment) a folder's path")
        with writing(self.run_dir, "run directory"):
            self.run_dir.mkdir(parents=True, exist_ok=True)
        super().__init__(self.run_dir / DB_NAME, _STORE)

    # -- metadata -------------------------------------------------------
    def set_meta(self, key: str, value: Any) -> None:
        with self._lock, writing(self.path, "run store"):
            self._conn.execute(
                "INSERT INTO meta(key, value) VALUES (?, ?) "
                "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                (key, json.dumps(value)),
            )

    def get_meta(self, key: str, default: Any = None) -> Any:
        with self._lock:
            row = self._conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return json.loads(row[0]) if row else default

    # -- trials ---------------------------------------------------------
    def put(self, key: TrialKey, outcome: str, record: BaseModel | dict[str, Any]) -> bool:
        """Store a finished trial. Returns False (and writes nothing) if the key exists."""
        payload = _payload(record)
        with self._lock, writing(self.path, "run store"):
            cur = self._conn.execute(_INSERT, (*key.as_tuple(), outcome, payload, time.time()))
            return cur.rowcount == 1

    def put_many(self, rows: Iterable[tuple[TrialKey, str, BaseModel | dict[str, Any]]]) -> int:
        """Store many finished trials (key, outcome, record) in one transaction, new keys only
        (as :meth:`put`); how many were new. On an error none of them is stored."""
        now = time.time()
        with self._transaction("run store") as conn:
            return sum(conn.execute(_INSERT, (*key.as_tuple(), outcome, _payload(record), now)
                                    ).rowcount for key, outcome, record in rows)

    @classmethod
    def merge(cls, run_dir: Path, sources: Iterable[tuple[Path, Sequence[Carried]]], *,
              dry_run: bool = False, name: Callable[[TrialKey], str] | None = None) -> int:
        """Write into the store of ``run_dir`` the records of ``sources`` (per folder) that it
        lacks, each key once, in one transaction; how many. A key it holds with the same
        content is skipped (both sides compared as the carried record's type dumps them, so a
        record stored before a field existed compares equal); one key with two contents, in
        two folders or here and in a folder, is :func:`~slmbench.core.sqlite.clash` (named by
        ``name``, default :func:`trial_name`) and nothing is written. ``dry_run``: only check
        and count; nothing is written, and no store is created."""
        rows = [(folder, [(c.key, c.record.model_dump_json(), c) for c in records])
                for folder, records in sources]
        first: dict[TrialKey, BaseModel] = {}
        for _, records in rows:
            for key, _, c in records:
                first.setdefault(key, c.record)
        with ExitStack() as stack:
            store = stack.enter_context(cls(run_dir)) if (run_dir / DB_NAME).is_file() else None

            def here(key: TrialKey) -> str | None:
                stored = store.get(key) if store is not None else None
                return None if stored is None else _as_compared(
                    type(first[key]).model_validate(stored.record), first[key]).model_dump_json()

            new = sqlite.unstored(rows, here, run_dir, name or trial_name)
            if dry_run or not new:
                return len(new)
            store = store or stack.enter_context(cls(run_dir))
            return store.put_many(new)

    def forget(self, outcome: str, models: list[str]) -> int:
        """Delete the stored trials of ``models`` that ended ``outcome``; how many were.

        For ``slmbench run --retry-errors``: a forgotten trial is pending again, and one
        killed before it is rerun is simply pending on the next resume."""
        with self._lock, writing(self.path, "run store"):
            cur = self._conn.execute(
                f"DELETE FROM trials WHERE outcome = ? AND model IN "
                f"({', '.join('?' for _ in models)})", (outcome, *models))
            return int(cur.rowcount)

    def has(self, key: TrialKey) -> bool:
        with self._lock:
            row = self._conn.execute(f"SELECT 1 FROM trials WHERE {_WHERE_KEY}",
                                     key.as_tuple()).fetchone()
        return row is not None

    def get(self, key: TrialKey) -> StoredTrial | None:
        with self._lock:
            row = self._conn.execute(f"SELECT {_ROW} FROM trials WHERE {_WHERE_KEY}",
                                     key.as_tuple()).fetchone()
        return _row_to_trial(row) if row else None

    def keys(self) -> set[TrialKey]:
        with self._lock:
            rows = self._conn.execute(f"SELECT {_KEY} FROM trials").fetchall()
        return {_key(r) for r in rows}

    def count(self, model: str | None = None) -> int:
        with self._lock:
            if model is None:
                return self._conn.execute("SELECT COUNT(*) FROM trials").fetchone()[0]
            return self._conn.execute(
                "SELECT COUNT(*) FROM trials WHERE model = ?", (model,)
            ).fetchone()[0]

    def trials(self, model: str | None = None) -> Iterator[StoredTrial]:
        """All stored trials (optionally of one model) in a stable order."""
        sql = f"SELECT {_ROW} FROM trials"
        args: tuple[Any, ...] = ()
        if model is not None:
            sql += " WHERE model = ?"
            args = (model,)
        sql += f" ORDER BY {_KEY}"
        with self._lock:
            rows = self._conn.execute(sql, args).fetchall()
        for row in rows:
            yield _row_to_trial(row)

    def models(self) -> list[str]:
        with self._lock:
            rows = self._conn.execute("SELECT DISTINCT model FROM trials ORDER BY model").fetchall()
        return [r[0] for r in rows]

    def export_jsonl(self, path: str | Path) -> int:
        """Write every trial as one JSON line (atomically); returns the count."""
        path = Path(path)
        tmp = path.with_suffix(path.suffix + ".tmp")
        n = 0
        with writing(path, "trial export"):
            with tmp.open("w", encoding="utf-8") as fh:
                for t in self.trials():
                    fh.write(t.model_dump_json() + "\n")
                    n += 1
            tmp.replace(path)
        return n

    # -- response cache -------------------------------------------------
    def cache_get(self, key: str) -> dict[str, Any] | None:
        with self._lock:
            row = self._conn.execute("SELECT value FROM cache WHERE key = ?", (key,)).fetchone()
        return json.loads(row[0]) if row else None

    def cache_put(self, key: str, value: dict[str, Any]) -> None:
        with self._lock, writing(self.path, "run store"):
            self._conn.execute(
                "INSERT INTO cache(key, value, created_at) VALUES (?, ?, ?)"
                " ON CONFLICT DO NOTHING",
                (key, json.dumps(value), time.time()),
            )

def _as_compared(stored: BaseModel, carried: BaseModel) -> BaseModel:
    """``stored`` as it is compared with ``carried`` in a merge: a trial stored before trials
    recorded their question (schema 3) is the same trial as its backfilled export (and the
    other way round), so a missing question takes the other side's."""
    if (isinstance(stored, Trial) and isinstance(carried, Trial)
            and (stored.question is None or carried.question is None)):
        return stored.model_copy(update={"question": carried.question})
    return stored


def _payload(record: BaseModel | dict[str, Any]) -> str:
    return record.model_dump_json() if isinstance(record, BaseModel) else json.dumps(record)


def _key(row: tuple[Any, ...]) -> TrialKey:
    return TrialKey(model=row[0], task=row[1], variant=row[2], temperature=row[3],
                    seed=row[4], repeat=row[5], instance=row[6], level=row[7])


def _row_to_trial(row: tuple[Any, ...]) -> StoredTrial:
    return StoredTrial(key=_key(row), outcome=row[8], record=json.loads(row[9]),
                       created_at=row[10])


def trial_name(key: TrialKey) -> str:
    """How an error names a trial: ``trial MODEL TASK VARIANT T=0.7 repeat 1`` (and
    ``instance 3`` after it, for a drawn instance)."""
    return (f"trial {key.model} {key.task} {key.variant} T={key.temperature:g} "
            f"repeat {key.repeat}" + (f" instance {key.instance}" if key.instance else "")
            + (f" level {key.level}" if key.level != "base" else ""))


def export_trials(trials: Iterable[Trial], path: Path) -> int:
    """Every trial as stored (one ``Trial`` JSON a line) into the export ``path``
    (``trials.jsonl.gz``, :mod:`slmbench.core.jsonl`); how many.

    A trial stored without its question (trial schema 3 or below) keeps the question the
    export at ``path`` already gives the same trial (a committed export backfilled by
    ``scripts/backfill_questions.py``), so a page regenerated from an old store never drops
    one."""
    trials = list(trials)
    if path.is_file() and any(t.question is None for t in trials):
        with suppress(ConfigError):  # not an export: overwritten, as any unreadable file is
            trials = _with_questions(trials, read_trials(path, ""))
    lines = [t.model_dump_json() for t in trials]
    jsonl.write_jsonl_gz(path, lines)
    return len(lines)


def _with_questions(trials: list[Trial], before: Sequence[Trial]) -> list[Trial]:
    """``trials``, each without a question given the one ``before`` records for the same trial
    (the same record but for the question)."""
    asked = {t.key: t for t in before if t.question is not None}

    def filled(t: Trial) -> Trial:
        prev = asked.get(t.key) if t.question is None else None
        if prev is None:
            return t
        same = t.model_copy(update={"question": prev.question})
        return same if same == prev else t

    return [filled(t) for t in trials]


def read_trials(path: Path, hint: str) -> list[Trial]:
    """The trials of an export :func:`export_trials` wrote; ConfigError (with ``hint``) naming
    the first line that is not a ``Trial``."""
    return jsonl.validated(Trial, path, jsonl.read_jsonl_gz(path, hint), hint)


def carried(trials: Sequence[Trial]) -> list[Carried]:
    """Trials as :meth:`RunStore.merge` takes them."""
    return [Carried(t.key, t.outcome.value, t) for t in trials]
