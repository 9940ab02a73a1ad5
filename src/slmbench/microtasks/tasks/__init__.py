"""The micro-task registry: every micro-task by name.

The built-in tasks are the modules of this package (``approval``, ``memory``, ``tools``,
``ranking``), each holding one ``TASK = MicroTask(...)``; they are found and registered on
import, so a fifth built-in task is one more module here plus its prompt YAML. A task
defined elsewhere (a user's, a test's) is added with :func:`register`. An installed
package's tasks (entry points in ``slmbench.microtasks``, each naming a ``MicroTask``
instance: ``NAME = "module:TASK"``) are added when the registry is first consulted; one
that claims a built-in's name or cannot load is a PluginError (:mod:`slmbench.core.plugins`).
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Sequence
from importlib.metadata import EntryPoint
from typing import Annotated

from pydantic import AfterValidator
from pydantic_core import PydanticCustomError

from slmbench.core import plugins
from slmbench.core.errors import ConfigError
from slmbench.microtasks.spec import MicroTask

__all__ = ["KnownTask", "MicroTask", "cascaded", "forget_plugins", "get", "history_of", "lookup",
           "names", "register", "resolve", "unregister"]

_REGISTRY: dict[str, MicroTask] = {}
_PLUGINS: dict[str, MicroTask] | None = None  # the installed packages' tasks, once added


def _tasks() -> dict[str, MicroTask]:
    """The registry, the installed packages' tasks added on the first call."""
    global _PLUGINS
    if _PLUGINS is None:
        declared = plugins.declared(plugins.MICROTASKS, _REGISTRY, "micro-task")
        found = {name: _plugin(name, ep) for name, ep in declared.items()}
        _REGISTRY.update(found)
        _PLUGINS = found
    return _REGISTRY


def _plugin(name: str, ep: EntryPoint) -> MicroTask:
    task: MicroTask = plugins.load(ep, "micro-task", lambda t: isinstance(t, MicroTask)
                                   and t.name == name, f"a MicroTask named {name!r}")
    return task


def forget_plugins() -> None:
    """Drop the installed packages' tasks and forget the entry points read (for tests): the
    next call reads them again."""
    global _PLUGINS
    for name in _PLUGINS or ():
        _REGISTRY.pop(name, None)
    _PLUGINS = None
    plugins.reset()


def register(task: MicroTask, *, replace: bool = False) -> MicroTask:
    """Add ``task`` under its name; a second task of the same name is refused."""
    registry = _tasks()
    if task.name in registry and not replace and registry[task.name] is not task:
        raise ConfigError(f"a micro-task named {task.name!r} is already registered",
                          "choose another name")
    registry[task.name] = task
    return task


def unregister(name: str) -> None:
    """Remove a task registered with :func:`register` (no error if it is not there)."""
    _REGISTRY.pop(name, None)


def names() -> tuple[str, ...]:
    """Every registered task's name, in registration order (built-ins first, then the
    installed packages')."""
    return tuple(_tasks())


def _expected() -> str:
    quoted = [repr(n) for n in names()]
    return quoted[0] if len(quoted) == 1 else f"{', '.join(quoted[:-1])} or {quoted[-1]}"


def get(name: str) -> MicroTask:
    """The registered task called ``name``."""
    try:
        return _tasks()[name]
    except KeyError:
        raise ConfigError(f"unknown micro-task {name!r}", f"use one of {_expected()}") from None


def resolve(chosen: Sequence[str] | None) -> list[str]:
    """The names a user chose (all tasks when none), each checked against the registry."""
    picked = list(chosen or names())
    unknown = [t for t in picked if t not in _tasks()]
    if unknown:
        raise ConfigError(f"unknown micro-task(s): {', '.join(unknown)}",
                          f"use some of {_expected()}")
    return picked


def lookup(chosen: Sequence[str] | None) -> list[MicroTask]:
    """The tasks a user chose by name (all tasks when none), each checked: what a command
    hands down (the one place a name becomes its task)."""
    return [_tasks()[name] for name in resolve(chosen)]


def history_of(chosen: Sequence[MicroTask]) -> MicroTask | None:
    """The task whose conversations give ``chosen`` their longer histories (the one their
    ``history_from`` names); None when none of them names one."""
    named = sorted({t.history_from for t in chosen if t.history_from})
    if len(named) > 1:
        raise ConfigError(f"{', '.join(t.name for t in chosen)} take their histories from "
                          f"different tasks ({', '.join(named)})", "choose tasks of one history")
    return get(named[0]) if named else None


def cascaded(name: str, turns: int | None) -> tuple[MicroTask, MicroTask | None]:
    """The task a cascade on ``name`` routes and, when it widens the items to ``turns`` turns,
    the task whose conversations widen them (:func:`history_of`; else None): the one look-up
    of a cascade, made where its task's name enters (``slmbench cascade``, a study's
    ``[[cascade]]`` block)."""
    (task,) = lookup([name])
    return task, history_of([task]) if turns else None


def _known(name: str) -> str:
    if name not in _tasks():
        raise PydanticCustomError("micro_task", "Input should be {expected}",
                                  {"expected": _expected()})
    return name


KnownTask = Annotated[str, AfterValidator(_known)]  # a pydantic field holding a task's name

for _module in pkgutil.iter_modules(__path__):  # the built-ins (not register: no plugin yet)
    _builtin: MicroTask = importlib.import_module(f"{__name__}.{_module.name}").TASK
    _REGISTRY[_builtin.name] = _builtin
