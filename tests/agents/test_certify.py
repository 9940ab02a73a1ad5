"""Certification by a bench of no-skill agents (#59): each agent over every shipped family and
20 seeds, the seven broken families the review fed it (each rejected, with its reason), the
constant guessers per group at the three worlds a study draws, and instances of the families
#59 did not rebind unchanged."""

from __future__ import annotations

import hashlib
import random
from functools import cache
from typing import Any

import pytest

from slmbench.agents import certify as certify_module
from slmbench.agents import evaluator
from slmbench.agents.certify import (
    AGENTS,
    FamilyCheck,
    certify,
    certify_groups,
)
from slmbench.agents.tasks import Task, load_suite
from slmbench.agents.tasks.families import _BINDERS, _templates, instance, template_of, terms
from slmbench.agents.world import World

FAMILIES = [t for s in ("capability", "capability-extra", "reliability") for t in load_suite(s)]
BY_ID = {t.id: t for t in FAMILIES}
SEEDS = range(1, 21)
# the families #59 rebound (GENERATOR_VERSION 2), whose drawn instances changed: the first
# five for the binomial rule, the other seven when the rule became the literal bound
REBOUND = {"CD-2", "CD-3", "RC-1", "RR-3", "RF-3",
           "IR-5", "CM-2", "DM-1", "SC-6", "SC-7", "DA-7", "RC-3"}
REBALANCED = set(terms.FORM_OFFSETS)  # a form offset of 1: the form of every drawn world flips


@cache
def _bench(family: str) -> FamilyCheck:
    return certify(BY_ID[family], SEEDS, reference=False)


@pytest.mark.parametrize("task", FAMILIES, ids=lambda t: t.id)
def test_no_no_skill_agent_passes_this_family(task: Task) -> None:
    """One family at a time (the bench is cached: the per-agent test below reads it)."""
    assert _bench(task.id).passed, _bench(task.id).reasons


@pytest.mark.parametrize("agent", AGENTS)
def test_no_no_skill_agent_passes_a_shipped_family(agent: str) -> None:
    """Each agent over every shipped family, 20 seeds: never above its bound (5%, or chance
    + 10 points) as observed (at 5%: right on at most 1 of 20); no test excuses more."""
    failing = [f"{t.id}: {a.right}/{a.instances} {a.passes[:2]}" for t in FAMILIES
               if not (a := _bench(t.id).agent(agent)).passed]
    assert not failing


@pytest.mark.parametrize(("family", "agent"), [("IR-1", "dump"), ("CD-2", "replay"),
                                                ("RC-1", "most_common"), ("CD-3", "replay"),
                                                ("RR-3", "most_common")])
def test_the_review_s_passes_are_now_failures(family: str, agent: str) -> None:
    """Where the review found a pass on every or most seeds: a raw dump on IR-1, seed 0's
    calls on CD-2 and CD-3, the commonest headcount on RC-1 and RR-3."""
    check = _bench(family).agent(agent)
    assert check.right <= 1, check.passes


def test_every_family_changes_across_worlds_or_says_why_not() -> None:
    same = [t.id for t in FAMILIES if _bench(t.id).same_everywhere]
    assert not same


def test_constant_guessers_stay_within_chance_per_group_at_three_instances() -> None:
    checks = certify_groups(FAMILIES)
    pooled = {(c.group, c.answer) for c in checks}
    assert {("decision_making", "Yes."), ("decision_making", "No.")} <= pooled
    assert ("safety", certify_module.REFUSAL_ANSWER) in pooled
    assert all(c.passed for c in checks), [c for c in checks if not c.passed]


