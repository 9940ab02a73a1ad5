"""Model spec strings, parsed, and the backends a spec may name.

A model is named by a *spec string* ``backend:target[?key=value&...]``:

* ``llamacpp:qwen2.5-coder-0.5b`` (registry name) or ``llamacpp:/path/to/file.gguf``
* ``openai:MODEL@http://127.0.0.1:8080/v1``
* ``llamaserver:qwen2.5-coder-0.5b?slots=8`` (a ``llama-server`` slmbench starts and stops)
* ``ollama:qwen2.5:7b`` or ``ollama:qwen2.5:7b@http://127.0.0.1:11434``
* ``hf:/path/to/dir?dtype=bf16`` (optionally ``&gguf_file=model.gguf``)
* ``scripted:/path/to/script.json`` or ``scripted:echo`` (deterministic, for tests)
* ``NAME:...`` where an installed package declares backend ``NAME`` (entry point group
  ``slmbench.backends``, :mod:`slmbench.core.plugins`)

Options after ``?`` are backend-specific (``n_ctx``, ``threads``, ``dtype``, ``timeout``...).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib.metadata import EntryPoint
from urllib.parse import parse_qsl

from slmbench.core import plugins
from slmbench.core.errors import ModelSpecError


@dataclass(frozen=True)
class ModelSpec:
    """A parsed model spec string."""

    backend: str
    target: str
    options: dict[str, str] = field(default_factory=dict)
    raw: str = ""

    def option(self, key: str, default: str | None = None) -> str | None:
        return self.options.get(key, default)

    def check_options(self, known: Sequence[str]) -> None:
        """Reject options the backend does not know: a typo must not pass silently."""
        unknown = sorted(set(self.options) - set(known))
        if unknown:
            raise ModelSpecError(
                f"unknown option(s) {', '.join(unknown)} for the {self.backend} backend "
                f"in {self.raw!r}", f"known options: {', '.join(known) or 'none'}")

    def server_target(self, example: str) -> tuple[str, str | None]:
        """A server backend's ``NAME@URL`` target: the name, and the URL (None: not given).

        Raises ModelSpecError when no name comes before the '@' (``example``: how to write it).
        """
        name, _, url = self.target.partition("@")
        if not name:
            raise ModelSpecError(f"{self.raw!r} names no model before '@'", f"write {example}")
        return name, url or None

    def int_option(self, key: str, default: int) -> int:
        """A positive integer option (``?threads=2``), or ModelSpecError naming it."""
        raw = self.options.get(key)
        if raw is None:
            return default
        if not raw.strip().isdigit() or int(raw) < 1:
            raise ModelSpecError(f"option {key}={raw!r} in {self.raw!r} is not a positive "
                                 "integer", f"write e.g. ?{key}={default}")
        return int(raw)

    def seconds_option(self, key: str, default: float, *, allow_zero: bool = False) -> float:
        """A finite number of seconds (``?timeout=60``), or ModelSpecError naming it."""
        raw = self.options.get(key)
        if raw is None:
            return default
        try:
            value = float(raw)
        except ValueError:
            value = math.nan
        if not math.isfinite(value) or value < 0 or (value == 0 and not allow_zero):
            least = "zero or more" if allow_zero else "more than zero"
            raise ModelSpecError(f"option {key}={raw!r} in {self.raw!r} is not a number of "
                                 f"seconds ({least})", f"write e.g. ?{key}={default:g}")
        return value


def gpu_layers(spec: ModelSpec) -> int | None:
    """``?n_gpu_layers=N`` (layers offloaded to the GPU; -1 all, 0 none), or None if not given."""
    raw = spec.option("n_gpu_layers")
    if raw is None:
        return None
    try:
        value = int(raw)
    except ValueError:
        value = -2
    if value < -1:
        raise ModelSpecError(f"option n_gpu_layers={raw!r} in {spec.raw!r} is not a layer "
                             "count", "write ?n_gpu_layers=-1 (all layers), 0 (none) or N")
    return value


BACKENDS: dict[str, str] = {
    "llamacpp": "slmbench.models.llamacpp:LlamaCppModel",
    "openai": "slmbench.models.openai:OpenAIModel",
    "llamaserver": "slmbench.models.llamaserver:LlamaServerModel",
    "ollama": "slmbench.models.ollama:OllamaModel",
    "hf": "slmbench.models.hf:HFModel",
    "scripted": "slmbench.models.scripted:ScriptedModel",
}


#: backends that talk to a model server (a client per model, many requests in flight)
SERVER_BACKENDS = frozenset({"openai", "ollama", "llamaserver"})
#: of those, the servers slmbench starts itself on this machine: they compute on its cores,
#: as an in-process model does
LOCAL_SERVER_BACKENDS = frozenset({"llamaserver"})


def computes_here(spec: str) -> bool:
    """Whether ``spec`` computes on this machine's cores: an in-process model, or a server
    slmbench starts here (``llamaserver:``). A runner keeps two such models from running side
    by side (measured: ``llamacpp:`` beside ``llamaserver:``, two threads each on 2 cores,
    about 75 s a trial of the 0.5B against 12-17 s alone)."""
    backend = parse_spec(spec).backend
    return backend not in SERVER_BACKENDS or backend in LOCAL_SERVER_BACKENDS


def plugin_backends() -> dict[str, EntryPoint]:
    """The backends installed packages declare (entry points in ``slmbench.backends``, name →
    ``module:Class``), read once; PluginError if one claims a built-in's name."""
    return plugins.declared(plugins.BACKENDS, BACKENDS, "backend")


def backend_names() -> list[str]:
    """Every backend a spec may name: the built-ins, then the installed plugins."""
    return [*BACKENDS, *plugin_backends()]


def parse_spec(spec: str) -> ModelSpec:
    """Split ``backend:target?k=v&...`` into its parts, or raise ModelSpecError."""
    known = backend_names()
    if not isinstance(spec, str) or ":" not in spec:
        raise ModelSpecError(
            f"model spec {spec!r} names no backend",
            f"write it as BACKEND:TARGET with BACKEND one of {', '.join(known)}",
        )
    backend, rest = spec.split(":", 1)
    if backend not in known:
        raise ModelSpecError(
            f"unknown model backend {backend!r} in {spec!r}",
            f"use one of {', '.join(known)}",
        )
    target, _, query = rest.partition("?")
    if not target:
        raise ModelSpecError(f"model spec {spec!r} has no target after '{backend}:'",
                             "name a model, a file or a script after the colon")
    options = dict(parse_qsl(query, keep_blank_values=True)) if query else {}
    return ModelSpec(backend=backend, target=target, options=options, raw=spec)

