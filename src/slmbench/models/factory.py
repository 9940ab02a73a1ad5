"""Building the backend a spec names: built-ins imported lazily (a missing optional
dependency is a one-line error naming the extra), plugins through :mod:`slmbench.core.plugins`.
"""

from __future__ import annotations

import importlib
from typing import Any

from slmbench.core import plugins
from slmbench.core.errors import ModelSpecError
from slmbench.models.base import Model
from slmbench.models.spec import BACKENDS, ModelSpec, parse_spec, plugin_backends


def backend_class(parsed: ModelSpec) -> Any:
    """The class of the backend ``parsed`` names (imported now), or ModelSpecError."""
    if parsed.backend not in BACKENDS:  # a plugin's: its import errors are its own
        return plugins.load(plugin_backends()[parsed.backend], "backend",
                            lambda cls: callable(getattr(cls, "from_spec", None)),
                            "a class with a from_spec class method")
    module_name, cls_name = BACKENDS[parsed.backend].split(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:  # a missing optional dependency
        extra = {"llamacpp": "embedded", "hf": "hf"}.get(parsed.backend, "")
        hint = f"pip install 'slmbench[{extra}]'" if extra else "reinstall slmbench"
        raise ModelSpecError(
            f"the {parsed.backend} backend cannot load: {exc}", hint
        ) from exc
    return getattr(module, cls_name)


def load_model(spec: str | ModelSpec) -> Model:
    """Build the backend a spec names. Optional backends import lazily."""
    parsed = parse_spec(spec) if isinstance(spec, str) else spec
    model: Model = backend_class(parsed).from_spec(parsed)
    return model

