"""The certification bound read literally (#59): a no-skill agent passes a family only when its
observed share is at most the bound; the exact binomial test, which let 3 of 20 pass, excuses
nothing. The seven families that rule found leaking at 20 or 50 seeds, rebound, stay shut at
both."""

from __future__ import annotations

from functools import cache

import pytest

from slmbench.agents.certify import MEMORY_BOUND, AgentCheck, FamilyCheck, certify
from slmbench.agents.tasks import load_suite
from slmbench.agents.tasks.families import _templates, template_of
from slmbench.core import stats

FAMILIES = [t for s in ("capability", "capability-extra", "reliability") for t in load_suite(s)]
BY_ID = {t.id: t for t in FAMILIES}
# (family, the agent the literal rule caught): right on, before the rebind, 2-3 of 20 seeds or
# 3-11 of 50 (IR-5 2/20 4/50, CM-2 replay 4/50, DM-1 3/50, SC-6 2/20 4/50, SC-7 3/20,
# DA-7 8/50, RC-3 3/20 11/50)
LEAKS = [("IR-5", "most_common"), ("CM-2", "replay"), ("DM-1", "most_common"),
         ("SC-6", "most_common"), ("SC-7", "most_common"), ("DA-7", "most_common"),
         ("RC-3", "most_common")]


def _check(right: int, n: int, bound: float = MEMORY_BOUND) -> AgentCheck:
    test, _ = stats.binomial_test(right, n, p0=bound, alternative="greater")
    return AgentCheck(agent="most_common", right=right, instances=n, bound=bound,
                      passes=[f"seed {s}: 'x'" for s in range(1, right + 1)],
                      p_value=test.p_value)


@pytest.mark.parametrize(("right", "n", "passed"), [
    (0, 20, True), (1, 20, True), (2, 20, False), (3, 20, False), (4, 20, False),
    (2, 50, True), (3, 50, False), (11, 50, False)])
def test_an_agent_passes_only_at_or_under_its_bound(right: int, n: int, passed: bool) -> None:
    assert _check(right, n).passed is passed


def test_a_share_over_the_bound_is_not_excused_by_the_binomial_test() -> None:
    """3 of 20 at a 5% bound: the one-sided binomial test does not show it above (p about
    0.08), so the old rule passed it; the family now fails, naming the agent and share."""
    check = _check(3, 20)
    assert check.p_value > 0.05
    assert not check.passed
    family = FamilyCheck(family="XX-9", instances=20, reference_solved=20,
                         reference_failures=[], chance=None, bound=MEMORY_BOUND,
                         agents=[check], same_everywhere=False)
    assert family.reasons == ["XX-9: the most_common agent is right on 3/20, above its bound "
                              "5%, e.g. seed 1: 'x'; seed 2: 'x'"]


def test_a_chance_bound_is_read_literally_too() -> None:
    """A yes/no family (bound 60%): 12 of 20 passes, 13 of 20 fails though p is about 0.4."""
    assert _check(12, 20, 0.6).passed
    assert not _check(13, 20, 0.6).passed


@cache
def _bench(family: str, agent: str, n: int) -> AgentCheck:
    return certify(BY_ID[family], range(1, n + 1), agents=[agent], reference=False).agent(agent)


@pytest.mark.parametrize("n", [20, 50])
@pytest.mark.parametrize(("family", "agent"), LEAKS, ids=[f for f, _ in LEAKS])
def test_the_leaks_the_literal_rule_found_are_shut(family: str, agent: str, n: int) -> None:
    check = _bench(family, agent, n)
    assert check.passed, check.passes
    assert check.right <= 1, check.passes


def test_rc3_as_it_was_fails_the_literal_rule_at_20_seeds(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """RC-3 before its rebind (its seed-0 form, a meeting's title, in every world): the
    commonest title is right on 3 of 20, which the binomial test let pass."""
    rc3 = BY_ID["RC-3"]
    monkeypatch.setitem(_templates("reliability"), "RC-3", template_of(rc3)[0])
    check = certify(rc3, range(1, 21), agents=["most_common"], reference=False)
    agent = check.agent("most_common")
    assert agent.right == 3 and agent.p_value > 0.05
    assert not check.passed
    assert "RC-3: the most_common agent is right on 3/20" in "\n".join(check.reasons)
