"""Opening one of slmbench's SQLite stores: WAL, a ``meta`` table, a schema-version check.

Both stores (the Part A run store and the Part B readings store) open their file through
:func:`open_store`. A file is *ours* when it is empty (a new store), when its ``meta`` table
names the store's kind, or when it predates the kind marker but has the store's own table and a
schema version. Anything else (not SQLite, another SQLite file, another schema version) is a
one-line :class:`~slmbench.core.errors.ConfigError` naming the file, with a hint; nothing is
written to a file that is refused. A file of an older schema version that the store knows how
to bring up to date (``StoreKind.migrations``) is migrated when it is opened, in one
transaction: wholly, or not at all.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Self, TypeVar

from slmbench.core.errors import ConfigError, StoreWriteError

# SQLite's primary result codes for "the file cannot take this write": PERM, READONLY, IOERR,
# FULL, CANTOPEN (https://sqlite.org/rescode.html)
_CANNOT_WRITE = frozenset({3, 8, 10, 13, 14})
RESUME_HINT = ("free disk space or make the folder writable, then run the same command again: "
               "it resumes where it stopped")

META_TABLE = """
CREATE TABLE IF NOT EXISTS meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
"""


@dataclass(frozen=True)
class StoreKind:
    """What one store is: its kind marker, its tables, its schema version and how to name it.

    ``name`` words the schema error ("has {name} schema 2"), ``noun`` the others ("is not a
    {noun}"); ``table`` is the store's own table, which identifies a file written before the
    kind marker; ``hint`` tells a user what to pass instead of a refused file. ``migrations``
    maps an older version ``v`` to the SQL statements that turn a version-``v`` file into a
    version ``v + 1`` one; a file whose version has a chain of them up to ``version`` opens.
    """

    kind: str
    name: str
    noun: str
    table: str
    schema: str
    version: int
    hint: str
    error: type[ConfigError] = ConfigError
    migrations: Mapping[int, tuple[str, ...]] = field(default_factory=dict, hash=False)


def open_store(path: Path, store: StoreKind) -> sqlite3.Connection:
    """Connect to ``path`` as ``store`` (WAL, synchronous=FULL, autocommit), creating it if new.

    Raises ``store.error`` (a :class:`ConfigError`) for a file that is not SQLite, is
    another SQLite file, or has another schema version; the connection is closed then.
    """
    try:
        conn = sqlite3.connect(path, timeout=30.0, isolation_level=None, check_same_thread=False)
    except sqlite3.Error as exc:
        raise store.error(f"cannot open {store.noun} {path}: {exc}", store.hint) from exc
    try:
        with writing(path, store.noun):
            _check_and_create(conn, path, store)
    except StoreWriteError:
        conn.close()
        raise
    except sqlite3.DatabaseError as exc:
        conn.close()
        raise store.error(f"{path} is not a {store.noun}: {exc}", store.hint) from exc
    except ConfigError:
        conn.close()
        raise
    return conn


class Store:
    """An open store file: ``path`` and one connection (opened by :func:`open_store`) that the
    threads of one process share under ``_lock``; closed by :meth:`close` or a ``with`` block."""

    def __init__(self, path: Path, kind: StoreKind) -> None:
        self.path = path
        self._lock = threading.RLock()
        self._conn = open_store(path, kind)

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    @contextmanager
    def _transaction(self, noun: str) -> Iterator[sqlite3.Connection]:
        """The connection inside one transaction (under ``_lock``): every write in the block
        is committed together, or none is (rolled back on any exception)."""
        with self._lock, writing(self.path, noun):
            self._conn.execute("BEGIN")
            try:
                yield self._conn
            except BaseException:
                if self._conn.in_transaction:  # SQLite may have rolled back already
                    self._conn.execute("ROLLBACK")
                raise
            self._conn.execute("COMMIT")

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


def clash(what: str, where: Path, other: Path) -> ConfigError:
    """The refusal of a merge that finds ``what`` stored with different content in ``where``
    and ``other``: a stored record is never overwritten."""
    return ConfigError(f"{what} is stored in {where} and in {other} with different content; "
                       "merging never overwrites a stored record",
                       "keep the record of one machine: delete the other's store (or that "
                       "model's block of it) and merge again, or merge into a fresh --out")


def unstored(sources: Iterable[tuple[Path, Iterable[tuple[K, str, V]]]],
             here: Callable[[K], str | None], where: Path, name: Callable[[K], str]) -> list[V]:
    """The records of ``sources`` (per folder, its records as (key, content, record)) that the
    store at ``where`` lacks (``here``: its content of a key, None if it holds none), each key
    once, in the order met. :func:`clash` (nothing is written) when one key has two contents,
    in two folders or here and in a folder."""
    seen: dict[K, tuple[str, Path]] = {}
    out: list[V] = []
    for folder, records in sources:
        for key, content, record in records:
            if key not in seen and (stored := here(key)) is not None:
                seen[key] = (stored, where)
            if key not in seen:
                seen[key] = (content, folder)
                out.append(record)
            elif seen[key][0] != content:
                raise clash(name(key), seen[key][1], folder)
    return out


@contextmanager
def removed_on_error(paths: Iterable[Path]) -> Iterator[None]:
    """Run the block; if it raises, delete each store file of ``paths`` that did not exist
    before it (with its ``-wal`` and ``-shm``), so a failed write leaves no half-made store."""
    new = [p for p in paths if not p.exists()]
    try:
        yield
    except BaseException:
        for path in new:
            for leftover in (path, path.with_name(path.name + "-wal"),
                             path.with_name(path.name + "-shm")):
                leftover.unlink(missing_ok=True)
        raise


def read_meta(conn: sqlite3.Connection, key: str) -> str | None:
    """The raw text stored under ``key`` in ``meta``, or None (also when there is no table)."""
    try:
        row = conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    except sqlite3.OperationalError:  # no meta table
        return None
    return None if row is None else str(row[0])


def _check_and_create(conn: sqlite3.Connection, path: Path, store: StoreKind) -> None:
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    kind = read_meta(conn, "kind")
    legacy = kind is None and store.table in tables and read_meta(conn, "schema_version")
    if tables and kind != store.kind and not legacy:
        raise store.error(f"{path} is an SQLite file but not a {store.noun} "
                          f"(tables: {', '.join(sorted(tables))})", store.hint)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=FULL")
    found = read_meta(conn, "schema_version")
    if found is None:  # a new store: tables and marker in one transaction, or nothing at all
        conn.executescript(
            "BEGIN;" + META_TABLE + store.schema
            + f"INSERT OR IGNORE INTO meta(key, value) VALUES ('kind', {_quote(store.kind)}),"
            f" ('schema_version', {_quote(str(store.version))}); COMMIT;")
        return
    if found != str(store.version):
        if not _migratable(found, store):
            raise store.error(f"{path} has {store.name} schema {found}; this slmbench reads "
                              f"{store.version}",
                              f"use the slmbench version that wrote it, or {store.hint}")
        _migrate(conn, store)
    conn.executescript(META_TABLE + store.schema)  # CREATE ... IF NOT EXISTS: a no-op on ours


def _migratable(found: str, store: StoreKind) -> bool:
    """Whether ``store.migrations`` lead from version ``found`` up to ``store.version``."""
    if not found.isdigit() or int(found) >= store.version:
        return False
    return all(v in store.migrations for v in range(int(found), store.version))


def _migrate(conn: sqlite3.Connection, store: StoreKind) -> None:
    """Bring the file up to ``store.version`` in one transaction (the version read again under
    the write lock: of two processes opening one old file, the second finds it migrated)."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        version = int(read_meta(conn, "schema_version") or store.version)
        for v in range(version, store.version):
            for statement in store.migrations[v]:
                conn.execute(statement)
        conn.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'",
                     (str(store.version),))
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def _quote(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


@contextmanager
def writing(path: Path, noun: str) -> Iterator[None]:
    """Turn a failed write to ``path`` (disk full, read-only, I/O error) into one
    :class:`StoreWriteError` line. SQLite rolls the failed statement back, so what was
    stored before stays readable and a resumed run picks up from there."""
    try:
        yield
    except sqlite3.OperationalError as exc:
        if exc.sqlite_errorcode & 0xFF not in _CANNOT_WRITE:
            raise
        raise StoreWriteError(f"cannot write to {noun} {path}: {exc}", RESUME_HINT) from exc
    except OSError as exc:
        raise StoreWriteError(f"cannot write to {noun} {path}: {exc}", RESUME_HINT) from exc
