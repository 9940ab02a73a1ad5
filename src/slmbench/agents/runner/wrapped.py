"""The base of a model that wraps another one for the runner (retries, the response cache).

A :class:`WrappedModel` shows the inner model's spec, capabilities and settings (as they are
now) as its own, scores through it unless a subclass says otherwise, and never closes it: the
wrapped model belongs to the executor, which closes it.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

from slmbench.models.base import Model, ModelBase, settings_of
from slmbench.models.records import CandidateScore, Message


class WrappedModel(ModelBase):
    """What every runner wrapper of a :class:`~slmbench.models.base.Model` shares; a wrapper
    writes its ``answer`` to a :class:`~slmbench.models.base.Request`, which it passes on to
    the model it wraps with ``request.sent_to(self.inner)``."""

    def __init__(self, inner: Model) -> None:
        self.inner = inner
        self.spec = inner.spec
        self.supports_logprobs = inner.supports_logprobs
        self.supports_native_tools = inner.supports_native_tools
        self._lock = threading.Lock()  # guards the subclass's counters across threads

    @property
    def settings(self) -> dict[str, Any]:
        """The inner model's settings as they are now: a backend may learn some only from
        its server, on its first request (Ollama's trained window), before a trial ends."""
        return settings_of(self.inner)

    def score(
        self,
        messages: Sequence[Message | dict[str, Any]],
        candidates: Sequence[str],
    ) -> list[CandidateScore]:
        return self.inner.score(messages, candidates)

    def close(self) -> None:
        """The wrapped model belongs to the executor, which closes it."""
