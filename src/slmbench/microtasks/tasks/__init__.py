"""The micro-task registry: every micro-task by name.

The built-in tasks are the modules of this package (``approval``, ``memory``, ``tools``,
``ranking``), each holding one ``TASK = MicroTask(...)``; they are found and registered on
import, so a fifth built-in task is one more module here plus its prompt YAML. A task
defined elsewhere (a user's, a test's) is added with :func:`register`.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Sequence
from typing import Annotated

from pydantic import AfterValidator
from pydantic_core import PydanticCustomError

from slmbench.core.errors import ConfigError
from slmbench.microtasks.spec import MicroTask

__all__ = ["KnownTask", "MicroTask", "get", "names", "register", "resolve", "unregister"]

_REGISTRY: dict[str, MicroTask] = {}


def register(task: MicroTask, *, replace: bool = False) -> MicroTask:
    """Add ``task`` under its name; a second task of the same name is refused."""
    if task.name in _REGISTRY and not replace and _REGISTRY[task.name] is not task:
        raise ConfigError(f"a micro-task named {task.name!r} is already registered",
                          "choose another name")
    _REGISTRY[task.name] = task
    return task


def unregister(name: str) -> None:
    """Remove a task registered with :func:`register` (no error if it is not there)."""
    _REGISTRY.pop(name, None)


def names() -> tuple[str, ...]:
    """Every registered task's name, in registration order (built-ins first)."""
    return tuple(_REGISTRY)


def _expected() -> str:
    quoted = [repr(n) for n in names()]
    return quoted[0] if len(quoted) == 1 else f"{', '.join(quoted[:-1])} or {quoted[-1]}"


def get(name: str) -> MicroTask:
    """The registered task called ``name``."""
    try:
        return _REGISTRY[name]
    except KeyError:
        raise ConfigError(f"unknown micro-task {name!r}", f"use one of {_expected()}") from None


def resolve(chosen: Sequence[str] | None) -> list[str]:
    """The names a user chose (all tasks when none), each checked against the registry."""
    picked = list(chosen or names())
    unknown = [t for t in picked if t not in _REGISTRY]
    if unknown:
        raise ConfigError(f"unknown micro-task(s): {', '.join(unknown)}",
                          f"use some of {_expected()}")
    return picked


def _known(name: str) -> str:
    if name not in _REGISTRY:
        raise PydanticCustomError("micro_task", "Input should be {expected}",
                                  {"expected": _expected()})
    return name


KnownTask = Annotated[str, AfterValidator(_known)]  # a pydantic field holding a task's name

for _module in pkgutil.iter_modules(__path__):
    register(importlib.import_module(f"{__name__}.{_module.name}").TASK)
