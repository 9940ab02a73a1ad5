"""The options that say where a Part B command's models read (docs/scale-out.md), declared once
as typer ``Annotated`` aliases, like :mod:`slmbench.cli.options`.

Every command gives them the same defaults: ``executor: ReadOn = Executor.local``,
``ray_address: RayAddress = None``, ``ray_replicas: RayReplicas = 1``,
``ray_timeout: RayTimeout = TIMEOUT_S``, ``retry_attempts: Attempts = READ_ATTEMPTS``.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

import typer


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
