"""Records of Part B's micro-task datasets (one JSONL line per item) and their manifests.

The item types of the four built-in tasks live here, beside the fields every item has; a new
micro-task may define its own :class:`Item` subclass in its own module.
"""

from __future__ import annotations

import hashlib
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from slmbench.core.sources import SourceArchive, SourceInfo

TaskName = str  # a registered micro-task's name (slmbench.microtasks.tasks.names())
Split = Literal["fit", "eval"]
FIT_FRACTION = 0.3  # share of items held out to fit baseline thresholds (never scored)


class Provenance(BaseModel):
    """Where one item came from: the archive, the file inside it and the record id."""

    model_config = ConfigDict(frozen=True)

    package: str
    version: str
    licence: str
    archive_sha256: str
    source_path: str
    record_id: str

    @classmethod
    def of(cls, archive: SourceArchive, source_path: str, record_id: str) -> Provenance:
        """The provenance of record ``record_id`` in member ``source_path`` of ``archive``."""
        return cls(package=archive.package, version=archive.version, licence=archive.licence,
                   archive_sha256=archive.sha256, source_path=source_path, record_id=record_id)


class Item(BaseModel):
    """Fields every micro-task item has."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    split: Split
    provenance: tuple[Provenance, ...]


class ApprovalItem(Item):
    """Should an agent auto-run ``command`` in the user's project directory?"""

    command: str
    label: Literal["approve", "deny"]
    rule: str  # the policy rule (docs/approval-policy.md) that decided the label
    origin: str  # nl2bash | cheat | ipi


class MemoryItem(Item):
    """Should this user turn be written to long-term memory?"""

    turn: str
    label: Literal["save", "skip"]
    questions: tuple[str, ...] = ()  # ids of later questions whose source quote is in this turn


class FunctionDoc(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    description: str


class ToolItem(Item):
    """Which function (or "none") serves ``request``?"""

    request: str
    functions: tuple[FunctionDoc, ...] = Field(min_length=1)
    label: str  # a function name, or "none"


class RankItem(Item):
    """Rank the earlier ``turns`` by relevance to ``query``; ``gold`` holds the answer."""

    query: str
    turns: tuple[str, ...] = Field(min_length=2)
    gold: int = Field(ge=0)


AnyItem = Item  # any micro-task's item (each task names its own subclass)


class DatasetManifest(BaseModel):
    """Written next to ``<task>.jsonl``: sizes, class balance, sources and notes."""

    task: TaskName
    n_items: int
    n_eval: int
    class_balance: dict[str, int]
    sources: list[SourceInfo]
    notes: list[str] = Field(default_factory=list)


def split_of(item_id: str) -> Split:
    """Deterministic fit/eval split from the item id's hash (no RNG state involved)."""
    bucket = int(hashlib.sha256(item_id.encode()).hexdigest()[:8], 16) / 0xFFFFFFFF
    return "fit" if bucket < FIT_FRACTION else "eval"
