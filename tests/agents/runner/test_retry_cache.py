"""Retries of transient backend faults, and the response cache."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from runner_fakes import FlakyModel

from slmbench.agents.runner.cache import CachingModel, cache_key
from slmbench.agents.runner.retry import RetryingModel, RetryPolicy
from slmbench.agents.store import RunStore
from slmbench.core.errors import BackendError
from slmbench.models.base import Request
from slmbench.models.records import Message
from slmbench.models.scripted import ScriptedModel

MSGS = [Message(role="user", content="hello")]
#: cache keys the old ``cache_key(spec, messages, **keywords)`` gave the calls of
#: ``test_cache_keys_are_those_the_stores_already_hold`` (commit 83d24fa)
OLD_KEYS = ("generate:3f453e19c6c0116f35290cc560147fb62c8073d097f66cd0f36c03ccce4b7441",
            "generate:e5dcad21149dc0e1acb29493bdb5f40b3119794ae09054dba91ea59f8f4b08a3",
            "generate:911263afdd6b9edb69421431f3e85a63767e869316172689f036e3acaa875c46")


def test_transient_faults_are_retried_with_capped_jittered_backoff() -> None:
    slept: list[float] = []
    inner = FlakyModel(fail_calls={1, 2, 3, 4})
    policy = RetryPolicy(attempts=6, base_s=1.0, cap_s=4.0)
    model = RetryingModel(inner, policy, seed=7, sleep=slept.append)
    assert model.generate(MSGS).text == "ok"
    assert model.retries == 4 and inner.calls == 5
    # ceilings 1, 2, 4, 4 (capped); each wait is in [ceiling/2, ceiling]
    for wait, ceiling in zip(slept, [1.0, 2.0, 4.0, 4.0], strict=True):
        assert ceiling / 2 <= wait <= ceiling
    # the jitter comes from an RNG seeded by the trial's seed: same seed, same schedule
    again: list[float] = []
    RetryingModel(FlakyModel(fail_calls={1, 2, 3, 4}), policy, seed=7,
                  sleep=again.append).generate(MSGS)
    assert again == slept
    other: list[float] = []
    RetryingModel(FlakyModel(fail_calls={1, 2, 3, 4}), policy, seed=8,
                  sleep=other.append).generate(MSGS)
    assert other != slept


def test_policy_delay_bounds() -> None:
    rng = random.Random(0)
    policy = RetryPolicy(base_s=0.5, cap_s=3.0)
    assert all(1.5 <= policy.delay(10, rng) <= 3.0 for _ in range(50))


def test_exhausted_retries_raise_a_permanent_error_naming_the_cause() -> None:
    model = RetryingModel(FlakyModel(always_fail=True), RetryPolicy(attempts=3), seed=0,
                          sleep=lambda s: None)
    with pytest.raises(BackendError, match=r"gave up after 3 attempts: HTTP 503") as info:
        model.generate(MSGS)
    assert info.value.transient is False
    assert model.retries == 2


def test_permanent_faults_are_not_retried() -> None:
    inner = FlakyModel(always_fail=True, transient=False)
    model = RetryingModel(inner, RetryPolicy(attempts=5), seed=0, sleep=lambda s: None)
    with pytest.raises(BackendError):
        model.generate(MSGS)
    assert inner.calls == 1 and model.retries == 0


def test_cache_hit_skips_the_model(tmp_path: Path) -> None:
    inner = ScriptedModel(["first", "second"], spec="scripted:inline")
    with RunStore(tmp_path) as store:
        model = CachingModel(inner, store)
        a = model.generate(MSGS, temperature=0.0, seed=1)
        b = model.generate(MSGS, temperature=0.0, seed=1)
        assert inner.calls == 1
        assert (a.text, b.text) == ("first", "first")
        assert not a.cached and b.cached
        assert (model.hits, model.misses) == (1, 1)
        # a fresh wrapper (a resumed run) finds the response in the store
        assert CachingModel(inner, store).generate(MSGS, temperature=0.0, seed=1).cached
        assert inner.calls == 1


class Rule:
    """A stop rule the cache keys by its ``key``."""

    key = "rule"

    def __call__(self, text: str) -> int | None:
        return None


def test_cache_key_covers_every_decoding_parameter(tmp_path: Path) -> None:
    base = dict(temperature=0.0, seed=1, max_tokens=32, stop=None, tools=None)
    ref = cache_key("scripted:a", Request(MSGS, **base))
    assert cache_key("scripted:a", Request([m.model_dump() for m in MSGS], **base)) == ref
    for change in (dict(seed=2), dict(max_tokens=33), dict(stop=["\n"]), dict(temperature=0.5),
                   dict(tools=[{"type": "function", "function": {"name": "x"}}])):
        assert cache_key("scripted:a", Request(MSGS, **{**base, **change})) != ref
    assert cache_key("scripted:b", Request(MSGS, **base)) != ref
    assert cache_key("scripted:a", Request([Message(role="user", content="hello!")], **base)) != ref
    # where a reply ends is part of the key; a call without a rule keeps its key
    assert cache_key("scripted:a", Request(MSGS, **base, stop_at=Rule())) != ref
    assert cache_key("scripted:a", Request(MSGS, **base, stop_at=None)) == ref


def test_cache_keys_are_those_the_stores_already_hold() -> None:
    """Keys written before ``generate`` became one ``Request`` are found again: the key of
    each call is the sha256 the store computed for it then (an old store's cache stays)."""
    base = dict(temperature=0.0, seed=1, max_tokens=32)
    assert cache_key("scripted:a", Request(MSGS, **base)) == OLD_KEYS[0]
    assert cache_key("scripted:a", Request(MSGS, **base, stop=["\n", ""],
                                           stop_at=Rule())) == OLD_KEYS[1]
    assert cache_key("scripted:a", Request(MSGS, **base, tools=[
        {"type": "function", "function": {"name": "x"}}])) == OLD_KEYS[2]


@pytest.mark.parametrize(("policy", "temperature", "cached"), [
    ("auto", 0.0, True), ("auto", 0.7, False), ("on", 0.7, True), ("off", 0.0, False),
])
def test_cache_policy(tmp_path: Path, policy: str, temperature: float, cached: bool) -> None:
    inner = ScriptedModel(lambda msgs: "same", spec="scripted:inline")
    with RunStore(tmp_path) as store:
        model = CachingModel(inner, store, policy=policy)  # type: ignore[arg-type]
        model.generate(MSGS, temperature=temperature, seed=3)
        model.generate(MSGS, temperature=temperature, seed=3)
    assert inner.calls == (1 if cached else 2)


def test_the_retry_window_bounds_the_total_backoff() -> None:
    slept: list[float] = []
    model = RetryingModel(FlakyModel(always_fail=True),
                          RetryPolicy(attempts=50, base_s=1.0, cap_s=8.0, window_s=30.0),
                          seed=0, sleep=slept.append)
    with pytest.raises(BackendError, match="gave up after") as info:
        model.generate(MSGS)
    assert not info.value.transient
    assert sum(slept) <= 30.0 and len(slept) < 49  # the window, not the attempts, stopped it
    assert sum(slept) + 8.0 > 30.0  # and it stopped only when the next wait would pass it


def test_the_default_policy_waits_out_a_two_minute_load() -> None:
    slept: list[float] = []
    model = RetryingModel(FlakyModel(always_fail=True), RetryPolicy(), seed=0,
                          sleep=slept.append)
    with pytest.raises(BackendError):
        model.generate(MSGS)
    assert 110.0 <= sum(slept) <= 120.0
