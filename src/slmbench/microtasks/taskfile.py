"""A user's own micro-task, from a YAML file: :func:`load_task_file` makes its ``MicroTask``.

The file names the items (a JSONL path, relative to the file), the answer options (fixed
``options``, or a ``candidates`` field listing each item's own), the ``gold`` field, the
prompt with its three paraphrases, the metric and the baselines (BM25 over named fields,
regex rules, constant answers, the learned TF-IDF + logistic regression baseline). See
"A micro-task from files" in ``docs/microtasks.md`` and ``examples/my-tools.yaml``.

The task then runs through the same read loop, rule and ``recommend`` as the built-in
ones. Everything is checked on load (the file, then every item against it) and a problem
is one :class:`~slmbench.core.errors.ConfigError` line naming the place.
"""

from __future__ import annotations

import re
import string
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from slmbench.core.errors import ConfigError
from slmbench.core.yamlfile import load_yaml
from slmbench.microtasks.baselines import Baseline, Constant, always, bm25_scores, in_order
from slmbench.microtasks.datasets.records import Item, split_of
from slmbench.microtasks.prompts import PROMPT_IDS, PromptSet, PromptText
from slmbench.microtasks.spec import MicroTask

__all__ = ["FileItem", "TaskFile", "load_task_file"]

HINT = "see examples/my-tools.yaml and docs/microtasks.md (A micro-task from files)"


class FileItem(Item):
    """An item of a task file: ``id``, optional ``split`` (default: from the id's hash), and
    the fields the file names, kept as given."""

    model_config = ConfigDict(frozen=True, extra="allow")

    @model_validator(mode="before")
    @classmethod
    def _defaults(cls, data: Any) -> Any:
        if isinstance(data, dict) and "id" in data:
            data = {"provenance": (), **data}
            data.setdefault("split", split_of(str(data["id"])))
        return data

    def field(self, name: str) -> Any:
        return (self.model_extra or {}).get(name)


class _Strict(BaseModel):
    """Base of every part of a task file: an unknown key is an error, not ignored."""

    model_config = ConfigDict(extra="forbid")


class BM25Spec(_Strict):
    kind: Literal["bm25"]
    query: str  # the item field BM25 searches with
    over: list[str] = Field(default_factory=lambda: ["name", "description"])  # candidate keys


class RegexRule(_Strict):
    pattern: str
    answer: str


class RegexSpec(_Strict):
    kind: Literal["regex"]
    field: str
    rules: list[RegexRule] = Field(min_length=1)
    default: str


class ConstantSpec(_Strict):
    kind: Literal["constant"]
    answer: str | None = None  # None: the options in listed order


class LearnedSpec(_Strict):
    kind: Literal["learned"]
    field: str


AnyBaseline = BM25Spec | RegexSpec | ConstantSpec | LearnedSpec


class PromptSpec(_Strict):
    system: str
    user: str
    paraphrases: list[PromptText] = Field(min_length=3, max_length=3)


class TaskFile(_Strict):
    """The YAML of a user's micro-task."""

    name: str = Field(pattern=r"^[a-z][a-z0-9_-]*$")
    items: Path
    gold: str
    options: list[str] | None = None  # fixed answer options
    candidates: str | None = None  # or: the item field listing its own options
    allow_none: bool = True  # candidates: "none" is an answer too
    positive: str | None = None  # two fixed options: the class F1 and thresholds are about
    metric: Literal["accuracy", "f1"] = "accuracy"
    prompt: PromptSpec
    aliases: dict[str, str] = Field(default_factory=dict)
    max_tokens: int = Field(default=16, gt=0)
    baselines: list[AnyBaseline] = Field(min_length=1)

    @model_validator(mode="after")
    def _consistent(self) -> TaskFile:
        if (self.options is None) == (self.candidates is None):
            raise ValueError("give either options (fixed answers) or candidates (an item "
                             "field listing each item's answers), not both or neither")
        if self.options is not None and len(self.options) < 2:
            raise ValueError("options: at least two answers")
        binary = self.options is not None and len(self.options) == 2
        if binary and self.positive not in self.options:  # type: ignore[operator]
            raise ValueError(f"positive: name one of the options {self.options}")
        if self.metric == "f1" and not binary:
            raise ValueError("metric f1 needs two fixed options and a positive one")
        kinds = [b.kind for b in self.baselines]
        if sum(k in ("bm25", "regex") for k in kinds) > 1:
            raise ValueError("baselines: at most one bm25 or regex baseline (add constants "
                             "and the learned one beside it)")
        if "bm25" in kinds and self.candidates is None:
            raise ValueError("baselines: bm25 ranks candidates; it needs candidates")
        if "learned" in kinds and self.options is None:
            raise ValueError("baselines: the learned baseline needs fixed options")
        return self

    def prompt_set(self) -> PromptSet:
        texts = [PromptText(system=self.prompt.system, user=self.prompt.user),
                 *self.prompt.paraphrases]
        return PromptSet(options=self.options or [], aliases=self.aliases,
                         max_tokens=self.max_tokens,
                         prompts=dict(zip(PROMPT_IDS, texts, strict=True)))

    def placeholders(self) -> set[str]:
        return {f for t in self.prompt_set().prompts.values()
                for _, f, _, _ in string.Formatter().parse(t.user) if f}


