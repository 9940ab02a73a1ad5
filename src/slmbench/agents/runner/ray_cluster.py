"""The Ray executor: each model's replicas are Ray actors; the trial loop stays in the driver.

``executor = "ray"`` changes where models run, nothing else. Each replica of a model is one
Ray actor that loads the model once (``llamacpp:``, ``hf:``) or holds its client (server
backends) and answers ``generate`` / ``score``. The driver runs the same trials as the local
executor (``_Run.run_one``: the evaluator's ``run_trial`` with retries and the response
cache) in ``replicas × concurrency`` threads per model, each thread bound to one actor, so a
trial's calls go to one replica and trials finish in parallel. The driver is the only writer
of the run store: every trial is stored by ``RunStore.put`` as it finishes, so the progress
bar, resume and the trial keys are those of the local executor.

An actor that dies (node lost, OOM, ``ray.kill``) fails its in-flight call with a transient
``BackendError``; the slot gets a fresh actor and the call is retried there by the trial's
``RetryingModel``. The trial itself stays in the driver, so it is neither lost nor run
twice; once the retry policy's attempts are spent, it is stored as ``backend_error`` naming
the dead actor. Ray is an optional extra (``pip install -e ".[ray]"``); see docs/scale-out.md.
"""

from __future__ import annotations

import contextlib
import itertools
import math
import os
import re
import threading
import uuid
from collections.abc import Callable, Sequence
from typing import Any

from slmbench.agents.runner.config import SERVER_BACKENDS, Experiment, RayModelOptions
from slmbench.core.errors import BackendError, ConfigError
from slmbench.models.base import (
    CandidateScore,
    Completion,
    Message,
    Model,
    as_messages,
    parse_spec,
)

ModelLoader = Callable[[str], Model]
NAMESPACE = "slmbench"  # the Ray namespace of every actor a run starts (named <spec>#<slot>)
CLIENT_CPUS = 0.25  # what a replica that only holds a server's client reserves
_HINT = 'install the ray extra: pip install -e ".[ray]" (docs/scale-out.md)'
_IDS = re.compile(r"\b[0-9a-f]{16,}\b")


def _ray() -> Any:
    try:
        import ray
    except ImportError:
        raise ConfigError("executor ray needs the ray package, which is not installed",
                          _HINT) from None
    return ray


def registry_params(spec: str) -> float | None:
    """Billions of parameters of the registry entry ``spec`` loads, if the registry has it."""
    from slmbench.models.catalog import load_registry

    parsed = parse_spec(spec)
    for entry in load_registry().models:
        if entry.spec == spec or (parsed.backend == "llamacpp" and entry.name == parsed.target):
            return entry.params
    return None


