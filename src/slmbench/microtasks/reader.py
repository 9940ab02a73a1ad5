"""Making readings: :class:`Reader` reads a block of items for one model spec through a readings
store (the model loaded on the first reading the store lacks, up to ``workers`` readings at once
in threads, or on the model's Ray replicas), and :func:`cached_read`, one reading through a
store. What is stored, and how, is :mod:`~slmbench.microtasks.store`'s."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Generator, Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TypeVar

from slmbench.core.errors import BackendError, ConfigError, SlmbenchError
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
from slmbench.microtasks.store import ReadCounts, ReadingStore
from slmbench.models.base import Model
from slmbench.models.ray import RayCluster, RayModel
from slmbench.models.records import Message


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
