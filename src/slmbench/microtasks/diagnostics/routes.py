"""The routing table ``slmbench recommend`` writes: per micro-task, deploy the baseline, the
model, or the cascade (:class:`Route`), and reading one back (:meth:`RoutingTable.load`).
:meth:`~slmbench.microtasks.diagnostics.cascade.Cascade.from_route` makes a route's router.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from slmbench.core.errors import ConfigError
from slmbench.microtasks.datasets.records import TaskName

__all__ = ["ROUTES_VERSION", "Route", "RoutingTable"]

ROUTES_VERSION = 1


class Route(BaseModel):
    """What to deploy for one micro-task: the baseline, the model, or the cascade."""

    model_config = ConfigDict(frozen=True)

    task: TaskName
    deploy: Literal["baseline", "model", "cascade"]
    baseline: str  # the baseline's name (the τ anchor)
    model: str | None = None  # the model spec (model and cascade)
    prompt_id: str | None = None
    reading: Literal["generation", "logprob"] | None = None
    margin: float | None = None  # cascade: the baseline margin under which the model decides
    k: int = 3  # the shortlist the model re-orders


class RoutingTable(BaseModel):
    """The routes ``slmbench recommend`` writes as JSON, one per micro-task."""

    model_config = ConfigDict(frozen=True)

    routes: list[Route]
    command: str = ""
    version: Literal[1] = ROUTES_VERSION

    def route(self, task: TaskName) -> Route:
        for r in self.routes:
            if r.task == task:
                return r
        raise ConfigError(f"the routing table has no route for {task}",
                          f"it routes {', '.join(r.task for r in self.routes) or 'nothing'}")

    @classmethod
    def load(cls, path: Path) -> RoutingTable:
        """Read a routing table written by ``slmbench recommend``."""
        try:
            return cls.model_validate_json(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise ConfigError(f"routing table {path} does not exist",
                              "write it with: slmbench recommend PATH --routes FILE") from None
        except ValidationError as exc:
            raise ConfigError(f"{path} is not a routing table: {exc.errors()[0]['msg']}",
                              "write it with: slmbench recommend PATH --routes FILE") from None