def _candidate_names(spec: TaskFile, item: FileItem) -> list[str]:
    raw = item.field(spec.candidates or "") or []
    names = [str(c["name"]) if isinstance(c, dict) else str(c) for c in raw]
    return names + (["none"] if spec.allow_none else [])


def _candidate_text(spec: TaskFile, item: FileItem, over: Sequence[str]) -> list[str]:
    raw = item.field(spec.candidates or "") or []
    return [" ".join(str(c.get(k, "")) for k in over) if isinstance(c, dict) else str(c)
            for c in raw]


def _render_field(value: Any) -> str:
    """An item field as prompt text: a list of candidates one "- name: description" a line."""
    if isinstance(value, list):
        return "\n".join(f"- {c.get('name', '')}: {c.get('description', '')}".rstrip(": ")
                         if isinstance(c, dict) else f"- {c}" for c in value)
    return str(value)


def _task_baseline(spec: TaskFile, base: AnyBaseline | None
                   ) -> Callable[[Sequence[Item], Sequence[Item]], Baseline]:
    options = (lambda item: list(spec.options)) if spec.options else (  # type: ignore[arg-type]
        lambda item: _candidate_names(spec, item))

    def run(fit: Sequence[Item], items: Sequence[Item]) -> Baseline:
        rankings: dict[str, list[str]] = {}
        for item in items:
            assert isinstance(item, FileItem)
            allowed = options(item)
            if isinstance(base, BM25Spec):
                docs = _candidate_text(spec, item, base.over)
                scores = bm25_scores(str(item.field(base.query)), docs) if docs else np.zeros(0)
                ranked = [allowed[k] for k in np.argsort(-scores, kind="stable")]
                nothing = not docs or float(scores.max()) <= 0.0
                rest = [o for o in allowed if o not in ranked]
                rankings[item.id] = rest + ranked if nothing else ranked + rest
            elif isinstance(base, RegexSpec):
                text = str(item.field(base.field))
                hit = next((r.answer for r in base.rules if re.search(r.pattern, text)),
                           base.default)
                rankings[item.id] = [hit] + [o for o in allowed if o != hit]
            else:  # no bm25/regex declared: the first option
                rankings[item.id] = allowed
        return Baseline(name=base.kind if base else "first option", task=spec.name,
                        rankings=rankings)

    return run


def _check_items(spec: TaskFile, task: MicroTask, path: Path) -> None:
    items = task.load_items()
    if not items:
        raise ConfigError(f"{path} holds no items", HINT)
    needed = spec.placeholders() | {spec.gold} | ({spec.candidates} if spec.candidates else set())
    for k, item in enumerate(items, start=1):
        assert isinstance(item, FileItem)
        missing = sorted(f for f in needed if item.field(f) is None)
        if missing:
            raise ConfigError(f"{path}:{k} (item {item.id}) lacks the field(s) "
                              f"{', '.join(missing)}", HINT)
        allowed = task.options_for(item)
        if str(item.field(spec.gold)) not in allowed:
            raise ConfigError(f"{path}:{k} (item {item.id}): gold {item.field(spec.gold)!r} is "
                              f"not one of its answers {allowed}", HINT)
    splits = {i.split for i in items}
    if splits != {"fit", "eval"}:
        raise ConfigError(f"{path}: every item is in the {splits.pop()} split", "give some "
                          "items split: fit (baselines learn there) and some split: eval")


def load_task_file(path: Path) -> MicroTask:
    """The ``MicroTask`` a task file declares, checked with all its items (not registered)."""
    raw = load_yaml(path, hint=HINT)
    try:
        spec = TaskFile.model_validate(raw)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(x) for x in err["loc"]) or "(top level)"
        raise ConfigError(f"{path}: {where}: {err['msg'].removeprefix('Value error, ')}",
                          HINT) from None
    items_file = spec.items if spec.items.is_absolute() else path.parent / spec.items
    if not items_file.is_file():
        raise ConfigError(f"{path}: items: {items_file} does not exist", HINT)
    main = next((b for b in spec.baselines if isinstance(b, BM25Spec | RegexSpec)), None)
    constants: list[Constant] = [always(b.answer) if b.answer else in_order()
                                 for b in spec.baselines if isinstance(b, ConstantSpec)]
    learned = next((b for b in spec.baselines if isinstance(b, LearnedSpec)), None)
    binary = spec.options is not None and len(spec.options) == 2
    task = MicroTask(
        name=spec.name, item_type=FileItem, prompts=spec.prompt_set(),
        fields=lambda item: {f: _render_field(item.field(f))  # type: ignore[attr-defined]
                             for f in spec.placeholders()},
        metrics=(spec.metric,), shape="binary" if binary else "choice",
        positive=spec.positive if binary else None,
        options=None if spec.options else (
            lambda item: _candidate_names(spec, item)),  # type: ignore[arg-type]
        gold=lambda item: str(item.field(spec.gold)),  # type: ignore[attr-defined]
        baseline=_task_baseline(spec, main), constants=tuple(constants),
        learned_text=(lambda item: str(item.field(learned.field))  # type: ignore[attr-defined]
                      ) if learned else None,
        items_file=items_file)
    _check_items(spec, task, items_file)
    return task
