"""The run store keeps every finished trial exactly once and survives reopening."""

from __future__ import annotations

import sqlite3
import threading

import pytest

from slmbench.agents.records import Outcome, Trial, TrialKey
from slmbench.agents.store import (
    DB_NAME,
    SCHEMA_VERSION,
    RunStore,
    carried,
    export_trials,
    read_trials,
)
from slmbench.core.errors import ConfigError
from slmbench.core.jsonl import write_jsonl_gz


def _trial(task: str = "IR-1", outcome: Outcome = Outcome.SUCCESS) -> Trial:
    return Trial(model="scripted:echo", task_id=task, suite="capability", outcome=outcome,
                 final_answer="42")


def test_put_is_idempotent_and_round_trips(tmp_path):
    store = RunStore(tmp_path)
    key = TrialKey(model="scripted:echo", task="IR-1", temperature=0.7, seed=5, repeat=1)
    assert store.put(key, "success", _trial()) is True
    assert store.put(key, "wrong_answer", _trial(outcome=Outcome.WRONG_ANSWER)) is False
    assert store.count() == 1
    got = store.get(key)
    assert got is not None
    assert got.outcome == "success"  # the first write wins; the second wrote nothing
    assert Trial.model_validate(got.record).final_answer == "42"


def test_temperature_rounding_makes_keys_equal(tmp_path):
    store = RunStore(tmp_path)
    store.put(TrialKey(model="m", task="t", temperature=0.1 + 0.2), "success", {"x": 1})
    assert store.has(TrialKey(model="m", task="t", temperature=0.3))


def test_reopen_keeps_trials_and_meta(tmp_path):
    with RunStore(tmp_path) as store:
        store.put(TrialKey(model="m", task="a"), "success", {"a": 1})
        store.set_meta("config", {"temperatures": [0.3, 0.7]})
    with RunStore(tmp_path) as store:
        assert {k.task for k in store.keys()} == {"a"}
        assert store.get_meta("config") == {"temperatures": [0.3, 0.7]}
        assert store.get_meta("schema_version") == SCHEMA_VERSION


