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
from collections import deque
from collections.abc import Callable, Generator, Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import ExitStack
from pathlib import Path
from typing import Any, NamedTuple, TypeVar

from pydantic import BaseModel, ValidationError

from slmbench.core import jsonl, sqlite
from slmbench.core.errors import BackendError, ConfigError, SlmbenchError
from slmbench.core.sqlite import Store, StoreKind, read_meta, writing
from slmbench.microtasks.datasets.records import AnyItem
from slmbench.microtasks.readout import (
    ItemReading,
    ModelInput,
    RawReading,
    build_reading,
    model_input,
    read_raw,
)
from slmbench.microtasks.spec import MicroTask
from slmbench.models.base import Model
from slmbench.models.ray import RayCluster, RayModel
from slmbench.models.records import Message

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



def cached_read(store: ReadingStore | None, model: Model, task: MicroTask, prompt_id: str,
                item: AnyItem) -> ItemReading:
    """``read_item`` through a store (keyed by ``model.spec``); ``store=None`` only reads."""
    if store is not None and (hit := store.get(model.spec, task, prompt_id, item)) is not None:
        return hit
    raw = read_raw(model, model_input(task, prompt_id, item))
    if store is not None:
        store.put(model.spec, task, prompt_id, item, raw)
    return build_reading(task, prompt_id, item, raw)


W = TypeVar("W")
R = TypeVar("R")


def map_in_order(fn: Callable[[W], R], works: Iterable[W], workers: int
                 ) -> Generator[R, None, None]:
    """``fn`` of each work, in the order of ``works``, with up to ``workers`` calls under way
    at once (in threads; ``workers=1``: one after another in this thread). Stop iterating at
    any point: no call starts after that, the ones under way finish and are dropped. An
    exception of ``fn`` is raised where its result would have come."""
    if workers <= 1:
        yield from map(fn, works)
        return
    todo = iter(works)
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="readings") as pool:
        under_way: deque[Future[R]] = deque(pool.submit(fn, w) for _, w in zip(
            range(workers), todo, strict=False))
        try:
            while under_way:
                result = under_way.popleft().result()
                for w in todo:  # keep `workers` under way while the caller uses the result
                    under_way.append(pool.submit(fn, w))
                    break
                yield result
        finally:
            for future in under_way:
                future.cancel()
def _attempt(model: Model, given: ModelInput) -> RawReading | ConfigError:
    """``read_raw`` of one model input; a ConfigError (the input does not fit the model, say)
    is returned, so the caller decides whether to skip the item."""
    try:
        return read_raw(model, given)
    except ConfigError as exc:
        return exc


class Reader:
    """Reads items for one model spec through an optional store, counting hits and reads.

    The model is loaded on the first reading the store does not hold, so a fully stored run
    never loads it. Readings are keyed by ``spec`` as given. Up to ``workers`` readings are
    made at once (a server model's calls in flight). With ``ray``, the model is
    ``ray.model(spec)`` (its replicas on a Ray cluster), and the readings a block misses are
    made on all its replicas at once (:meth:`~slmbench.models.ray.RayModel.map`). The store
    is written only here, in the order of the items. ``on_load`` is given the model when it
    is loaded (locally or on Ray), before its first reading. Call :meth:`close` when done.
    """

    def __init__(self, spec: str, loader: Callable[[str], Model],
                 store: ReadingStore | None = None, *, workers: int = 1,
                 ray: RayCluster | None = None,
                 on_load: Callable[[Model], None] | None = None) -> None:
        self.spec = spec
        self.store = store
        self.workers = workers
        self.counts = ReadCounts()
        self._loader = ray.model if ray is not None else loader
        self._ray = ray
        self._on_load = on_load
        self._model: Model | None = None

    @property
    def loaded(self) -> bool:
        return self._model is not None

    def model(self) -> Model:
        if self._model is None:
            self._model = self._loader(self.spec)
            if self._on_load is not None:
                self._on_load(self._model)
        return self._model

    def _raws(self, works: list[ModelInput]) -> Iterator[RawReading | SlmbenchError]:
        if self._ray is None:
            return self._local(works)
        model = self.model()
        assert isinstance(model, RayModel)
        return model.map(_attempt, works, attempts=self._ray.attempts)

    def _local(self, works: list[ModelInput]) -> Iterator[RawReading | SlmbenchError]:
        # the model is loaded at the first reading the store lacks (a caller that stops
        # before it never loads it), in this thread, never by two threads
        model = self.model()
        yield from map_in_order(lambda w: _attempt(model, w), works, self.workers)

    def read_many(self, task: MicroTask, prompt_id: str, items: Sequence[AnyItem],
                  messages: Callable[[AnyItem], list[Message]] | None = None,
                  ) -> Iterator[tuple[AnyItem, ItemReading | SlmbenchError]]:
        """Each item with its reading, in order: a stored one, else one the model makes now
        (``workers`` at once locally, committed as it is yielded). ``messages``: the prompt
        of each item when it is not the one ``prompt_id`` renders (stored under
        ``prompt_id`` all the same, keyed by its digest). Instead of a reading: the
        ``ConfigError`` of an item the loaded model refuses (nothing stored), or, on Ray, the
        ``BackendError`` of one whose attempts ran out (stored as a failure, with its cause).
        Stop iterating at any point: nothing is read past the next ``workers`` items, and
        nothing past the last one yielded is stored."""
        inputs = [model_input(task, prompt_id, i, messages(i) if messages else None)
                  for i in items]
        stored = [self.store.get(self.spec, task, prompt_id, i, g) if self.store else None
                  for i, g in zip(items, inputs, strict=True)]
        misses = [g for g, hit in zip(inputs, stored, strict=True) if hit is None]
        raws = self._raws(misses) if misses else iter(())
        try:
            for item, given, hit in zip(items, inputs, stored, strict=True):
                if hit is not None:
                    self.counts.from_store += 1
                    yield item, hit
                    continue
                raw = next(raws)
                if isinstance(raw, BackendError):
                    if self.store is not None:
                        self.store.put_failure(self.spec, task, prompt_id, item, str(raw),
                                               given)
                    self.counts.backend_errors += 1
                    yield item, raw
                elif isinstance(raw, SlmbenchError):
                    yield item, raw
                else:
                    if self.store is not None:
                        self.store.put(self.spec, task, prompt_id, item, raw, given)
                    self.counts.read_now += 1
                    yield item, build_reading(task, prompt_id, item, raw)
        finally:
            close = getattr(raws, "close", None)
            if close is not None:
                close()

    def close(self) -> None:
        if self._model is not None:
            self._model.close()
            self._model = None
