"""How a model is placed on a Ray cluster (:mod:`slmbench.models.ray`): its replicas and what
each one reserves (:class:`RayModelOptions`), the defaults read from the registry's size
(:func:`resources_of`), and the check that the cluster can hold them before anything waits."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from slmbench.core.errors import ConfigError
from slmbench.models.spec import SERVER_BACKENDS, parse_spec

CLIENT_CPUS = 0.25  # what a replica that only holds a server's client reserves
TIMEOUT_S = 600.0  # default longest wait for one call before its replica is replaced


class RayModelOptions(BaseModel):
    """How one model is placed on a Ray cluster: its replicas, what each one reserves, and
    how long one call may take.

    ``None`` resources take the default of :func:`resources_of` (CPUs from the registry's
    size, no GPU). ``resources`` are custom Ray resources a node declares
    (``ray start --resources '{"vllm": 1}'``), e.g. to put a client beside its server.
    ``timeout_s``: a call its replica has not answered by then ends that replica (it hangs),
    and the call is retried on a fresh one; None waits forever.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    replicas: int = Field(default=1, ge=1, le=1024, description="actors holding the model")
    num_cpus: float | None = Field(default=None, ge=0)
    num_gpus: float | None = Field(default=None, ge=0)
    resources: dict[str, float] = Field(default_factory=dict)
    timeout_s: float | None = Field(default=TIMEOUT_S, gt=0,
                                    description="longest wait for one call; None: no limit")


def registry_params(spec: str) -> float | None:
    """Billions of parameters of the registry entry ``spec`` loads, if the registry has it."""
    from slmbench.models.catalog import load_registry

    parsed = parse_spec(spec)
    for entry in load_registry().models:
        if entry.spec == spec or (parsed.backend == "llamacpp" and entry.name == parsed.target):
            return entry.params
    return None


def default_cpus(spec: str) -> float:
    """CPUs one replica of ``spec`` reserves unless told: a client's share, or the registry's
    size of an in-process model (1 when the registry does not know it)."""
    if parse_spec(spec).backend in SERVER_BACKENDS:
        return CLIENT_CPUS
    params = registry_params(spec)
    return 1.0 if params is None else float(min(8, max(2, math.ceil(params))))


def resources_of(spec: str, options: RayModelOptions | None = None) -> dict[str, Any]:
    """The Ray actor options of one replica of ``spec``: ``num_cpus``, ``num_gpus``, resources.

    Defaults: a server backend's replica holds a client (``CLIENT_CPUS``); an in-process
    model reserves ``min(8, max(2, ceil(params)))`` CPUs from the registry's size (2 for the
    sub-2B models, whose llama.cpp default is 2 threads), or 1 when the registry does not
    know it (scripted models). No GPU unless ``num_gpus`` says so: a CPU cluster never waits
    for one. ``options`` override each value; with ``num_cpus`` given, ``spec`` may be any
    name (``slmbench quantize`` keys its precisions ``MODEL#LEVEL``).
    """
    options = options or RayModelOptions()
    out: dict[str, Any] = {
        "num_cpus": default_cpus(spec) if options.num_cpus is None else options.num_cpus,
        "num_gpus": options.num_gpus or 0,
    }
    if options.resources:
        out["resources"] = dict(options.resources)
    return out


def bundle_of(need: dict[str, Any]) -> dict[str, float]:
    """The placement-group bundle of one replica (Ray's resource names, zeros left out)."""
    bundle = {"CPU": need["num_cpus"], "GPU": need["num_gpus"], **need.get("resources", {})}
    return {k: float(v) for k, v in bundle.items() if v}


def check_fits(spec: str, need: dict[str, Any], replicas: int,
               nodes: Sequence[dict[str, float]]) -> None:
    """Raise ConfigError unless some node holds one replica and the cluster holds them all.

    ``nodes`` are the alive nodes' total resources. Ray would otherwise wait forever.
    """
    bundle = bundle_of(need)
    if not any(all(n.get(k, 0.0) >= v for k, v in bundle.items()) for n in nodes):
        raise ConfigError(f"no node of the Ray cluster has {bundle} for one replica of {spec}",
                          "lower num_cpus/num_gpus in [ray_models], or add a node that has them")
    for k, v in bundle.items():
        total = sum(n.get(k, 0.0) for n in nodes)
        if total < v * replicas:
            raise ConfigError(f"{replicas} replicas of {spec} need {v * replicas:g} {k}; the "
                              f"Ray cluster has {total:g}",
                              "ask for fewer replicas in [ray_models], or add nodes")