def test_concurrent_writers_never_duplicate(tmp_path):
    store = RunStore(tmp_path)
    keys = [TrialKey(model="m", task=f"t{i % 10}", repeat=i // 10) for i in range(50)]

    def write() -> None:
        for k in keys:
            store.put(k, "success", {"k": k.task})

    threads = [threading.Thread(target=write) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert store.count() == 50
    assert store.keys() == set(keys)


def test_export_jsonl_writes_every_trial(tmp_path):
    store = RunStore(tmp_path)
    for i in range(3):
        store.put(TrialKey(model="m", task=f"t{i}"), "success", _trial(task=f"t{i}"))
    out = tmp_path / "trials.jsonl"
    assert store.export_jsonl(out) == 3
    assert len(out.read_text().splitlines()) == 3


def test_cache_first_write_wins(tmp_path):
    store = RunStore(tmp_path)
    store.cache_put("k", {"text": "a"})
    store.cache_put("k", {"text": "b"})
    assert store.cache_get("k") == {"text": "a"}
    assert store.cache_get("missing") is None


def test_newer_schema_is_refused(tmp_path):
    RunStore(tmp_path).set_meta("schema_version", SCHEMA_VERSION + 1)
    with pytest.raises(ConfigError, match="schema"):
        RunStore(tmp_path)


def test_not_a_database_is_a_clear_error(tmp_path):
    (tmp_path / "run.sqlite").write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(ConfigError, match="not a slmbench run store"):
        RunStore(tmp_path)


def test_wal_mode(tmp_path):
    RunStore(tmp_path)
    conn = sqlite3.connect(tmp_path / "run.sqlite")
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


# -- carrying trials between stores: export, import, merge -----------------------------------

def _trials() -> list[Trial]:
    return [_trial(task=f"IR-{i}") for i in range(1, 4)]


def _rows(trials: list[Trial]) -> list[tuple[TrialKey, str, Trial]]:
    return [(t.key, t.outcome.value, t) for t in trials]


def test_trials_export_then_import_into_a_new_store_round_trips(tmp_path):
    with RunStore(tmp_path / "here") as store:
        assert store.put_many(_rows(_trials())) == 3
        assert store.put_many(_rows(_trials())) == 0  # new keys only, as put
        exported = [Trial.model_validate(t.record) for t in store.trials()]
    dump = tmp_path / "exports" / "trials.jsonl.gz"
    assert export_trials(exported, dump) == 3
    back = read_trials(dump, "hint")
    assert back == exported
    with RunStore(tmp_path / "there") as there, RunStore(tmp_path / "here") as here:
        there.put_many(_rows(back))
        assert [(t.key, t.outcome, t.record) for t in there.trials()] == [
            (t.key, t.outcome, t.record) for t in here.trials()]


def test_a_bad_trial_export_names_its_line(tmp_path):
    write_jsonl_gz(tmp_path / "trials.jsonl.gz", ['{"model": "m"}'])
    with pytest.raises(ConfigError, match="line 1 is not a Trial") as exc:
        read_trials(tmp_path / "trials.jsonl.gz", "pass an export")
    assert exc.value.hint == "pass an export"


def test_merge_writes_what_a_store_lacks_and_refuses_a_key_with_other_content(tmp_path):
    trials, folder, run_dir = _trials(), tmp_path / "other-machine", tmp_path / "run"
    # a dry run counts what is new and writes nothing: not even a store
    assert RunStore.merge(run_dir, [(folder, carried(trials))], dry_run=True) == 3
    assert not (run_dir / DB_NAME).exists()
    with RunStore(run_dir) as store:
        store.put_many(_rows(trials[:1]))
        # stored before `harness` existed: the same trial as carried, not another content
        record = trials[1].model_dump(mode="json", exclude={"harness"})
        store.put_many([(trials[1].key, trials[1].outcome.value, record)])
    assert RunStore.merge(run_dir, [(folder, carried(trials))]) == 1  # the one it lacked
    assert RunStore.merge(run_dir, [(folder, carried(trials))]) == 0
    with RunStore(run_dir) as store:
        assert [Trial.model_validate(t.record) for t in store.trials()] == trials
    other = trials[0].model_copy(update={"final_answer": "41"})
    with pytest.raises(ConfigError, match=r"trial scripted:echo IR-1 base T=0 repeat 0 is "
                       r"stored in .*run and in .*other-machine with different content"):
        RunStore.merge(run_dir, [(folder, carried([_trial(task="IR-9"), other]))])
    # two folders holding one key with two contents are refused as well, before any store
    with pytest.raises(ConfigError, match="with different content") as exc:
        RunStore.merge(tmp_path / "new", [(tmp_path / "a", carried([trials[0]])),
                                          (tmp_path / "b", carried([other]))])
    assert "fresh --out" in (exc.value.hint or "")
    assert not (tmp_path / "new" / DB_NAME).exists()
    with RunStore(run_dir) as store:
        assert store.count() == 3  # a refused merge writes nothing, not even IR-9


# -- the task's instance in the key (issue #39): old stores and exports are instance 0 --------

_SCHEMA_1 = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
INSERT INTO meta VALUES ('kind', 'slmbench-run'), ('schema_version', '1');
CREATE TABLE trials (
    model TEXT NOT NULL, task TEXT NOT NULL, variant TEXT NOT NULL, temperature REAL NOT NULL,
    seed INTEGER NOT NULL, repeat INTEGER NOT NULL, outcome TEXT NOT NULL,
    record TEXT NOT NULL, created_at REAL NOT NULL,
    PRIMARY KEY (model, task, variant, temperature, seed, repeat));
CREATE INDEX trials_by_model ON trials (model, task);
CREATE TABLE cache (key TEXT PRIMARY KEY, value TEXT NOT NULL, created_at REAL NOT NULL);
"""


def _old_record(task: str) -> str:
    """A trial record as written before ``instance`` existed."""
    return _trial(task=task).model_dump_json(exclude={"instance"})


def test_a_schema_1_store_opens_migrated_and_its_trials_are_instance_0(tmp_path):
    with sqlite3.connect(tmp_path / DB_NAME) as conn:
        conn.executescript(_SCHEMA_1)
        conn.executemany("INSERT INTO trials VALUES ('scripted:echo', ?, 'base', 0.7, ?, 1,"
                         " 'success', ?, 1.0)",
                         [(task, 5, _old_record(task)) for task in ("IR-1", "IR-2")])
    old = TrialKey(model="scripted:echo", task="IR-1", temperature=0.7, seed=5, repeat=1)
    with RunStore(tmp_path) as store:
        assert store.get_meta("schema_version") == SCHEMA_VERSION == 3
        assert store.count() == 2 and store.has(old) and old.instance == 0
        assert {(k.instance, k.level) for k in store.keys()} == {(0, "base")}
        got = store.get(old)
        assert got is not None and got.key == old
        assert Trial.model_validate(got.record).instance == 0
        # the same key at another instance is another trial
        drawn = old.model_copy(update={"instance": 3})
        assert store.put(drawn, "success", _trial()) and store.count() == 3
        assert store.put(old, "success", _trial()) is False
    with RunStore(tmp_path) as store:  # opened again: already migrated, nothing lost
        assert store.count() == 3 and store.has(drawn)
    index = sqlite3.connect(tmp_path / DB_NAME).execute(
        "SELECT name FROM sqlite_master WHERE type = 'index' AND name = 'trials_by_model'")
    assert index.fetchone() is not None


def test_an_old_export_imports_as_instance_0(tmp_path):
    dump = tmp_path / "trials.jsonl.gz"
    write_jsonl_gz(dump, [_old_record("IR-1"), _old_record("IR-2")])
    back = read_trials(dump, "hint")
    assert [t.instance for t in back] == [0, 0]
    assert all(t.key.instance == 0 for t in back)
    run_dir = tmp_path / "run"
    assert RunStore.merge(run_dir, [(tmp_path, carried(back))]) == 2
    with RunStore(run_dir) as store:
        assert {k.instance for k in store.keys()} == {0}
    # the stored-trial shape (key, outcome, record) of an old export: its key is instance 0 too
    from slmbench.agents.store import StoredTrial

    row = StoredTrial.model_validate_json(
        '{"key": {"model": "m", "task": "IR-1", "seed": 5}, "outcome": "success",'
        ' "record": {}, "created_at": 1.0}')
    assert row.key.instance == 0


def test_instances_name_a_trial_apart(tmp_path):
    from slmbench.agents.store import trial_name

    key = TrialKey(model="m", task="IR-1", temperature=0.7, repeat=1)
    assert trial_name(key) == "trial m IR-1 base T=0.7 repeat 1"
    assert trial_name(key.model_copy(update={"instance": 4})).endswith("repeat 1 instance 4")
    assert key.as_tuple()[-2:] == (0, "base") and len(key.as_tuple()) == 8
    assert trial_name(key.model_copy(update={"level": "2"})).endswith("repeat 1 level 2")


_SCHEMA_2 = _SCHEMA_1.replace("'schema_version', '1'", "'schema_version', '2'").replace(
    "repeat INTEGER NOT NULL, outcome", "repeat INTEGER NOT NULL,"
    " instance INTEGER NOT NULL DEFAULT 0, outcome").replace(
    "PRIMARY KEY (model, task, variant, temperature, seed, repeat)",
    "PRIMARY KEY (model, task, variant, temperature, seed, repeat, instance)")


def test_a_schema_2_store_opens_migrated_with_its_trials_at_the_base_level(tmp_path):
    with sqlite3.connect(tmp_path / DB_NAME) as conn:
        conn.executescript(_SCHEMA_2)
        conn.executemany("INSERT INTO trials VALUES ('scripted:echo', 'IR-1', 'base', 0.7, 5, 1,"
                         " ?, 'success', ?, 1.0)",
                         [(inst, _trial(task="IR-1").model_dump_json(exclude={"level"}))
                          for inst in (0, 3)])
    with RunStore(tmp_path) as store:
        assert store.get_meta("schema_version") == 3
        assert {(k.instance, k.level) for k in store.keys()} == {(0, "base"), (3, "base")}
        base = TrialKey(model="scripted:echo", task="IR-1", temperature=0.7, seed=5, repeat=1,
                        instance=3)
        got = store.get(base)
        assert got is not None and Trial.model_validate(got.record).level == "base"
        # the same key at a generated level is another trial
        assert store.put(base.model_copy(update={"level": "2"}), "success", _trial())
        assert store.put(base, "success", _trial()) is False and store.count() == 3
