"""A response cache in the run store, so a resumed or re-run trial does not re-query a model.

A response is keyed by the sha256 of (model spec, messages, temperature,
seed, max_tokens, stop sequences, tool schemas, and the stop rule's key where one is
given). Policy ``auto`` (the default) caches greedy decoding (temperature 0) only,
where the same input must give the same output; ``on`` also caches sampled calls, which are
reproducible for a given seed on the embedded backends; ``off`` never caches.
Only successful completions are stored; ``score`` calls are not cached.
"""

from __future__ import annotations

import hashlib
import json
from typing import Literal

from slmbench.agents.runner.wrapped import WrappedModel
from slmbench.agents.store import RunStore
from slmbench.models.base import Model, Request
from slmbench.models.records import Completion

CachePolicy = Literal["auto", "on", "off"]
CACHE_KEY_VERSION = 1


def cache_key(spec: str, request: Request) -> str:
    """The cache-table key of one ``generate`` call (its stop rule by the rule's key)."""
    payload = {
        "v": CACHE_KEY_VERSION,
        "spec": spec,
        "messages": [m.model_dump(mode="json") for m in request.messages],
        "temperature": round(float(request.temperature), 4),
        "seed": int(request.seed),
        "max_tokens": int(request.max_tokens),
        "stop": list(request.stop),
        "tools": list(request.tools or ()),
    }
    if request.stop_at is not None:  # absent without a rule: the keys of calls without one stay
        payload["stop_at"] = request.stop_at.key
    blob = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "generate:" + hashlib.sha256(blob.encode("utf-8")).hexdigest()


def caches(policy: CachePolicy, temperature: float) -> bool:
    """Whether a call at ``temperature`` is cached under ``policy``."""
    return policy == "on" or (policy == "auto" and round(float(temperature), 4) == 0.0)


class CachingModel(WrappedModel):
    """A :class:`~slmbench.models.base.Model` answering from the store's cache when it can.

    Cached completions come back with ``cached=True`` and their original
    token counts and latency. ``hits`` and ``misses`` count this wrapper's calls.
    """

    def __init__(self, inner: Model, store: RunStore, *, policy: CachePolicy = "auto") -> None:
        super().__init__(inner)
        self.store = store
        self.policy = policy
        self.hits = 0
        self.misses = 0

    def answer(self, request: Request) -> Completion:
        if not caches(self.policy, request.temperature):
            return request.sent_to(self.inner)
        key = cache_key(self.spec, request)
        found = self.store.cache_get(key)
        if found is not None:
            with self._lock:
                self.hits += 1
            return Completion.model_validate(found).model_copy(update={"cached": True})
        completion = request.sent_to(self.inner)
        with self._lock:
            self.misses += 1
        if completion.finish_reason != "error":
            self.store.cache_put(key, completion.model_dump(mode="json"))
        return completion
