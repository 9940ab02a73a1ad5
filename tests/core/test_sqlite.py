"""The one way a store opens its SQLite file: WAL, a kind marker, a schema-version check."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from slmbench.core.errors import ConfigError
from slmbench.core.sqlite import StoreKind, open_store, read_meta, removed_on_error

NOTES = StoreKind(kind="notes", name="notes", noun="notes store", table="notes",
                  schema="CREATE TABLE IF NOT EXISTS notes (text TEXT);", version=3,
                  hint="pass a new file")


def test_a_new_file_gets_wal_kind_and_version(tmp_path: Path) -> None:
    conn = open_store(tmp_path / "n.sqlite", NOTES)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert read_meta(conn, "kind") == "notes" and read_meta(conn, "schema_version") == "3"
    conn.execute("INSERT INTO notes VALUES ('kept')")
    conn.close()
    again = open_store(tmp_path / "n.sqlite", NOTES)
    assert again.execute("SELECT text FROM notes").fetchall() == [("kept",)]


def test_another_sqlite_file_is_refused_and_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "other.sqlite"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE things (x)")
    with pytest.raises(ConfigError, match="SQLite file but not a notes store") as err:
        open_store(path, NOTES)
    assert str(path) in str(err.value) and err.value.hint == "pass a new file"
    tables = {r[0] for r in sqlite3.connect(path).execute(
        "SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert tables == {"things"}


def test_a_file_that_is_not_sqlite_is_a_one_line_error(tmp_path: Path) -> None:
    path = tmp_path / "n.sqlite"
    path.write_bytes(b"plain text, not a database\n" * 100)
    with pytest.raises(ConfigError, match="is not a notes store") as err:
        open_store(path, NOTES)
    assert "\n" not in str(err.value) and err.value.hint
    assert path.read_bytes().startswith(b"plain text")


def test_another_schema_version_names_the_file_and_the_hint(tmp_path: Path) -> None:
    path = tmp_path / "n.sqlite"
    open_store(path, NOTES).execute("UPDATE meta SET value = '9' WHERE key = 'schema_version'")
    with pytest.raises(ConfigError, match="has notes schema 9; this slmbench reads 3") as err:
        open_store(path, NOTES)
    assert str(path) in str(err.value) and "pass a new file" in err.value.hint


def test_a_file_written_before_the_kind_marker_still_opens(tmp_path: Path) -> None:
    path = tmp_path / "n.sqlite"
    with sqlite3.connect(path) as conn:
        conn.executescript("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);"
                           "INSERT INTO meta VALUES ('schema_version', '3');"
                           "CREATE TABLE notes (text TEXT); INSERT INTO notes VALUES ('old');")
    conn = open_store(path, NOTES)
    assert conn.execute("SELECT text FROM notes").fetchall() == [("old",)]


def test_a_failed_write_removes_the_stores_it_was_creating_and_keeps_the_others(
        tmp_path: Path) -> None:
    old, new = tmp_path / "old.sqlite", tmp_path / "new.sqlite"
    open_store(old, NOTES).close()
    with pytest.raises(OSError, match="disk full"), removed_on_error([old, new]):
        conn = open_store(new, NOTES)  # open: its -wal and -shm beside it
        assert new.exists() and (tmp_path / "new.sqlite-wal").exists()
        raise OSError("disk full")
    conn.close()
    assert old.exists()
    assert not any(p.name.startswith("new.sqlite") for p in tmp_path.iterdir())


def test_an_older_version_with_migrations_is_brought_up_to_date_in_one_go(tmp_path: Path
                                                                          ) -> None:
    path = tmp_path / "n.sqlite"
    v1 = StoreKind(kind="notes", name="notes", noun="notes store", table="notes",
                   schema="CREATE TABLE IF NOT EXISTS notes (text TEXT);", version=1,
                   hint="pass a new file")
    conn = open_store(path, v1)
    conn.execute("INSERT INTO notes VALUES ('old')")
    conn.close()
    migrated = StoreKind(
        kind="notes", name="notes", noun="notes store", table="notes",
        schema="CREATE TABLE IF NOT EXISTS notes (text TEXT, n INTEGER NOT NULL DEFAULT 0);",
        version=3, hint="pass a new file",
        migrations={1: ("ALTER TABLE notes ADD COLUMN n INTEGER NOT NULL DEFAULT 0",),
                    2: ("UPDATE notes SET n = 7",)})
    conn = open_store(path, migrated)
    assert read_meta(conn, "schema_version") == "3"
    assert conn.execute("SELECT text, n FROM notes").fetchall() == [("old", 7)]
    conn.close()
    # a chain with a gap is no way up: refused as before, and the file left alone
    gap = StoreKind(kind="notes", name="notes", noun="notes store", table="notes",
                    schema="", version=5, hint="pass a new file", migrations={4: ("x",)})
    with pytest.raises(ConfigError, match="has notes schema 3; this slmbench reads 5"):
        open_store(path, gap)


def test_a_failing_migration_leaves_the_file_as_it_was(tmp_path: Path) -> None:
    path = tmp_path / "n.sqlite"
    open_store(path, NOTES).close()
    broken = StoreKind(kind="notes", name="notes", noun="notes store", table="notes",
                       schema=NOTES.schema, version=4, hint="pass a new file",
                       migrations={3: ("ALTER TABLE notes ADD COLUMN n INTEGER",
                                       "SELECT * FROM no_such_table")})
    with pytest.raises(ConfigError):
        open_store(path, broken)
    conn = open_store(path, NOTES)  # still version 3, without the half-added column
    assert [r[1] for r in conn.execute("PRAGMA table_info(notes)")] == ["text"]
