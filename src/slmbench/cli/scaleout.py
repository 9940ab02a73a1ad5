"""The options that say where a Part B command's models read (docs/scale-out.md), declared once.

A command decorated with :func:`scale_out_options` takes one ``scale: ScaleOut`` and gets the
five options ``--executor``, ``--ray-address``, ``--ray-replicas``, ``--ray-timeout`` and
``--retry-attempts`` after its own, the same help and defaults in every command.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from enum import StrEnum
from typing import Annotated, Any, TypeVar, get_type_hints

import typer

from slmbench.microtasks.session import READ_ATTEMPTS, read_on
from slmbench.models.placement import TIMEOUT_S
from slmbench.models.ray import RayCluster


class Executor(StrEnum):
    local = "local"
    ray = "ray"


ReadOn = Annotated[Executor, typer.Option(
    "--executor", help="local | ray: each model's replicas read on a Ray cluster "
    "(docs/scale-out.md)")]
RayAddress = Annotated[str | None, typer.Option(
    "--ray-address", help="Ray cluster for --executor ray (default: RAY_ADDRESS, else a "
    "local Ray)")]
RayReplicas = Annotated[int, typer.Option("--ray-replicas", min=1,
                                          help="replicas of each model on Ray")]
RayTimeout = Annotated[float, typer.Option(
    "--ray-timeout", min=0.001, help="seconds one call may take on Ray before its replica is "
    "replaced")]
Attempts = Annotated[int, typer.Option(
    "--retry-attempts", min=1, max=50, help="tries of a reading whose Ray replica died or hung "
    "(first included); then it is a backend error")]


@dataclass(frozen=True)
class ScaleOut:
    """Where a Part B command reads, as its five scale-out options gave it."""

    executor: Executor = Executor.local
    address: str | None = None
    replicas: int = 1
    timeout_s: float = TIMEOUT_S
    attempts: int = READ_ATTEMPTS

    def read_on(self, specs: Sequence[str]) -> AbstractContextManager[RayCluster | None]:
        """:func:`~slmbench.microtasks.session.read_on` for ``specs`` with these options."""
        return read_on(self.executor.value, specs, self.address, replicas=self.replicas,
                       timeout_s=self.timeout_s, attempts=self.attempts)


#: (parameter, its typer type, its default, the ScaleOut field it fills), in --help order
_OPTIONS: tuple[tuple[str, Any, Any, str], ...] = (
    ("executor", ReadOn, Executor.local, "executor"),
    ("ray_address", RayAddress, None, "address"),
    ("ray_replicas", RayReplicas, 1, "replicas"),
    ("ray_timeout", RayTimeout, TIMEOUT_S, "timeout_s"),
    ("retry_attempts", Attempts, READ_ATTEMPTS, "attempts"),
)

C = TypeVar("C", bound=Callable[..., Any])


def scale_out_options(command: C) -> C:
    """``command`` (which takes ``scale: ScaleOut``) as typer sees it: its own parameters,
    then the five scale-out options; called, it gets them as one ``scale``."""
    hints = get_type_hints(command, include_extras=True)
    own = [p.replace(annotation=hints.get(p.name, p.annotation))
           for p in inspect.signature(command).parameters.values() if p.name != "scale"]
    added = [inspect.Parameter(name, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=default,
                               annotation=kind) for name, kind, default, _ in _OPTIONS]

    @functools.wraps(command)
    def run(**given: Any) -> Any:
        scale = ScaleOut(**{field: given.pop(name) for name, _, _, field in _OPTIONS})
        return command(**given, scale=scale)

    params = [*own, *added]
    run.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    run.__annotations__ = {p.name: p.annotation for p in params}
    del run.__wrapped__  # typer must read this signature, not the command's
    return run  # type: ignore[return-value]
