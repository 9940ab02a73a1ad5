"""The one read loop of Part B: reading blocks of items model by model (which items:
:mod:`~slmbench.microtasks.samples`).

Every command that reads a model's decisions on items (``eligibility``, ``diagnose``,
``quantize``, ``probe``, ``cascade``, a study's Part B) goes through :class:`Session`: per
model spec, a :class:`~slmbench.microtasks.reader.Reader` reads each :class:`Block` (task,
prompt, items) through the optional readings store, loading the model only for a reading the
store does not hold, and closing it after. The probe's longer histories come in as a block's
``messages``; the cascade's shortlists as items of their own (``<item>|<kept options>``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Literal

from slmbench.core.errors import BackendError, ConfigError, SlmbenchError
from slmbench.microtasks.datasets.records import Item
from slmbench.microtasks.reader import Reader
from slmbench.microtasks.readout import ItemReading
from slmbench.microtasks.spec import MicroTask
from slmbench.microtasks.store import ReadCounts, ReadingStore
from slmbench.models.base import Model
from slmbench.models.factory import load_model
from slmbench.models.llamaserver import default_in_flight
from slmbench.models.placement import TIMEOUT_S, RayModelOptions
from slmbench.models.ray import RayCluster
from slmbench.models.records import Message

Progress = Callable[[str], None]
Loader = Callable[[str], Model]


# --- reading ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class Block:
    """Items of one task read under one prompt, in order; ``until`` (given each reading in
    turn) ends the block early when it returns True (reading until decided). ``messages``:
    each item's prompt when it is not the one ``prompt_id`` renders (the context probe's
    history); the readings are stored under ``prompt_id``, keyed by the prompt's digest."""

    task: MicroTask
    prompt_id: str
    items: Sequence[Item]
    until: Callable[[ItemReading], bool] | None = None
    messages: Callable[[Item], list[Message]] | None = None


@dataclass(frozen=True)
class BlockReading:
    """A block as read: the items read (in order) and their readings."""

    block: Block
    items: list[Item]
    readings: list[ItemReading]


@dataclass
class ModelReadings:
    """Every block one model spec read, and the model if ``keep`` asked to keep it open."""

    spec: str
    blocks: list[BlockReading]
    kept: Model | None = None


@dataclass
class Session:
    """Reads blocks of items for one model spec after another, through one optional store.

    ``counts`` says where the readings came from; ``notes`` collects each reading's note
    (e.g. no log-probabilities), every item skipped as unreadable and every cause of a
    backend error, once each. A server model gets ``in_flight(spec)`` readings under way at
    once (default: a ``llamaserver:``'s slots, 4 for other servers, 1 in process). With
    ``ray``, each model runs as its replicas on that Ray cluster (:func:`read_on`), reading a
    block's missing items on all of them at once. Either way the readings, their order and
    the store are those of a local run one at a time, and this thread alone writes the store.
    """

    store: ReadingStore | None = None
    loader: Loader | None = None  # None: slmbench.models.factory.load_model
    progress: Progress | None = None
    counts: ReadCounts = field(default_factory=ReadCounts)
    notes: list[str] = field(default_factory=list)
    in_flight: Callable[[str], int] = default_in_flight
    ray: RayCluster | None = None

    def _loader(self) -> Loader:
        return self.loader or load_model

    def _note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)

    def read(self, spec: str, blocks: Sequence[Block], *, skip_unreadable: bool = False,
             loader: Loader | None = None, keep: Callable[[Model], bool] | None = None,
             on_load: Callable[[Model], None] | None = None) -> ModelReadings:
        """Read every block with ``spec`` (loaded by ``loader``, else the session's: on its
        Ray cluster, if it has one).

        ``skip_unreadable``: an item the loaded model refuses with a ``ConfigError`` (e.g. its
        prompt does not fit the context) is skipped with a note; a block whose every item is
        skipped is an error. An item whose reading the backend gave up on (on Ray: after
        the cluster's bounded attempts) is left out of the block and counted
        (``counts.backend_errors``), its cause noted; a block with no reading left is an
        error. Store and loading errors always stop the run. The model is closed at the end
        unless ``keep(model)`` says otherwise (then it is returned, open). ``on_load`` is
        given the model when it is loaded, before its first reading (never, when the store
        holds every reading).
        """
        reader = Reader(spec, loader or self._loader(), self.store,
                        workers=self.in_flight(spec), ray=self.ray if loader is None else None,
                        on_load=on_load)
        kept: Model | None = None
        try:
            got = [self._block(reader, b, skip_unreadable) for b in blocks]
            if keep is not None and reader.loaded and keep(reader.model()):
                kept = reader.model()
        finally:
            if kept is None:
                reader.close()
            self.counts = self.counts.add(reader.counts)
        return ModelReadings(spec=spec, blocks=got, kept=kept)

    def _block(self, reader: Reader, block: Block, skip_unreadable: bool) -> BlockReading:
        if self.progress:
            splits = "/".join(sorted({i.split for i in block.items}))
            self.progress(f"{reader.spec} · {block.task.name} · {block.prompt_id}: "
                          f"{len(block.items)} {splits} items")
        items: list[Item] = []
        readings: list[ItemReading] = []
        first_miss = None
        for item, reading in reader.read_many(block.task, block.prompt_id, block.items,
                                              block.messages):  # type: ignore[arg-type]
            if isinstance(reading, BackendError):
                first_miss = first_miss or f"{item.id}: {reading}"
                self._note(f"{reader.spec}: backend error, in no rate: {reading}")
                continue
            if isinstance(reading, SlmbenchError):
                if not skip_unreadable:
                    raise reading
                first_miss = first_miss or f"{reader.spec}: {item.id} skipped: {reading}"
                self._note(f"{reader.spec}: {item.id} skipped: {reading}")
                continue
            items.append(item)
            readings.append(reading)
            if reading.note:
                self._note(f"{reader.spec}: {reading.note}")
            if block.until is not None and block.until(reading):
                break
        if block.items and not items:
            raise ConfigError(f"no {block.task.name} item of the block was read; the first: "
                              f"{first_miss}", "fix the cause above")
        return BlockReading(block=block, items=items, readings=readings)


#: how often one reading is tried on Ray before it is stored as a backend error
READ_ATTEMPTS = 3


@contextmanager
def read_on(executor: Literal["local", "ray"], specs: Sequence[str], address: str | None = None,
            options: Mapping[str, RayModelOptions] | None = None, *, replicas: int = 1,
            timeout_s: float | None = TIMEOUT_S, attempts: int = READ_ATTEMPTS,
            loader: Loader = load_model, check: bool = True) -> Iterator[RayCluster | None]:
    """Where a Part B run reads ``specs``: None (this process), or a Ray cluster for a
    :class:`Session`'s ``ray``, closed when the block ends.

    On Ray, a model's placement is ``options[spec]``, else ``replicas`` replicas whose calls
    time out after ``timeout_s``; each replica serves one reading at a time and (``check``)
    runs the readiness check on its node, and a reading is tried ``attempts`` times (the
    ``--retry-attempts`` of the Part B commands) before it is a backend error. Raises
    ConfigError, before anything is read, when the cluster can never hold a model's
    replicas. ``loader`` loads a model in its actor.
    """
    if executor == "local":
        yield None
        return
    placed = {s: (options or {}).get(s) or RayModelOptions(replicas=replicas, timeout_s=timeout_s)
              for s in specs}
    with RayCluster(address, placed, loader=loader, attempts=attempts, check=check) as cluster:
        cluster.check(specs)
        yield cluster
