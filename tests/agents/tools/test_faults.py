"""Each fault kind hits only the planned call, says so, and is recorded."""

import json

import pytest

from slmbench.agents.records import FaultPlan
from slmbench.agents.tools.faults import FAULT_KINDS, FaultInjector, faulted_result
from slmbench.agents.tools.toolbox import WorldToolbox
from slmbench.agents.world import World

SEARCH = {"query": "speed of light"}
EXPECTED_TEXT = {
    "timeout": "error: tool 'web_search' timed out after 30 s",
    "rate_limit": "error 429 Too Many Requests",
    "internal_error": "error 500 Internal Server Error",
}


def test_fault_kinds_are_exactly_the_fault_plan_kinds() -> None:
    assert set(FAULT_KINDS) == {"timeout", "rate_limit", "internal_error", "schema_drift",
                                "malformed_result", "empty_result"}


@pytest.mark.parametrize("kind", FAULT_KINDS)
def test_fault_replaces_only_the_planned_call(kind: str) -> None:
    box = WorldToolbox(World.create(), fault_plan=FaultPlan(tool="web_search", call=2, fault=kind))
    clean = box.call("web_search", SEARCH)
    other_tool = box.call("fact_lookup", {"key": "speed_of_light"})
    faulted = box.call("web_search", SEARCH)
    after = box.call("web_search", SEARCH)

    assert clean.injected_fault is None and other_tool.injected_fault is None
    assert after.injected_fault is None and after == clean
    assert faulted.injected_fault == kind
    assert faulted.observation != clean.observation
    assert [c.fault for c in box.calls] == [None, None, kind, None]
    assert box.faults_injected == 1

    if kind in EXPECTED_TEXT:
        assert not faulted.ok and EXPECTED_TEXT[kind] in faulted.observation
    elif kind == "empty_result":
        assert faulted.ok and faulted.observation == ""
    elif kind == "malformed_result":
        assert not faulted.ok
        with pytest.raises(json.JSONDecodeError):
            json.loads(faulted.observation)
        assert clean.observation[:10].lstrip("{") in faulted.observation
    else:  # schema_drift: same information, different shape and field names
        drifted = json.loads(faulted.observation)
        original = json.loads(clean.observation)
        assert faulted.ok and drifted["apiVersion"] == "2.0"
        assert "results" not in drifted["data"] and "items" in drifted["data"]
        item = drifted["data"]["items"][0]
        assert set(item) == {"ref", "summary", "content"}
        assert item["content"] == original["results"][0]["text"]


def test_invalid_calls_do_not_count_towards_the_planned_call() -> None:
    box = WorldToolbox(World.create(), fault_plan=FaultPlan(tool="web_search", call=1,
                                                            fault="timeout"))
    bad = box.call("web_search", {"q": "typo"})
    assert bad.injected_fault is None and "unexpected argument" in bad.observation
    assert box.call("web_search", SEARCH).injected_fault == "timeout"


@pytest.mark.parametrize(("kind", "sent"), [
    ("timeout", 0), ("rate_limit", 0), ("internal_error", 0), ("empty_result", 0),
    ("schema_drift", 1), ("malformed_result", 1),
])
def test_side_effects_follow_the_documented_choice(kind: str, sent: int) -> None:
    box = WorldToolbox(World.create(), fault_plan=FaultPlan(tool="email", call=1, fault=kind))
    result = box.call("email", {"action": "send", "to": "Dana", "subject": "s", "body": "b"})
    assert result.injected_fault == kind
    assert len(box.world.sent) == sent


def test_drift_of_a_failed_call_keeps_the_error_visible() -> None:
    box = WorldToolbox(World.create(), fault_plan=FaultPlan(tool="fact_lookup", call=1,
                                                            fault="schema_drift"))
    result = box.call("fact_lookup", {"key": "no_such_fact"})
    body = json.loads(result.observation)
    assert not result.ok and body["status"] == "error"
    assert "no fact with key" in body["data"]["fault"]


def test_no_plan_means_no_faults() -> None:
    inj = FaultInjector(None)
    assert [inj.next_call("web_search") for _ in range(3)] == [None, None, None]
    box = WorldToolbox(World.create())
    assert all(box.call("web_search", SEARCH).injected_fault is None for _ in range(3))


def test_drift_and_malformed_need_the_real_outcome() -> None:
    with pytest.raises(ValueError, match="needs the real call"):
        faulted_result("schema_drift", "web_search", None)
