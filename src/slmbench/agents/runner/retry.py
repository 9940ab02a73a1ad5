"""Retries of transient backend faults, with capped exponential backoff.

:class:`RetryingModel` wraps a model: a ``BackendError(transient=True)``
from ``generate`` or ``score`` is retried after ``min(cap, base * 2**n)``
seconds, half fixed and half jitter drawn from an RNG seeded with the trial's
seed (so a run's backoff schedule is reproducible), until the attempts run out or the
backoff would pass ``window_s`` (default 120 s: a server loading a large model answers 503
or refuses connections for a minute or two). Which faults are transient is
:data:`slmbench.models.faults.FAULTS`; a configuration fault is never retried. Every retry is
counted. When the attempts or the window run out, a non-transient ``BackendError`` naming
the cause is raised; the evaluator (or, failing that, the executor) stores the trial as
``backend_error`` and the run goes on.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from slmbench.agents.runner.wrapped import WrappedModel
from slmbench.core.errors import BackendError
from slmbench.models.base import Model, Request
from slmbench.models.records import CandidateScore, Completion, Message

T = TypeVar("T")


class RetryPolicy(BaseModel):
    """How often and how patiently to retry a transient backend fault."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    attempts: int = Field(default=30, ge=1, le=50, description="calls in total, first included")
    base_s: float = Field(default=0.5, ge=0.0, description="backoff before the first retry")
    cap_s: float = Field(default=10.0, ge=0.0, description="longest backoff")
    window_s: float = Field(default=120.0, ge=0.0,
                            description="longest total backoff for one call (all its retries)")

    def delay(self, retry: int, rng: random.Random) -> float:
        """Seconds to wait before retry number ``retry`` (0-based): half fixed, half jitter."""
        ceiling = min(self.cap_s, self.base_s * (2.0**retry))
        return ceiling / 2.0 + rng.uniform(0.0, ceiling / 2.0)


class RetryingModel(WrappedModel):
    """A :class:`~slmbench.models.base.Model` that retries transient ``BackendError``\\s.

    Build one per trial (it is cheap): its counters then belong to that trial.
    It never closes the model it wraps.
    """

    def __init__(
        self,
        inner: Model,
        policy: RetryPolicy,
        *,
        seed: int,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        super().__init__(inner)
        self.policy = policy
        self._rng = random.Random(seed)
        self._sleep = sleep
        self.retries = 0
        self.calls = 0
        self.prompt_tokens = 0
        self.completion_tokens = 0

    def _with_retries(self, call: Callable[[], T]) -> T:
        waited = 0.0
        for attempt in range(self.policy.attempts):
            try:
                return call()
            except BackendError as exc:
                if not exc.transient:
                    raise
                with self._lock:
                    wait = self.policy.delay(attempt, self._rng)
                if attempt + 1 == self.policy.attempts or waited + wait > self.policy.window_s:
                    raise BackendError(
                        f"{self.spec}: gave up after {attempt + 1} attempts: {exc}",
                        exc.hint or "check that the model server is up and not overloaded",
                        transient=False,
                    ) from exc
                with self._lock:
                    self.retries += 1
                waited += wait
                self._sleep(wait)
        raise AssertionError("unreachable: the loop returns or raises")  # pragma: no cover

    def answer(self, request: Request) -> Completion:
        completion = self._with_retries(lambda: request.sent_to(self.inner))
        with self._lock:
            self.calls += 1
            self.prompt_tokens += completion.prompt_tokens
            self.completion_tokens += completion.completion_tokens
        return completion

    def score(
        self,
        messages: Sequence[Message | dict[str, Any]],
        candidates: Sequence[str],
    ) -> list[CandidateScore]:
        return self._with_retries(lambda: self.inner.score(messages, candidates))