def test_forms_by_seed_parity_alone_fail_the_group_check(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without the offsets "Yes." is right on DM-2, DM-4 and DM-8 in worlds 1 and 3: 6 of 9."""
    monkeypatch.setattr(terms, "FORM_OFFSETS", {})
    dm = [BY_ID[f] for f in ("DM-2", "DM-4", "DM-8")]
    yes = next(c for c in certify_groups(dm) if c.answer == "Yes.")
    assert (yes.right, yes.instances) == (6, 9) and not yes.passed


# -- the seven broken families of the review ------------------------------------------------

def _family(monkeypatch: pytest.MonkeyPatch, task: Task, template: Any,
            binder: Any = None) -> Task:
    """``task`` registered as a shipped family with ``template`` (and ``binder``)."""
    monkeypatch.setitem(_templates(task.suite), task.id, template)
    if binder is not None:
        monkeypatch.setitem(_BINDERS[task.suite], task.id, binder)
    return task


def _rejected(check: FamilyCheck, *words: str) -> str:
    assert not check.passed
    text = "\n".join(check.reasons)
    for word in words:
        assert word in text, text
    return text


def test_a_state_task_that_is_the_same_in_every_world_is_rejected() -> None:
    """SC-2 without its template: the same meeting to create in every world. No no-skill
    agent changes the state (the memory agent's check is empty), so the rule that a family
    moves with the world is what rejects it; declared `fixed:`, it is accepted."""
    frozen = BY_ID["SC-2"].model_copy(update={"id": "XX-1"})
    assert template_of(frozen) is None
    check = certify(frozen, range(1, 6), reference=False)
    _rejected(check, "XX-1: the same in every world")
    assert all(a.passed for a in check.agents)
    fixed = frozen.model_copy(update={"fixed": "a test of the rule: declared fixed"})
    assert certify(fixed, range(1, 6), reference=False).passed


def test_an_answer_written_in_its_own_instruction_is_rejected(
        monkeypatch: pytest.MonkeyPatch) -> None:
    ir1 = BY_ID["IR-1"]
    template = {**template_of(ir1), "instruction": (
        "Mount {{peak}} rises {{peak_height:,}} metres. How high above sea level is Mount "
        "{{peak}}, in metres?")}
    leaky = _family(monkeypatch, ir1.model_copy(update={"id": "XX-2"}), template)
    _rejected(certify(leaky, range(1, 6), agents=["echo"], reference=False),
              "XX-2: the echo agent is right on 5/5")


def test_a_three_valued_answer_made_unlike_seed_0_s_is_rejected(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Three possible answers, seed 0's left out: memory is never right, but the commonest
    of the other two is right on about half of the worlds."""
    def binder(world: World, rng: random.Random) -> dict[str, Any]:
        return {"n": 2 if world.seed == 0 else rng.choice([1, 3])}
    base = BY_ID["RC-1"]
    template = {"instruction": "How many of our offices are open on Sundays, as a number?",
                "scorer": {"kind": "numeric", "value": "{{n}}"},
                "reference": {"actions": [], "answer": "{{n}} offices open on Sundays."}}
    three = _family(monkeypatch, base.model_copy(update={"id": "XX-3"}), template, binder)
    check = certify(three, SEEDS, agents=["memory", "most_common"], reference=False)
    assert check.agent("memory").right == 0
    _rejected(check, "XX-3: the most_common agent is right on")


def test_a_bug_shared_by_binder_and_reference_is_rejected(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The binder triples the height and the reference answers what the binder says: the
    reference "succeeds" (its evidence is the peak's name), but no result shows its number."""
    ir1 = BY_ID["IR-1"]  # filled from the world's slots alone: no binder of its own

    def tripled(world: World, rng: random.Random) -> dict[str, Any]:
        return {"peak_height": int(world.slots["peak_height"]) * 3}
    template = {**template_of(ir1), "evidence": ["{{peak}}"]}
    buggy = _family(monkeypatch, ir1.model_copy(update={"id": "XX-4"}), template, tripled)
    _rejected(certify(buggy, range(1, 4), agents=["null"]),
              "XX-4 seed 1: the reference's answer is not the world's", "is in no tool result")


def test_a_family_that_accepts_a_dump_is_rejected(monkeypatch: pytest.MonkeyPatch) -> None:
    """IR-1 judged without the dump rule: one search, the raw first result, right on all."""
    monkeypatch.setattr(evaluator, "dumped", lambda *_a: None)
    _rejected(certify(BY_ID["IR-1"], range(1, 6), agents=["dump"], reference=False),
              "IR-1: the dump agent is right on 5/5", '{"key": ')


def test_a_replayable_family_is_rejected(monkeypatch: pytest.MonkeyPatch) -> None:
    """CD-2 as it was before #59 (no template): seed 0's calls and answer pass everywhere."""
    monkeypatch.delitem(_templates("capability"), "CD-2")
    _rejected(certify(BY_ID["CD-2"], range(1, 6), agents=["replay"], reference=False),
              "CD-2: the same in every world", "the replay agent is right on 5/5")


def test_a_family_whose_commonest_answer_is_common_is_rejected(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """RC-1 as it was before #59: a headcount, one of a few small numbers."""
    rc1 = BY_ID["RC-1"]
    monkeypatch.setitem(_templates("reliability"), "RC-1", template_of(rc1)[0])
    _rejected(certify(rc1, SEEDS, agents=["most_common"], reference=False),
              "RC-1: the most_common agent is right on")


# -- what #59 did not rebind is unchanged -----------------------------------------------------

# sha256 (first 16 hex digits) of instance(family, seed).model_dump_json() over seeds 1..5,
# taken before #59 changed any binder (GENERATOR_VERSION 1)
BEFORE = {
    "IR-1": "ae287578a3deec63", "IR-2": "3c40080ea56fd447", "IR-3": "f405bd9eaa0433f9",
    "IR-4": "c44a942627ea2171", "IR-5": "d0780150c68f6380", "SC-1": "d910dc68ea138c15",
    "SC-2": "277f97b1f82563ac", "SC-3": "e6eb4003ace5f116", "SC-4": "7ce749882975d980",
    "DA-1": "1c9de7658c2da793", "DA-2": "e8c6f1403398f570", "DA-3": "95a89abaec4d413f",
    "DA-4": "6776ea181a90dc8e", "CM-1": "6b21ef59517cb30f", "CM-2": "05f8e3eb86e5e668",
    "CM-3": "431a80b619475591", "CM-4": "5239e5868f975b00", "MR-1": "fbadc053fa200346",
    "MR-2": "8f8deb3d2ca74953", "MR-3": "e7c14e415aa27358", "MR-4": "27b7d0e149303f7c",
    "DM-1": "24584be3be6375e5", "DM-2": "6a9ffee116fa4530", "DM-3": "5a6555d5e7470c93",
    "CD-1": "90bd65c146b3b447", "CD-2": "5101e7f3779f4587", "CD-3": "5536d23ba39dd23f",
    "SF-1": "05a70f24b725a3b4", "SF-2": "4e4d5c5e9b47e3bb", "SF-3": "86b1e3e04909ba3c",
    "SF-4": "4ac4a87b8813f61d", "IR-6": "340933141b61fce3", "IR-7": "a3a4d65dc2b0c5ba",
    "IR-8": "95b30595bce71cde", "SC-5": "947f4a855fcff8c5", "SC-6": "b2febb14530e7ec5",
    "SC-7": "ba18de6aefbff376", "SC-8": "8a51d616b33a46a6", "DA-5": "70a12c22b1dce69e",
    "DA-6": "c86140f35149b464", "DA-7": "f1501b9c8e4c08da", "DA-8": "385e3017607e6554",
    "CM-5": "8c42c892586ee010", "CM-6": "d45cc4083174eac4", "CM-7": "89ec21e47c98e72e",
    "CM-8": "9ab2d1f967d167ba", "MR-5": "ae85a25a946e8217", "MR-6": "d2e35a88b94ba4ee",
    "MR-7": "c0a3fc0c30b585e3", "MR-8": "d0141b094eb705ce", "DM-4": "484deac4ea71ec68",
    "DM-5": "ff6ecf7879db44cd", "DM-6": "0e6bd3fc65e7722e", "DM-7": "7b5ce88de45f1817",
    "DM-8": "d6896d39e396c5a6", "CD-4": "45117fbca7ff0a68", "CD-5": "15220ba26084fbbb",
    "CD-6": "9dc2f26fde6cf97b", "CD-7": "348453e986f53c4d", "SF-5": "37e3bb6a68107d51",
    "SF-6": "078ad29608341136", "SF-7": "c84c77b8679f3609", "RC-1": "f34853a6988767f4",
    "RC-2": "81ca1f1685398b81", "RC-3": "10c8888fe0fdcf51", "RC-4": "50d8228e76821145",
    "RR-1": "b77488333fa66e55", "RR-2": "6f4c7dbb4ede36b2", "RR-3": "8c7854df555718e5",
    "RR-4": "56dfd2e0e2b52360", "RF-1": "a1da12485e4e196e", "RF-2": "0dd0b76acf182c3a",
    "RF-3": "c84d5bbafce256d1", "RS-1": "387d5e582b2f42bf", "RS-2": "faea7280940fce10",
    "RS-3": "b2dca27b59504fcc",
}


def _digest(task: Task) -> str:
    h = hashlib.sha256()
    for seed in range(1, 6):
        h.update(instance(task, seed).model_dump_json().encode())
    return h.hexdigest()[:16]


def test_instances_of_the_families_not_rebound_are_byte_identical() -> None:
    changed = REBOUND | REBALANCED
    assert changed == {"CD-2", "CD-3", "RC-1", "RR-3", "RF-3", "DM-4", "SF-2", "SF-5", "SF-7",
                       "RS-2", "IR-5", "CM-2", "DM-1", "SC-6", "SC-7", "DA-7", "RC-3"}
    kept = {f: h for f, h in BEFORE.items() if f not in changed}
    assert len(kept) == len(FAMILIES) - len(changed)
    assert {f: _digest(BY_ID[f]) for f in kept} == kept
    assert all(_digest(BY_ID[f]) != BEFORE[f] for f in changed)
