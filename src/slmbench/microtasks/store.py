"""The readings store: Part B model readings in one SQLite database (WAL), reused across runs.

One row per (model spec, task, prompt, item, input digest) holding the model's *raw* outputs
(:class:`~slmbench.microtasks.readout.RawReading`: per-candidate log-probs and the greedy
reply). Each reading is committed as soon as it is made, so a killed ``eligibility`` or
``diagnose`` run resumes where it stopped, and any command pointed at the same file reuses
what another one read. The input digest covers the rendered messages, the candidate forms
and the generation settings: an edited prompt or item is a miss, never a stale hit. Rankings
and format failures are rebuilt from the raw outputs on every load by the current readout
code, so a parser fix reaches stored readings.

Readings travel between stores (another machine's, a committed export) as
:class:`StoredReading` rows: exported and imported by :meth:`ReadingStore.export` /
:func:`read_export` (``readings.jsonl.gz``), and merged by :meth:`ReadingStore.merge` (what a
store lacks, in one transaction, refusing a key stored with other raw outputs).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Sequence
from contextlib import ExitStack
from pathlib import Path
from typing import Any, NamedTuple

from pydantic import BaseModel, ValidationError

from slmbench.core import jsonl, sqlite
from slmbench.core.errors import ConfigError
from slmbench.core.sqlite import Store, StoreKind, read_meta, writing
from slmbench.microtasks.datasets.records import AnyItem
from slmbench.microtasks.readout import (
    ItemReading,
    ModelInput,
    RawReading,
    build_reading,
    model_input,
)
from slmbench.microtasks.spec import MicroTask

SCHEMA_VERSION = 1
STORE_KIND = "slmbench-readings"
DEFAULT_NAME = "readings.sqlite"

# What one model input is, in both tables: the model spec, task, prompt, item and the digest
# of the exact input (:meth:`ModelInput.digest`).
_KEY = ("model", "task", "prompt_id", "item_id", "input_sha256")
_COLUMNS = ", ".join(_KEY)
_MATCH = " AND ".join(f"{c}=?" for c in _KEY)


def _keyed_table(name: str, value: str) -> str:
    """``name``: one ``value`` text per model input, with its time of writing."""
    columns = "".join(f"    {c} TEXT NOT NULL,\n" for c in (*_KEY, value))
    return (f"CREATE TABLE IF NOT EXISTS {name} (\n{columns}    created_at REAL NOT NULL,\n"
            f"    PRIMARY KEY ({_COLUMNS})\n);\n")


_SCHEMA = _keyed_table("readings", "raw") + _keyed_table("failures", "cause")
_HINT = "pass --store a new file, or one written by `slmbench eligibility` or `diagnose`"


class StoreError(ConfigError):
    """A readings store that cannot be used: not SQLite, another schema, a corrupt row."""


_STORE = StoreKind(kind=STORE_KIND, name="readings", noun="readings store", table="readings",
                   schema=_SCHEMA, version=SCHEMA_VERSION, hint=_HINT, error=StoreError)


class StoredReading(NamedTuple):
    """A reading as it travels between stores: its key fields and its raw outputs (JSON)."""

    model: str
    task: str
    prompt_id: str
    item_id: str
    input_sha256: str
    raw: str

    @property
    def key(self) -> tuple[str, str, str, str, str]:
        return self.model, self.task, self.prompt_id, self.item_id, self.input_sha256


class ReadCounts(BaseModel):
    """Where a run's readings came from, and how many could not be made (``backend_errors``:
    the backend gave up on them; in no rate, and read again by a later run)."""

    from_store: int = 0
    read_now: int = 0
    backend_errors: int = 0

    def add(self, other: ReadCounts) -> ReadCounts:
        return ReadCounts(from_store=self.from_store + other.from_store,
                          read_now=self.read_now + other.read_now,
                          backend_errors=self.backend_errors + other.backend_errors)

    def describe(self, store: Path | None) -> str:
        where = f" (store {store})" if store is not None else ""
        failed = (f", {self.backend_errors} backend errors (in no rate; a rerun reads them "
                  "again)" if self.backend_errors else "")
        return (f"readings: {self.from_store} from the store, {self.read_now} read now"
                f"{failed}{where}")


class ReadingStore(Store):
    """SQLite-backed cache of raw micro-task readings, shared by every Part B command.

    Safe to share between threads of one process; several processes may write the same file
    (WAL), and the primary key keeps each reading unique (the first one written wins).
    """

    def __init__(self, path: str | Path) -> None:
        path = Path(path)
        if path.is_dir():
            raise StoreError(f"{path} is a folder, not a readings store",
                             f"pass a file path, e.g. {path / DEFAULT_NAME}")
        with writing(path.parent, "readings folder"):
            path.parent.mkdir(parents=True, exist_ok=True)
        super().__init__(path, _STORE)

    def note(self, key: str) -> str | None:
        """A value a command kept beside its readings (e.g. an RTN report), or None."""
        with self._lock:
            return read_meta(self._conn, f"note:{key}")

    def put_note(self, key: str, value: str) -> None:
        with self._lock, writing(self.path, "readings store"):
            self._conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)",
                               (f"note:{key}", value))

    def get(self, spec: str, task: MicroTask, prompt_id: str, item: AnyItem,
            given: ModelInput | None = None) -> ItemReading | None:
        """The stored reading of this exact model input (``given``; None: the one
        ``prompt_id`` renders of ``item``), rebuilt by the current readout code."""
        digest = (given or model_input(task, prompt_id, item)).digest()
        with self._lock:
            row = self._conn.execute(f"SELECT raw FROM readings WHERE {_MATCH}",
                                     (spec, task.name, prompt_id, item.id, digest)).fetchone()
        if row is None:
            return None
        try:
            return build_reading(task, prompt_id, item, RawReading.model_validate_json(row[0]))
        except (ValidationError, ValueError) as exc:
            raise StoreError(f"{self.path}: the stored reading of {spec} · {task.name} · "
                             f"{prompt_id} · {item.id} is corrupt: {str(exc).splitlines()[0]}",
                             "delete the file (its readings are re-read) or pass --store "
                             "another file") from exc

    def put(self, spec: str, task: MicroTask, prompt_id: str, item: AnyItem,
            raw: RawReading, given: ModelInput | None = None) -> bool:
        """Commit one raw reading of ``given`` (as in :meth:`get`) now, and forget a backend
        error stored for the same input. False (nothing written) if it is already stored."""
        key = (spec, task.name, prompt_id, item.id,
               (given or model_input(task, prompt_id, item)).digest())
        with self._lock, writing(self.path, "readings store"):
            cur = self._conn.execute(
                f"INSERT INTO readings({_COLUMNS}, raw, created_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                (*key, raw.model_dump_json(), time.time()))
            self._conn.execute(f"DELETE FROM failures WHERE {_MATCH}", key)
            return cur.rowcount == 1

    def put_failure(self, spec: str, task: MicroTask, prompt_id: str, item: AnyItem,
                    cause: str, given: ModelInput | None = None) -> None:
        """Commit a reading the backend gave up on, with its cause (the last one kept). It is
        no reading: :meth:`get` still misses it, so a later run reads it again."""
        digest = (given or model_input(task, prompt_id, item)).digest()
        with self._lock, writing(self.path, "readings store"):
            self._conn.execute(
                f"INSERT OR REPLACE INTO failures({_COLUMNS}, cause, created_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                (spec, task.name, prompt_id, item.id, digest, cause, time.time()))

    def failures(self) -> list[dict[str, str]]:
        """Every stored backend error not read since: its key fields and its cause."""
        with self._lock:
            found = self._conn.execute(
                "SELECT model, task, prompt_id, item_id, cause FROM failures"
                " ORDER BY model, task, prompt_id, item_id").fetchall()
        return [{"model": m, "task": t, "prompt_id": p, "item_id": i, "cause": c}
                for m, t, p, i, c in found]

    def rows(self) -> list[dict[str, Any]]:
        """Every stored reading as a plain record (key fields and the raw outputs), for export."""
        with self._lock:
            found = self._conn.execute(
                "SELECT model, task, prompt_id, item_id, input_sha256, raw FROM readings"
                " ORDER BY model, task, prompt_id, item_id").fetchall()
        return [{"model": m, "task": t, "prompt_id": p, "item_id": i, "input_sha256": d,
                 "raw": json.loads(raw)} for m, t, p, i, d, raw in found]

    def count(self, spec: str | None = None) -> int:
        with self._lock:
            if spec is None:
                return int(self._conn.execute("SELECT COUNT(*) FROM readings").fetchone()[0])
            return int(self._conn.execute("SELECT COUNT(*) FROM readings WHERE model = ?",
                                          (spec,)).fetchone()[0])

    def seconds(self, spec: str) -> float:
        """Model time spent on the stored readings of ``spec`` (0 for readings stored untimed)."""
        with self._lock:
            row = self._conn.execute(
                "SELECT COALESCE(SUM(json_extract(raw, '$.seconds')), 0) FROM readings"
                " WHERE model = ?", (spec,)).fetchone()
        return float(row[0])

    def tokens(self, spec: str) -> tuple[int, int]:
        """(tokens, readings that recorded them) over the stored readings of ``spec``."""
        with self._lock:
            row = self._conn.execute(
                "SELECT COALESCE(SUM(json_extract(raw, '$.tokens')), 0),"
                " COUNT(json_extract(raw, '$.tokens')) FROM readings WHERE model = ?",
                (spec,)).fetchone()
        return int(row[0]), int(row[1])

    def resume_hint(self) -> str:
        """What to tell a user whose run was interrupted."""
        return (f"interrupted: {self.count()} readings kept in {self.path}; rerun the same "
                "command to read only the missing ones")

    # -- carrying readings between stores ------------------------------
    def export(self, path: Path) -> int:
        """Every raw reading (its key fields and ``raw``) into the export ``path``
        (``readings.jsonl.gz``, :mod:`slmbench.core.jsonl`); how many."""
        rows = [json.dumps(r, sort_keys=True) for r in self.rows()]
        jsonl.write_jsonl_gz(path, rows)
        return len(rows)

    def carried(self) -> list[StoredReading]:
        """Every stored reading as it travels (raw outputs as sorted-key JSON)."""
        return [StoredReading(r["model"], r["task"], r["prompt_id"], r["item_id"],
                              r["input_sha256"], json.dumps(r["raw"], sort_keys=True))
                for r in self.rows()]

    @classmethod
    def merge(cls, path: Path, sources: Iterable[tuple[Path, Sequence[StoredReading]]], *,
              dry_run: bool = False) -> int:
        """Write into the store at ``path`` the readings of ``sources`` (per folder) that it
        lacks, exactly as carried (keyed by their input digest, nothing re-read), each key once,
        in one transaction; how many. A key it holds with the same raw outputs is skipped; one
        key with two, in two folders or here and in a folder, is
        :func:`~slmbench.core.sqlite.clash` and nothing is written. ``dry_run``: only check
        and count; nothing is written, and no store is created."""
        with ExitStack() as stack:
            store = stack.enter_context(cls(path)) if path.is_file() else None
            here = {r.key: r.raw for r in store.carried()} if store is not None else {}
            new = sqlite.unstored(((folder, [(r.key, r.raw, r) for r in rows])
                                   for folder, rows in sources), here.get, path, _reading_name)
            if dry_run or not new:
                return len(new)
            store = store or stack.enter_context(cls(path))
            now = time.time()
            with store._transaction("readings store") as conn:
                return int(conn.executemany(
                    f"INSERT INTO readings({_COLUMNS}, raw, created_at) VALUES (?, ?, ?, ?, ?, ?,"
                    " ?) ON CONFLICT DO NOTHING", [(*r, now) for r in new]).rowcount)


def read_export(path: Path, hint: str) -> list[StoredReading]:
    """The readings of an export :meth:`ReadingStore.export` wrote, raw outputs as written (a
    reading stored before a field existed stays so); ConfigError (with ``hint``) naming the
    first line that is not a reading."""
    rows = jsonl.read_jsonl_gz(path, hint)
    for n, row in enumerate(rows, 1):
        if not isinstance(row, dict) or any(not isinstance(row.get(k), str) for k in _KEY):
            raise ConfigError(f"{path}: line {n} is not a reading ({', '.join(_KEY)}, raw)",
                              hint)
    jsonl.validated(RawReading, path, [r.get("raw") for r in rows], hint)
    return [StoredReading(*(r[k] for k in _KEY), json.dumps(r["raw"], sort_keys=True))
            for r in rows]


def _reading_name(key: tuple[str, ...]) -> str:
    """How an error names a reading: ``reading MODEL · TASK · PROMPT · ITEM``."""
    return f"reading {' · '.join(key[:4])}"
