"""Part B readings of a server model made several at once: the same readings, one writer."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from slmbench.microtasks import tasks
from slmbench.microtasks import tasks as registry
from slmbench.microtasks.reader import map_in_order
from slmbench.microtasks.session import Block, Session
from slmbench.microtasks.store import ReadingStore
from slmbench.models.llamaserver import default_in_flight
from slmbench.models.records import CandidateScore, Completion, Message, as_messages
from slmbench.models.scripted import Script, ScriptedModel

APPROVAL = registry.get("approval")

SPEC = "openai:fake@http://127.0.0.1:9/v1"  # a server spec: read several at once by default
LOGPROBS = {"*": -3.0, "deny": -0.5, "approve": -1.0}


class Boom(Exception):
    """The model failing mid-run (a kill, in effect)."""


class ServerLike:
    """A thread-safe scripted model; the first ``overlap`` calls wait for each other (so they
    must be under way at once), and a call whose prompt holds ``fail_on`` raises."""

    supports_native_tools = False
    supports_logprobs = True

    def __init__(self, overlap: int = 1, fail_on: str | None = None) -> None:
        self._gen = ScriptedModel(lambda msgs: "deny" if "rm " in msgs[-1].content
                                  else "Approve.", spec=SPEC)
        self._lp = ScriptedModel(Script(logprobs=LOGPROBS), spec=SPEC)
        self.spec = SPEC
        self._lock = threading.Lock()
        self._barrier = threading.Barrier(overlap, timeout=10) if overlap > 1 else None
        self.fail_on = fail_on
        self.calls = 0

    def score(self, messages: Sequence[Message | dict[str, Any]],
              candidates: Sequence[str]) -> list[CandidateScore]:
        return self._lp.score(messages, candidates)

    def generate(self, messages: Sequence[Message | dict[str, Any]], **kw: Any) -> Completion:
        with self._lock:
            self.calls += 1
            n = self.calls
        if self._barrier is not None and n <= self._barrier.parties:
            self._barrier.wait()  # BrokenBarrierError if the calls come one at a time
        if self.fail_on is not None and self.fail_on in as_messages(messages)[-1].content:
            raise Boom
        return self._gen.generate(messages, **kw)

    def close(self) -> None:
        pass


def _items(built: Path) -> list[Any]:
    return [i for i in tasks.get("approval").load_items(built) if i.split == "eval"]


def _rows(path: Path) -> list[tuple[str, str]]:
    with ReadingStore(path) as store:
        return sorted((r["item_id"], r["raw"]["reply"]) for r in store.rows())


def test_server_models_keep_several_readings_in_flight_by_default() -> None:
    assert default_in_flight("llamaserver:qwen?slots=3") == 3
    assert default_in_flight("llamaserver:qwen") == 8
    assert default_in_flight(SPEC) == 4
    assert default_in_flight("llamacpp:qwen") == 1
    assert default_in_flight("scripted:echo") == 1


def test_readings_made_four_at_once_equal_one_at_a_time_and_the_driver_alone_writes(
        built: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    items = _items(built)
    assert len(items) >= 4
    blocks = [Block(APPROVAL, p, items) for p in ("p0", "p1")]
    one = Session(ReadingStore(tmp_path / "one.sqlite"), lambda s: ServerLike(),
                  in_flight=lambda s: 1).read(SPEC, blocks)
    writers: set[str] = set()
    put = ReadingStore.put

    def recording_put(self: ReadingStore, *args: Any) -> bool:
        writers.add(threading.current_thread().name)
        return put(self, *args)

    monkeypatch.setattr(ReadingStore, "put", recording_put)
    model = ServerLike(overlap=4)  # the first four readings must be under way together
    session = Session(ReadingStore(tmp_path / "four.sqlite"), lambda s: model)
    four = session.read(SPEC, blocks)
    assert [b.readings for b in four.blocks] == [b.readings for b in one.blocks]
    assert writers == {threading.current_thread().name}
    assert _rows(tmp_path / "four.sqlite") == _rows(tmp_path / "one.sqlite")
    assert session.counts.read_now == 2 * len(items) == model.calls


def test_a_block_read_until_decided_stores_nothing_past_its_end(built: Path,
                                                                tmp_path: Path) -> None:
    items = _items(built)
    model = ServerLike()
    block = Block(APPROVAL, "p0", items, until=lambda reading: True)  # decided at once
    got = Session(ReadingStore(tmp_path / "r.sqlite"), lambda s: model,
                  in_flight=lambda s: 3).read(SPEC, [block])
    assert len(got.blocks[0].readings) == 1
    assert [r[0] for r in _rows(tmp_path / "r.sqlite")] == [items[0].id]
    assert model.calls <= 1 + 3  # at most the readings already under way


def test_a_run_failing_mid_way_keeps_the_readings_before_and_a_rerun_reads_the_rest(
        built: Path, tmp_path: Path) -> None:
    items = _items(built)
    k = len(items) // 2
    assert [i.command for i in items].count(items[k].command) == 1
    path = tmp_path / "r.sqlite"
    blocks = [Block(APPROVAL, "p0", items)]
    with pytest.raises(Boom):
        Session(ReadingStore(path), lambda s: ServerLike(fail_on=items[k].command)
                ).read(SPEC, blocks)
    with ReadingStore(path) as store:
        assert store.count() == k  # the readings before the failure, in order; none after
    again = ServerLike()
    session = Session(ReadingStore(path), lambda s: again)
    resumed = session.read(SPEC, blocks)
    assert again.calls == len(items) - k
    whole = Session(None, lambda s: ServerLike(), in_flight=lambda s: 1).read(SPEC, blocks)
    assert resumed.blocks[0].readings == whole.blocks[0].readings


def test_map_in_order_keeps_order_and_raises_where_the_failure_was() -> None:
    def square_or_fail(x: int) -> int:
        if x == 5:
            raise ValueError("five")
        return x * x

    got = []
    with pytest.raises(ValueError, match="five"):
        for value in map_in_order(square_or_fail, range(10), workers=3):
            got.append(value)
    assert got == [0, 1, 4, 9, 16]
    assert list(map_in_order(square_or_fail, range(5), workers=1)) == [0, 1, 4, 9, 16]
