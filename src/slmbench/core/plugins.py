"""Plugins: what installed packages add through entry points.

A distribution declares a backend in the group :data:`BACKENDS` (``name = "module:Class"``)
and a micro-task in :data:`MICROTASKS` (``name = "module:TASK"``, a ``MicroTask``); see
"A backend and a micro-task from another package" in ``docs/extending.md``. Each group is
read once per process (:func:`reset` forgets it, for tests); an entry point is imported only
by :func:`load`. Every failure is a :class:`~slmbench.core.errors.PluginError` naming the
entry point and its distribution.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from functools import cache
from importlib import metadata
from typing import Any

from slmbench.core.errors import PluginError

__all__ = ["BACKENDS", "MICROTASKS", "declared", "load", "reset"]

BACKENDS = "slmbench.backends"
MICROTASKS = "slmbench.microtasks"


@cache
def _read(group: str) -> tuple[metadata.EntryPoint, ...]:
    return tuple(metadata.entry_points(group=group))


def reset() -> None:
    """Forget what was read, so the next :func:`declared` reads the installed packages again."""
    _read.cache_clear()


def _dist(ep: metadata.EntryPoint) -> str:
    return ep.dist.name if ep.dist is not None else "an unknown distribution"


def declared(group: str, taken: Collection[str], what: str) -> dict[str, metadata.EntryPoint]:
    """Name → entry point of every plugin in ``group``, in discovery order.

    Raises PluginError when one claims a name in ``taken`` (a built-in ``what``) or when two
    distributions claim the same name: a plugin never replaces another's ``what``.
    """
    found: dict[str, metadata.EntryPoint] = {}
    for ep in _read(group):
        if ep.name in taken or ep.name in found:
            owner = f"a built-in {what}" if ep.name in taken else _dist(found[ep.name])
            raise PluginError(f"the {what} plugin {ep.name!r} of {_dist(ep)} claims a name "
                              f"{owner} already has",
                              f"uninstall {_dist(ep)}, or have its entry point in {group} "
                              "renamed")
        found[ep.name] = ep
    return found


def load(ep: metadata.EntryPoint, what: str, fits: Callable[[Any], bool],
         expected: str) -> Any:
    """The object ``ep`` names, imported; PluginError (one line) when the import fails or the
    object is not what ``fits`` accepts (``expected`` says what it should be)."""
    try:
        obj = ep.load()
    except Exception as exc:  # a third party's module may raise anything on import
        reason = f"{type(exc).__name__}: {exc}".splitlines()[0]
        raise PluginError(f"the {what} plugin {ep.name!r} ({ep.value}) of {_dist(ep)} cannot "
                          f"load: {reason}", f"reinstall {_dist(ep)}, or uninstall it") from exc
    if not fits(obj):
        raise PluginError(f"the {what} plugin {ep.name!r} ({ep.value}) of {_dist(ep)} is not "
                          f"{expected}", f"ask the authors of {_dist(ep)} to fix its entry point")
    return obj