def resources_of(spec: str, options: RayModelOptions | None = None) -> dict[str, Any]:
    """The Ray actor options of one replica of ``spec``: ``num_cpus``, ``num_gpus``, resources.

    Defaults: a server backend's replica holds a client (``CLIENT_CPUS``); an in-process
    model reserves ``min(8, max(2, ceil(params)))`` CPUs from the registry's size (2 for the
    sub-2B models, whose llama.cpp default is 2 threads), or 1 when the registry does not
    know it (scripted models). No GPU unless ``num_gpus`` says so: a CPU cluster never waits
    for one. ``options`` override each value.
    """
    options = options or RayModelOptions()
    if parse_spec(spec).backend in SERVER_BACKENDS:
        cpus: float = CLIENT_CPUS
    else:
        params = registry_params(spec)
        cpus = 1.0 if params is None else float(min(8, max(2, math.ceil(params))))
    out: dict[str, Any] = {
        "num_cpus": cpus if options.num_cpus is None else options.num_cpus,
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


class ModelActor:
    """The body of one replica's actor: loads the model once, then answers its calls.

    A model that fails to load (or a server that does not answer its readiness check) is
    kept as the error, raised by :meth:`ready` and by every call, so the driver gets the
    backend's own one-line error rather than a dead actor.
    """

    def __init__(self, spec: str, loader: ModelLoader, check: bool,
                 wait_ready_s: float | None) -> None:
        self.model: Model | None = None
        self.error: Exception | None = None
        try:
            if check:
                from slmbench.models.base import check_ready

                check_ready(spec, wait_ready_s=wait_ready_s)
            self.model = loader(spec)
        except Exception as exc:
            self.error = exc

    def _loaded(self) -> Model:
        if self.model is None:
            raise self.error or RuntimeError("no model")
        return self.model

    def ready(self) -> dict[str, Any]:
        """What the driver's proxy needs: the model's capabilities, and where it runs."""
        model = self._loaded()
        return {"supports_logprobs": model.supports_logprobs,
                "supports_native_tools": model.supports_native_tools, "pid": os.getpid()}

    def generate(self, messages: list[Message], kwargs: dict[str, Any]) -> Completion:
        return self._loaded().generate(messages, **kwargs)

    def score(self, messages: list[Message], candidates: list[str]) -> list[CandidateScore]:
        return self._loaded().score(messages, candidates)

    def close(self) -> None:
        if self.model is not None:
            self.model.close()


def _cause(exc: Exception) -> str:
    """A dead actor's reason, one line, without its ids (so repeated deaths read the same)."""
    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
    why = next((ln for ln in reversed(lines) if ln.startswith("The actor")), lines[0] if lines
               else type(exc).__name__)
    return _IDS.sub("…", why).rstrip(".")


class RayModel:
    """A :class:`~slmbench.models.base.Model` whose replicas are Ray actors.

    Each calling thread is bound to one replica (round robin on first call), so with
    ``replicas × concurrency`` threads each actor serves ``concurrency`` of them. ``actors``
    are the live handles (a dead one is replaced when a call finds it dead).
    """

    def __init__(self, spec: str, *, loader: ModelLoader, options: RayModelOptions,
                 concurrency: int, check: bool = True, wait_ready_s: float | None = None,
                 run_id: str = "", attempts: int = 1) -> None:
        ray = _ray()
        self.spec = spec
        self.replicas = options.replicas
        self.concurrency = concurrency
        need = resources_of(spec, options)
        # One placement group per model: its replicas' resources are reserved all at once or
        # not at all, so two models waiting for each other's CPUs cannot deadlock.
        self._group = ray.util.placement_group([bundle_of(need)] * self.replicas,
                                               strategy="SPREAD")
        ray.get(self._group.ready())
        self._opts = {**need, "max_concurrency": concurrency, "namespace": NAMESPACE}
        self._cls = ray.remote(ModelActor)
        self._args = (spec, loader, check, wait_ready_s)
        self._run_id = run_id or uuid.uuid4().hex[:8]
        self._lock = threading.Lock()
        self._bound = threading.local()
        self._slots = itertools.count()
        self._made = itertools.count()
        self.actors = [self._new_actor(i) for i in range(self.replicas)]
        try:
            info = [self._ready(slot, attempts) for slot in range(self.replicas)]
        except BaseException:  # a model that cannot load: end its actors and reservation
            self.close()
            raise
        self.supports_logprobs = bool(info[0]["supports_logprobs"])
        self.supports_native_tools = bool(info[0]["supports_native_tools"])

    def _new_actor(self, slot: int) -> Any:
        from ray.util.scheduling_strategies import PlacementGroupSchedulingStrategy

        name = f"{self.spec}#{slot}.{next(self._made)}@{self._run_id}"
        where = PlacementGroupSchedulingStrategy(self._group, placement_group_bundle_index=slot)
        return self._cls.options(name=name, scheduling_strategy=where,
                                 **self._opts).remote(*self._args)

    @staticmethod
    def _get(ref: Any) -> Any:
        """``ray.get``, raising a remote call's own exception (a BackendError stays one)."""
        ray = _ray()
        try:
            return ray.get(ref)
        except ray.exceptions.RayTaskError as exc:
            cause = exc.cause if isinstance(exc.cause, BaseException) else None
            if cause is None:
                raise
            raise cause from None

    def _ready(self, slot: int, attempts: int) -> dict[str, Any]:
        """Wait until the replica in ``slot`` has its model; a replica that dies while
        starting is replaced, ``attempts`` times in all, then its death is the error."""
        ray = _ray()
        for attempt in range(attempts):
            try:
                return self._get(self.actors[slot].ready.remote())  # type: ignore[no-any-return]
            except ray.exceptions.RayActorError as exc:
                if attempt + 1 == attempts:
                    raise BackendError(
                        f"{self.spec}: its Ray actor died while starting, {attempts} times "
                        f"({_cause(exc)})", "see the actor's log under /tmp/ray on its node; "
                        "docs/scale-out.md") from None
                self.actors[slot] = self._new_actor(slot)
        raise AssertionError("unreachable")  # pragma: no cover

    def _slot(self) -> int:
        slot = getattr(self._bound, "slot", None)
        if slot is None:
            slot = self._bound.slot = next(self._slots) % self.replicas
        return slot

    def _call(self, method: str, *args: Any) -> Any:
        ray = _ray()
        slot = self._slot()
        if not self.actors:
            raise BackendError(f"{self.spec}: its Ray replicas were closed", "a bug: report it")
        actor = self.actors[slot]
        try:
            return self._get(getattr(actor, method).remote(*args))
        except ray.exceptions.RayActorError as exc:
            with self._lock:
                if self.actors[slot] is actor:  # the first caller to see it dead replaces it
                    self.actors[slot] = self._new_actor(slot)
            raise BackendError(
                f"{self.spec}: its Ray actor died during a call ({_cause(exc)})",
                "a node was lost or the replica ran out of memory; see docs/scale-out.md",
                transient=True,
            ) from None

    def generate(
        self,
        messages: Sequence[Message | dict[str, Any]],
        *,
        temperature: float = 0.0,
        seed: int = 0,
        max_tokens: int = 256,
        stop: Sequence[str] | None = None,
        tools: Sequence[dict[str, Any]] | None = None,
    ) -> Completion:
        kwargs = {"temperature": temperature, "seed": seed, "max_tokens": max_tokens,
                  "stop": list(stop) if stop is not None else None,
                  "tools": list(tools) if tools is not None else None}
        return self._call("generate", as_messages(messages), kwargs)  # type: ignore[no-any-return]

    def score(self, messages: Sequence[Message | dict[str, Any]],
              candidates: Sequence[str]) -> list[CandidateScore]:
        return self._call("score", as_messages(messages), list(candidates))  # type: ignore[no-any-return]

    def close(self) -> None:
        """Close each replica's model and end its actor (idempotent)."""
        ray = _ray()
        with self._lock:
            actors, self.actors = self.actors, []
        for actor in actors:
            # a dead or stuck replica is ended below all the same
            with contextlib.suppress(Exception):
                ray.get(actor.close.remote(), timeout=30)
            ray.kill(actor)
        if actors:
            ray.util.remove_placement_group(self._group)


class RayCluster:
    """The models of one run on a Ray cluster: connects, starts replicas, ends them.

    Connects to ``exp.ray_address`` (else ``RAY_ADDRESS``, else a new local Ray instance),
    unless this process is connected already; a connection it made is closed by
    :meth:`close`.
    """

    def __init__(self, exp: Experiment, *, loader: ModelLoader, check: bool = True,
                 wait_ready_s: float | None = None) -> None:
        self.exp, self.loader, self.wait_ready_s = exp, loader, wait_ready_s
        self.check_ready = check
        self.models: dict[str, RayModel] = {}
        self.run_id = uuid.uuid4().hex[:8]
        ray = _ray()
        self._owns = not ray.is_initialized()
        if self._owns:
            local = not (exp.ray_address or os.environ.get("RAY_ADDRESS"))
            extra = {"include_dashboard": False} if local else {}  # not an option of Ray Client
            try:
                ray.init(address=exp.ray_address, namespace=NAMESPACE, log_to_driver=False,
                         **extra)
            except (ConnectionError, ValueError, RuntimeError) as exc:
                raise ConfigError(f"cannot reach the Ray cluster at {exp.ray_address}: {exc}",
                                  "start it with `ray start --head`, or fix ray_address "
                                  "(docs/scale-out.md)") from None

    def workers(self, spec: str) -> int:
        """Trials of ``spec`` in flight at once: replicas × calls each replica serves."""
        return self.options(spec).replicas * self.exp.workers(spec)

    def options(self, spec: str) -> RayModelOptions:
        return self.exp.ray_models.get(spec, RayModelOptions())

    def check(self, specs: Sequence[str]) -> None:
        """Raise ConfigError if the cluster can never hold the replicas of one of ``specs``.

        Nothing is loaded: each model's replicas start when its trials do (:meth:`model`).
        """
        nodes = [n["Resources"] for n in _ray().nodes() if n.get("Alive")]
        for spec in specs:
            check_fits(spec, resources_of(spec, self.options(spec)),
                       self.options(spec).replicas, nodes)

    def model(self, spec: str) -> RayModel:
        """The replicas of ``spec``, started on first use (again after they were closed)."""
        if spec not in self.models or not self.models[spec].actors:
            self.models[spec] = RayModel(
                spec, loader=self.loader, options=self.options(spec),
                concurrency=self.exp.workers(spec), check=self.check_ready,
                wait_ready_s=self.wait_ready_s, run_id=self.run_id,
                attempts=self.exp.retry.attempts)
        return self.models[spec]

    def close(self) -> None:
        for model in self.models.values():
            model.close()
        if self._owns:
            _ray().shutdown()
