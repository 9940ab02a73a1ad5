"""Models on a Ray cluster: each replica of a model is a Ray actor, shared by Part A and Part B.

A replica's actor (:class:`ModelActor`) loads its model once (``llamacpp:``, ``hf:``) or holds
its client (server backends), runs the local readiness check on its own node, then answers
``generate`` / ``score``. :class:`RayModel` is a :class:`~slmbench.models.base.Model` whose
calls go to those actors: each calling thread is bound to one replica, a replica that dies
(node lost, OOM, ``ray.kill``) or does not answer within its ``timeout_s`` is ended and
replaced in its reserved bundle, and the call fails with a transient ``BackendError``, which
the caller retries. :meth:`RayModel.map` runs independent pieces of work on all the replicas
at once, in order, re-queueing a piece whose replica died, and giving up on it after a bounded
number of attempts. :class:`RayCluster` connects to a cluster and starts each model's
replicas, placed by the registry's size (:func:`~slmbench.models.placement.resources_of`).
The caller keeps everything else, including every store write. Ray is an optional extra
(``pip install -e ".[ray]"``); see docs/scale-out.md.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import re
import threading
import uuid
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Self, TypeVar

from slmbench.core.errors import BackendError, ConfigError
from slmbench.models.base import Model, ModelBase, Request, settings_of
from slmbench.models.faults import unanswered
from slmbench.models.placement import (
    RayModelOptions,
    bundle_of,
    check_fits,
    resources_of,
)
from slmbench.models.records import CandidateScore, Completion, Message, as_messages

W = TypeVar("W")
R = TypeVar("R")
ModelLoader = Callable[[str], Model]
NAMESPACE = "slmbench"  # the Ray namespace of every actor a run starts (named <spec>#<slot>)
_HINT = 'install the ray extra: pip install -e ".[ray]" (docs/scale-out.md)'
_IDS = re.compile(r"\b[0-9a-f]{16,}\b")


def ray_module() -> Any:
    """The ``ray`` package, or a ConfigError saying how to install it."""
    try:
        import ray
    except ImportError:
        raise ConfigError("executor ray needs the ray package, which is not installed",
                          _HINT) from None
    return ray


class ModelActor:
    """The body of one replica's actor: loads the model once, then answers its calls.

    Before loading, the actor runs the readiness check of its own node
    (:func:`~slmbench.models.readiness.check_ready`, with ``native_tools`` when the run uses the
    native scaffold). A model that fails it or fails to load is kept as the error, raised by
    :meth:`ready` and by every call, so the driver gets the backend's own one-line error
    rather than a dead actor. A loader may give the model it returns a ``load_report``
    (what loading measured, picklable: ``slmbench quantize``'s load time and RTN report);
    :meth:`ready` hands it to the driver.
    """

    def __init__(self, spec: str, loader: ModelLoader, check: bool, native_tools: bool,
                 wait_ready_s: float | None) -> None:
        self.model: Model | None = None
        self.error: Exception | None = None
        try:
            if check:
                from slmbench.models.readiness import check_ready

                check_ready(spec, wait_ready_s=wait_ready_s, native_tools=native_tools)
            self.model = loader(spec)
        except Exception as exc:
            self.error = exc

    def _loaded(self) -> Model:
        if self.model is None:
            raise self.error or RuntimeError("no model")
        return self.model

    def ready(self) -> dict[str, Any]:
        """What the driver's proxy needs: the model's capabilities, its settings (what its
        backend sends, recorded in each trial as a local run records it), and where it runs."""
        model = self._loaded()
        return {"supports_logprobs": model.supports_logprobs,
                "supports_native_tools": model.supports_native_tools, "pid": os.getpid(),
                "settings": settings_of(model),
                "load_report": getattr(model, "load_report", None)}

    def answer(self, request: Request) -> Completion:
        return request.sent_to(self._loaded())

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


class RayModel(ModelBase):
    """A :class:`~slmbench.models.base.Model` whose replicas are Ray actors.

    Each calling thread is bound to one replica (round robin on first call), so with
    ``workers`` (``replicas × concurrency``) threads each actor serves ``concurrency`` of
    them. ``actors`` are the live handles (a dead or hung one is replaced when a call finds
    it so). ``attempts``: how often a replica that dies while starting is replaced.
    ``load_report``: the first replica's model's ``load_report`` (None if it has none);
    ``settings``: its backend's settings, as the local model would show them.
    """

    def __init__(self, spec: str, *, loader: ModelLoader, options: RayModelOptions,
                 concurrency: int = 1, check: bool = True, native_tools: bool = False,
                 wait_ready_s: float | None = None, run_id: str = "",
                 attempts: int = 1) -> None:
        ray = ray_module()
        self.spec = spec
        self.replicas = options.replicas
        self.concurrency = concurrency
        self.timeout_s = options.timeout_s
        need = resources_of(spec, options)
        # One placement group per model: its replicas' resources are reserved all at once or
        # not at all, so two models waiting for each other's CPUs cannot deadlock.
        self._group = ray.util.placement_group([bundle_of(need)] * self.replicas,
                                               strategy="SPREAD")
        ray.get(self._group.ready())
        self._opts = {**need, "max_concurrency": concurrency, "namespace": NAMESPACE}
        self._cls = ray.remote(ModelActor)
        self._args = (spec, loader, check, native_tools, wait_ready_s)
        self._run_id = run_id or uuid.uuid4().hex[:8]
        self._lock = threading.Lock()
        self._bound = threading.local()
        self._slots = itertools.count()
        self._made = itertools.count()
        self._starting: set[int] = set()  # slots whose replacement has not answered ready yet
        self.actors = [self._new_actor(i) for i in range(self.replicas)]
        try:
            info = [self._ready(slot, attempts) for slot in range(self.replicas)]
        except BaseException:  # a model that cannot load: end its actors and reservation
            self.close()
            raise
        self.supports_logprobs = bool(info[0]["supports_logprobs"])
        self.supports_native_tools = bool(info[0]["supports_native_tools"])
        self.settings: dict[str, Any] = info[0]["settings"]
        self.load_report: Any = info[0]["load_report"]

    @property
    def workers(self) -> int:
        """Calls in flight at once: replicas × calls each replica serves."""
        return self.replicas * self.concurrency

    def _new_actor(self, slot: int) -> Any:
        from ray.util.scheduling_strategies import PlacementGroupSchedulingStrategy

        name = f"{self.spec}#{slot}.{next(self._made)}@{self._run_id}"
        where = PlacementGroupSchedulingStrategy(self._group, placement_group_bundle_index=slot)
        return self._cls.options(name=name, scheduling_strategy=where,
                                 **self._opts).remote(*self._args)

    @staticmethod
    def _get(ref: Any, timeout: float | None = None) -> Any:
        """``ray.get``, raising a remote call's own exception (a BackendError stays one)."""
        ray = ray_module()
        try:
            return ray.get(ref, timeout=timeout)
        except ray.exceptions.RayTaskError as exc:
            cause = exc.cause if isinstance(exc.cause, BaseException) else None
            if cause is None:
                raise
            raise cause from None

    def _ready(self, slot: int, attempts: int) -> dict[str, Any]:
        """Wait until the replica in ``slot`` has its model; a replica that dies while
        starting is replaced, ``attempts`` times in all, then its death is the error."""
        ray = ray_module()
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

    def _replace(self, slot: int, actor: Any, *, kill: bool) -> None:
        """Give ``slot`` a fresh actor, unless another caller already replaced ``actor``."""
        with self._lock:
            if self.actors and self.actors[slot] is actor:
                if kill:
                    ray_module().kill(actor)
                self.actors[slot] = self._new_actor(slot)
                self._starting.add(slot)

    def _call(self, method: str, *args: Any) -> Any:
        ray = ray_module()
        slot = self._slot()
        if not self.actors:
            raise BackendError(f"{self.spec}: its Ray replicas were closed", "a bug: report it")
        actor = self.actors[slot]
        try:
            if slot in self._starting:  # a replacement's start and load are not a call's time
                self._get(actor.ready.remote())
                self._starting.discard(slot)
            return self._get(getattr(actor, method).remote(*args), self.timeout_s)
        except ray.exceptions.GetTimeoutError:
            self._replace(slot, actor, kill=True)
            raise unanswered(
                f"{self.spec}: its Ray actor did not answer a call within {self.timeout_s:g} s"
                " and was replaced", "a replica hangs; raise timeout_s in [ray_models] if its "
                "calls are this slow (docs/scale-out.md)") from None
        except ray.exceptions.RayActorError as exc:
            self._replace(slot, actor, kill=False)
            raise unanswered(
                f"{self.spec}: its Ray actor died during a call ({_cause(exc)})",
                "a node was lost or the replica ran out of memory; see docs/scale-out.md",
            ) from None

    def answer(self, request: Request) -> Completion:
        return self._call("answer", request)  # type: ignore[no-any-return]

    def score(self, messages: Sequence[Message | dict[str, Any]],
              candidates: Sequence[str]) -> list[CandidateScore]:
        return self._call("score", as_messages(messages), list(candidates))  # type: ignore[no-any-return]

    def map(self, fn: Callable[[Model, W], R], works: Iterable[W], *,
            attempts: int) -> Iterator[R | BackendError]:
        """``fn(self, work)`` for each of ``works``, ``workers`` at once, yielded in order.

        Each piece runs in a driver thread bound to one replica. A piece whose call failed
        transiently (its replica died or hung, and was replaced) is queued again, up to
        ``attempts`` runs in all; then the piece yields a ``BackendError`` naming the cause
        instead of a result. Any other exception of ``fn`` is raised. At most ``workers``
        pieces run ahead of the one yielded: stopping the iteration early waits for those
        and drops their results.
        """
        def run(work: W) -> R | BackendError:
            for attempt in range(attempts):
                try:
                    return fn(self, work)
                except BackendError as exc:
                    if not exc.transient:
                        raise
                    if attempt + 1 == attempts:
                        return BackendError(f"{self.spec}: gave up after {attempts} attempts:"
                                            f" {exc}", exc.hint)
            raise AssertionError("unreachable")  # pragma: no cover

        todo = iter(works)
        with ThreadPoolExecutor(max_workers=self.workers,
                                thread_name_prefix=f"ray-{self.spec[:20]}") as pool:
            ahead: deque[Future[R | BackendError]] = deque(
                pool.submit(run, w) for w in itertools.islice(todo, self.workers))
            try:
                while ahead:
                    got = ahead.popleft().result()
                    ahead.extend(pool.submit(run, w) for w in itertools.islice(todo, 1))
                    yield got
            finally:
                for future in ahead:
                    future.cancel()

    def close(self) -> None:
        """Close each replica's model and end its actor (idempotent)."""
        ray = ray_module()
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

    Connects to ``address`` (else ``RAY_ADDRESS``, else a new local Ray instance), unless
    this process is connected already; a connection it made is closed by :meth:`close`.
    ``options`` place each model (default: one replica,
    :func:`~slmbench.models.placement.resources_of`);
    ``concurrency(spec)`` is the calls each replica serves at once (default 1);
    ``attempts`` bounds the replacements of a replica that dies while starting, and the
    runs of one piece of :meth:`RayModel.map` work.
    """

    def __init__(self, address: str | None = None,
                 options: Mapping[str, RayModelOptions] | None = None, *,
                 loader: ModelLoader, concurrency: Callable[[str], int] | None = None,
                 check: bool = True, native_tools: bool = False,
                 wait_ready_s: float | None = None, attempts: int = 3) -> None:
        self.address, self.loader, self.wait_ready_s = address, loader, wait_ready_s
        self._options = dict(options or {})
        self._concurrency = concurrency or (lambda spec: 1)
        self.check_ready, self.native_tools, self.attempts = check, native_tools, attempts
        self.models: dict[str, RayModel] = {}
        self.run_id = uuid.uuid4().hex[:8]
        ray = ray_module()
        self._owns = not ray.is_initialized()
        if self._owns:
            local = not (address or os.environ.get("RAY_ADDRESS"))
            extra = {"include_dashboard": False} if local else {}  # not an option of Ray Client
            try:
                ray.init(address=address, namespace=NAMESPACE, log_to_driver=False, **extra)
            except (ConnectionError, ValueError, RuntimeError) as exc:
                raise ConfigError(f"cannot reach the Ray cluster at {address}: {exc}",
                                  "start it with `ray start --head`, or fix ray_address "
                                  "(docs/scale-out.md)") from None

    def options(self, spec: str) -> RayModelOptions:
        return self._options.get(spec, RayModelOptions())

    def workers(self, spec: str) -> int:
        """Calls of ``spec`` in flight at once: replicas × calls each replica serves."""
        return self.options(spec).replicas * self._concurrency(spec)

    def check(self, specs: Sequence[str]) -> None:
        """Raise ConfigError if the cluster can never hold the replicas of one of ``specs``.

        Nothing is loaded: each model's replicas start on first use (:meth:`model`).
        """
        nodes = [n["Resources"] for n in ray_module().nodes() if n.get("Alive")]
        for spec in specs:
            check_fits(spec, resources_of(spec, self.options(spec)),
                       self.options(spec).replicas, nodes)

    def model(self, spec: str) -> RayModel:
        """The replicas of ``spec``, started on first use (again after they were closed)."""
        if spec not in self.models or not self.models[spec].actors:
            self.models[spec] = RayModel(
                spec, loader=self.loader, options=self.options(spec),
                concurrency=self._concurrency(spec), check=self.check_ready,
                native_tools=self.native_tools, wait_ready_s=self.wait_ready_s,
                run_id=self.run_id, attempts=self.attempts)
        return self.models[spec]

    def close(self) -> None:
        for model in self.models.values():
            model.close()
        if self._owns:
            ray_module().shutdown()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
