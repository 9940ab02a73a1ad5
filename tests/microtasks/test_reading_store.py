"""The readings store: resume after an interruption, share between commands, never go stale."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from slmbench.agents.store import RunStore
from slmbench.core.errors import ConfigError
from slmbench.core.jsonl import write_jsonl_gz
from slmbench.microtasks import tasks
from slmbench.microtasks import tasks as registry
from slmbench.microtasks.datasets.records import ApprovalItem
from slmbench.microtasks.diagnostics.diagnose import run_diagnose
from slmbench.microtasks.matrix import run_matrix
from slmbench.microtasks.reader import cached_read
from slmbench.microtasks.readout import NO_LOGPROBS_NOTE, RawReading, read_item
from slmbench.microtasks.spec import MicroTask
from slmbench.microtasks.store import (
    ReadingStore,
    StoredReading,
    StoreError,
    read_export,
)
from slmbench.models.records import CandidateScore, Completion, Message
from slmbench.models.scripted import Script, ScriptedModel

APPROVAL = registry.get("approval")
RANKING = registry.get("ranking")

SPEC = "scripted:careful"
ITEM = ApprovalItem(id="a1", split="eval", provenance=(), command="rm -rf build", label="deny",
                    rule="D1", origin="test")
LOGPROBS = {"*": -3.0, "deny": -0.5, "Deny": -1.5, "approve": -1.0, "1": -0.3}


class Interrupted(Exception):
    """Stands in for Ctrl-C / a killed process in the middle of a run."""


class CountingModel:
    """A scripted model that counts its calls and can fail on the (k+1)-th item it reads."""

    supports_native_tools = False
    supports_logprobs = True

    def __init__(self, fail_after: int | None = None) -> None:
        # deny destructive commands, approve the rest: replies differ per item
        self._inner = ScriptedModel(
            lambda msgs: "deny" if "rm " in msgs[-1].content or "dd " in msgs[-1].content
            else "Approve.", spec=SPEC)
        self._lp = ScriptedModel(Script(logprobs=LOGPROBS), spec=SPEC)
        self.spec = SPEC
        self.fail_after = fail_after
        self.generated = 0
        self.scored = 0

    def score(self, messages: Sequence[Message | dict[str, Any]],
              candidates: Sequence[str]) -> list[CandidateScore]:
        if self.fail_after is not None and self.scored >= self.fail_after:
            raise Interrupted
        self.scored += 1
        return self._lp.score(messages, candidates)

    def generate(self, messages: Sequence[Message | dict[str, Any]], **kw: Any) -> Completion:
        self.generated += 1
        return self._inner.generate(messages, **kw)

    def close(self) -> None:
        pass


def _matrix(built: Path, model: CountingModel, store: ReadingStore | None):
    return run_matrix([SPEC], [APPROVAL, RANKING], ["p0", "p1"], source=built,
                      loader=lambda _spec: model, store=store)


def test_an_interrupted_matrix_keeps_its_readings_and_the_rerun_reads_only_the_rest(
        built: Path, tmp_path: Path) -> None:
    whole = _matrix(built, CountingModel(), None)
    total = len(whole.readings)
    k = total // 2
    assert 0 < k < total
    path = tmp_path / "readings.sqlite"
    with ReadingStore(path) as store:
        with pytest.raises(Interrupted):
            _matrix(built, CountingModel(fail_after=k), store)
        with ReadingStore(path) as other:  # committed, visible to another connection at once
            assert other.count() == k
        again = CountingModel()
        resumed = _matrix(built, again, store)
    assert (again.scored, again.generated) == (total - k, total - k)
    assert resumed.read_counts.from_store == k and resumed.read_counts.read_now == total - k
    assert resumed.cells == whole.cells
    assert resumed.readings == whole.readings


def test_a_fully_stored_run_loads_no_model(built: Path, tmp_path: Path) -> None:
    with ReadingStore(tmp_path / "r.sqlite") as store:
        first = _matrix(built, CountingModel(), store)

        def no_loading(spec: str) -> CountingModel:
            raise AssertionError(f"{spec} was loaded although every reading is stored")

        second = run_matrix([SPEC], [APPROVAL, RANKING], ["p0", "p1"], source=built,
                            loader=no_loading, store=store)
    assert second.read_counts.read_now == 0
    assert second.read_counts.from_store == len(first.readings)
    assert second.cells == first.cells


def test_cached_read_equals_read_item_and_asks_the_model_once(tmp_path: Path) -> None:
    model = CountingModel()
    with ReadingStore(tmp_path / "r.sqlite") as store:
        first = cached_read(store, model, APPROVAL, "p0", ITEM)
        second = cached_read(store, model, APPROVAL, "p0", ITEM)
    assert first == second == read_item(CountingModel(), APPROVAL, "p0", ITEM)
    assert model.generated == 1 and model.scored == 1
    assert cached_read(None, model, APPROVAL, "p0", ITEM) == first
    assert model.generated == 2  # no store: always read


def test_an_edited_prompt_or_item_is_a_miss(tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    model = CountingModel()
    with ReadingStore(tmp_path / "r.sqlite") as store:
        cached_read(store, model, APPROVAL, "p0", ITEM)
        assert store.get(SPEC, APPROVAL, "p0", ITEM) is not None
        edited_item = ITEM.model_copy(update={"command": "rm -rf dist"})  # same id
        assert store.get(SPEC, APPROVAL, "p0", edited_item) is None
        assert store.get(SPEC, APPROVAL, "p1", ITEM) is None
        assert store.get("scripted:other", APPROVAL, "p0", ITEM) is None

        original = tasks.get("approval").prompt_set()
        p0 = original.prompts["p0"]
        edited = original.model_copy(update={"prompts": {
            **original.prompts, "p0": p0.model_copy(update={"user": p0.user + " Be brief."})}})
        monkeypatch.setattr(MicroTask, "prompt_set", lambda self: edited)
        assert store.get(SPEC, APPROVAL, "p0", ITEM) is None
        cached_read(store, model, APPROVAL, "p0", ITEM)
        assert model.generated == 2  # the edited prompt was read anew
        assert store.count() == 2


def test_derived_fields_are_rebuilt_from_the_raw_outputs_on_load(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with ReadingStore(tmp_path / "r.sqlite") as store:
        # candidates are approve, Approve, deny, Deny
        store.put(SPEC, APPROVAL, "p0", ITEM,
                  RawReading(candidate_logprobs=[-2.0, -0.1, -1.0, -1.0], reply="Denied: no."))
        got = store.get(SPEC, APPROVAL, "p0", ITEM)
        assert got is not None
        assert got.logprob_ranking == ["approve", "deny"]  # "Approve" counts for approve
        assert got.generation_ranking == ["deny"]  # the parser's alias "denied"

        monkeypatch.setattr(MicroTask, "parse_reply", lambda self, text, options: [])
        reparsed = store.get(SPEC, APPROVAL, "p0", ITEM)
        assert reparsed is not None and reparsed.format_failure  # today's parser decides

        store.put(SPEC, APPROVAL, "p1", ITEM,
                  RawReading(candidate_logprobs=None, reply="deny", note=NO_LOGPROBS_NOTE))
        no_lp = store.get(SPEC, APPROVAL, "p1", ITEM)
        assert no_lp is not None and no_lp.logprob_ranking is None
        assert no_lp.note == NO_LOGPROBS_NOTE


def test_time_and_tokens_are_summed_per_model_and_old_readings_count_apart(
        tmp_path: Path) -> None:
    model = CountingModel()
    with ReadingStore(tmp_path / "r.sqlite") as store:
        made = cached_read(store, model, APPROVAL, "p0", ITEM)
        raw = store.rows()[0]["raw"]
        # generate's prompt + reply tokens (the scripted model's estimate) and one token per
        # scored candidate form (approve, Approve, deny, Deny)
        assert raw["tokens"] > 4 and made is not None
        # a reading stored before tokens were recorded (no "tokens" key in its raw JSON)
        store.put(SPEC, APPROVAL, "p1", ITEM,
                  RawReading(candidate_logprobs=None, reply="deny", note=NO_LOGPROBS_NOTE,
                             seconds=2.0))
        store._conn.execute("UPDATE readings SET raw = json_remove(raw, '$.tokens')"
                            " WHERE prompt_id = 'p1'")
        assert store.tokens(SPEC) == (raw["tokens"], 1)
        assert store.seconds(SPEC) == pytest.approx(raw["seconds"] + 2.0)
        assert store.tokens("scripted:other") == (0, 0)


def test_diagnose_reuses_the_p0_readings_of_an_eligibility_store(built: Path,
                                                                  tmp_path: Path) -> None:
    with ReadingStore(tmp_path / "r.sqlite") as store:
        elig = run_matrix([SPEC], [APPROVAL], ["p0"], source=built,
                          loader=lambda _spec: CountingModel(), store=store)
        model = CountingModel()
        report = run_diagnose([SPEC], [APPROVAL], limit=None, fit_limit=None, source=built,
                              loader=lambda _spec: model, store=store)
    n_eval = len(elig.readings)
    n_fit = report.cells[0].n_fit
    assert report.read_counts.from_store == n_eval
    assert report.read_counts.read_now == n_fit == model.generated
    assert report.readings[n_fit:] == elig.readings  # the eval readings, as eligibility made


def test_a_file_that_is_not_a_readings_store_is_a_clear_error(tmp_path: Path) -> None:
    text = tmp_path / "notes.txt"
    text.write_text("these are my notes, not a database\n" * 100)
    with pytest.raises(StoreError, match="is not a readings store") as err:
        ReadingStore(text)
    assert err.value.hint
    assert text.read_text().startswith("these are my notes")

    with RunStore(tmp_path / "run"):
        pass
    run_db = tmp_path / "run" / "run.sqlite"
    with pytest.raises(StoreError, match="SQLite file but not a readings store"):
        ReadingStore(run_db)
    tables = {r[0] for r in sqlite3.connect(run_db).execute(
        "SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert "readings" not in tables  # the other database was left alone

    with pytest.raises(StoreError, match="is a folder"):
        ReadingStore(tmp_path)


def test_another_schema_version_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "r.sqlite"
    ReadingStore(path).close()
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE meta SET value = '99' WHERE key = 'schema_version'")
    with pytest.raises(StoreError, match="readings schema 99"):
        ReadingStore(path)


@pytest.mark.parametrize("raw", ['{"reply": 3}', "not json",
                                 '{"candidate_logprobs": [-1.0], "reply": "deny"}'])
def test_a_corrupt_row_is_a_clear_error(tmp_path: Path, raw: str) -> None:
    path = tmp_path / "r.sqlite"
    with ReadingStore(path) as store:
        cached_read(store, CountingModel(), APPROVAL, "p0", ITEM)
        with sqlite3.connect(path) as conn:
            conn.execute("UPDATE readings SET raw = ?", (raw,))
        with pytest.raises(StoreError, match="a1 is corrupt") as err:
            store.get(SPEC, APPROVAL, "p0", ITEM)
    assert "delete the file" in err.value.hint


# -- carrying readings between stores: export, import, merge -----------------------------------

def _carried(item_id: str, reply: str = "deny") -> StoredReading:
    raw = RawReading(candidate_logprobs=[-0.5, -1.0], reply=reply, seconds=0.2)
    return StoredReading(SPEC, "approval", "p0", item_id, "d" * 64,
                         json.dumps(raw.model_dump(mode="json"), sort_keys=True))


def test_readings_export_then_import_into_a_new_store_round_trips(tmp_path: Path) -> None:
    rows = [_carried("a1"), _carried("a2", "approve")]
    here_path, folder = tmp_path / "here.sqlite", tmp_path / "other-machine"
    assert ReadingStore.merge(here_path, [(folder, rows)]) == 2
    assert ReadingStore.merge(here_path, [(folder, rows)]) == 0  # new keys only
    with ReadingStore(here_path) as here:
        assert here.export(tmp_path / "exports" / "readings.jsonl.gz") == 2
        stored = here.carried()
    back = read_export(tmp_path / "exports" / "readings.jsonl.gz", "hint")
    assert back == stored == rows
    assert ReadingStore.merge(tmp_path / "there.sqlite", [(tmp_path / "exports", back)]) == 2
    with ReadingStore(tmp_path / "there.sqlite") as there, ReadingStore(here_path) as here:
        assert there.rows() == here.rows()


def test_a_bad_readings_export_names_its_line(tmp_path: Path) -> None:
    write_jsonl_gz(tmp_path / "r.jsonl.gz", ['{"model": "m", "raw": {}}'])
    with pytest.raises(ConfigError, match="line 1 is not a reading"):
        read_export(tmp_path / "r.jsonl.gz", "hint")


def test_merging_readings_skips_stored_ones_and_refuses_other_raw_outputs(
        tmp_path: Path) -> None:
    path, folder = tmp_path / "readings.sqlite", tmp_path / "other-machine"
    rows = [_carried("a1"), _carried("a2")]
    # a dry run counts what is new and writes nothing: not even a store
    assert ReadingStore.merge(path, [(folder, rows)], dry_run=True) == 2 and not path.exists()
    assert ReadingStore.merge(path, [(folder, rows[:1])]) == 1
    assert ReadingStore.merge(path, [(folder, rows)]) == 1  # the one it lacked
    with pytest.raises(ConfigError, match=r"reading scripted:careful · approval · p0 · a1 is "
                       r"stored in .*readings.sqlite and in .*other-machine with different"):
        ReadingStore.merge(path, [(folder, [_carried("a4"), _carried("a1", "approve")])])
    with pytest.raises(ConfigError, match="with different content"):
        ReadingStore.merge(tmp_path / "new.sqlite", [(tmp_path / "a", [_carried("a3")]),
                                                     (tmp_path / "b", [_carried("a3", "approve")])])
    assert not (tmp_path / "new.sqlite").exists()
    with ReadingStore(path) as store:
        assert store.carried() == rows  # a refused merge writes nothing, not even a4
