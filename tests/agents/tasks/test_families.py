"""Task families: every instance certified over 20 world seeds, and seed 0 is today's task.

The shipped suites: the capability suite's 31 families, capability-extra's 31 (capability
tasks in a suite file of their own) and the reliability suite's 14, whose
reference runs cover every variant (paraphrases and rewordings, each injected fault).

Certification (``slmbench.agents.certify``) runs the scripted reference agent through the
real loop and tools on each instance, and scores a tool-less agent that answers with the
seed-0 answer: a family whose answer does not move with the world, or whose expected
answer the tools do not give, fails here.
"""

from __future__ import annotations

import pytest

from slmbench.agents import certify as certify_module
from slmbench.agents.certify import CHANCE_MARGIN, MEMORY_BOUND, certify, chance_share
from slmbench.agents.tasks import Task, load_suite
from slmbench.agents.tasks.families import has_template, instance, template_of, values_for
from slmbench.agents.tasks.families.render import fields_of, fill
from slmbench.agents.tasks.model import (
    AllSpec,
    ChoiceSpec,
    EntitiesSpec,
    NumericSpec,
    StateSpec,
    scorer_kinds,
)
from slmbench.agents.tasks.perturb import variants
from slmbench.agents.world import World

CAPABILITY = [*load_suite("capability"), *load_suite("capability-extra")]
RELIABILITY = load_suite("reliability")
SEEDS = range(1, 21)
# families whose answer is a small choice, a refusal or sandboxed code (docs/tasks.md): read
# from the suites, so that a new family needs no edit here
_CHANCE_KINDS = {"choice", "refusal", "code"}
EXEMPT = {t.id for t in CAPABILITY if scorer_kinds(t.scorer) & _CHANCE_KINDS}
RELIABILITY_EXEMPT = {t.id for t in RELIABILITY if scorer_kinds(t.scorer) & _CHANCE_KINDS}


@pytest.mark.parametrize("task", CAPABILITY, ids=lambda t: t.id)
def test_every_capability_family_is_certified_over_20_seeds(task: Task) -> None:
    """The reference solves every instance; the memory agent stays in its bound (the rest of
    the no-skill bench: tests/agents/test_certify.py)."""
    check = certify(task, SEEDS, agents=["memory"])
    assert check.reference_solved == len(SEEDS), check.reference_failures
    assert (check.chance is not None) == (task.id in EXEMPT)
    bound = MEMORY_BOUND if check.chance is None else check.chance + CHANCE_MARGIN
    assert check.memory_share <= bound, (check.memory_right, check.chance)
    assert check.passed


def test_a_family_whose_answer_does_not_move_fails_certification() -> None:
    """IR-1 without its template asks every world for seed 0's height: the reference agent's
    answer is then wrong where the world differs, and memory is always right."""
    frozen = CAPABILITY[0].model_copy(update={"id": "XX-1"})
    assert not has_template(frozen)
    check = certify(frozen, range(1, 6))
    assert check.reference_solved == 0 and check.memory_right == 5 and not check.passed


def _first_aliases(x: object) -> object:
    """A state check with each alias list (``[09:00, 9 am, ...]``) cut to its first alias."""
    if isinstance(x, dict):
        return {k: _first_aliases(v) for k, v in x.items()}
    if isinstance(x, list):
        return [v[0] if isinstance(v, list) else _first_aliases(v) for v in x]
    return x


def _answers(task: Task) -> list[object]:
    """What a task's scorer accepts as right, less the aliases and distractors."""
    def leaves(spec: object) -> list[object]:
        if isinstance(spec, AllSpec):
            return [x for s in spec.scorers for x in leaves(s)]
        if isinstance(spec, NumericSpec):
            return [spec.value]
        if isinstance(spec, ChoiceSpec):
            return [spec.answer]
        if isinstance(spec, EntitiesSpec):
            return [r if isinstance(r, str) else r[0] for r in spec.required]
        if isinstance(spec, StateSpec):
            return [_first_aliases(c.model_dump()) for c in spec.checks]
        return [spec.model_dump()]
    return leaves(task.scorer)


def _alias_sets(task: Task) -> list[object]:
    """:func:`_answers`, but an entity is the set of all its aliases, in any order."""
    def leaves(spec: object) -> list[object]:
        if isinstance(spec, AllSpec):
            return [x for s in spec.scorers for x in leaves(s)]
        if isinstance(spec, EntitiesSpec):
            return [frozenset([r] if isinstance(r, str) else r) for r in spec.required]
        return _answers(task.model_copy(update={"scorer": spec}))
    return leaves(task.scorer)


def _seed0_filled(task: Task) -> Task:
    template = template_of(task)
    values = values_for(task, World.create(0))
    if isinstance(template, list):
        template = template[int(values["form"])]
    return Task.model_validate({**task.model_dump(mode="json"), **fill(template, values)})


@pytest.mark.parametrize("task", [t for t in CAPABILITY if has_template(t)], ids=lambda t: t.id)
def test_each_template_filled_from_the_seed_0_world_gives_the_curated_answers(task: Task) -> None:
    assert instance(task, 0) is task  # seed 0 is the curated task itself
    filled = _seed0_filled(task)
    assert _answers(filled) == _answers(task)
    assert filled.reference.actions == task.reference.actions


def test_instances_move_with_the_world_and_keep_the_family() -> None:
    ir1 = CAPABILITY[0]
    a, b = instance(ir1, 1), instance(ir1, 2)
    assert a.world_seed == 1 and a.id == ir1.id and a.group == ir1.group
    assert a.instruction != b.instruction != ir1.instruction
    assert instance(ir1, 1) == a  # deterministic
    sf = next(t for t in CAPABILITY if t.id == "SF-1")
    forms = {instance(sf, s).expected_behaviour for s in range(1, 5)}
    assert forms == {"refuse", "comply"}  # the safety families alternate by seed


def test_fill_keeps_types_formats_and_single_braces() -> None:
    values = {"n": 4612, "names": ["A", "B"], "who": "Ilse"}
    assert fill("{{n}}", values) == 4612 and fill(" {{names}} ", values) == ["A", "B"]
    assert fill("rises {{n:,}} m, says {{who}}", values) == "rises 4,612 m, says Ilse"
    assert fill({"code": "f'{x!r}' {{n}}"}, values) == {"code": "f'{x!r}' 4612"}
    assert fields_of({"a": ["{{n}} {{who}}"], "b": "{x}"}) == {"n", "who"}
    with pytest.raises(KeyError, match=r"T\.x: no value for"):
        fill({"x": "{{missing}}"}, values, where="T")


def test_each_capability_suite_file_has_its_own_binders_and_none_is_bound_twice() -> None:
    from slmbench.agents.tasks.families import bind_capability, bind_capability_extra

    core, extra = set(bind_capability.BINDERS), set(bind_capability_extra.BINDERS)
    assert not core & extra
    assert core <= {t.id for t in load_suite("capability")}
    assert extra == {t.id for t in load_suite("capability-extra")}  # every extra family moves


def test_chance_shares() -> None:
    by_id = {t.id: t for t in CAPABILITY}
    assert chance_share(by_id["DM-2"].scorer) == 0.5
    assert chance_share(by_id["CD-2"].scorer) == 0.0
    assert chance_share(by_id["IR-1"].scorer) is None


# -- the reliability suite ------------------------------------------------------------------

@pytest.mark.parametrize("task", RELIABILITY, ids=lambda t: t.id)
def test_every_reliability_family_is_certified_over_20_seeds(task: Task) -> None:
    assert has_template(task)  # every reliability task moves with the world
    check = certify(task, SEEDS, agents=["memory"])
    assert check.reference_solved == len(SEEDS), check.reference_failures
    assert (check.chance is not None) == (task.id in RELIABILITY_EXEMPT)
    bound = MEMORY_BOUND if check.chance is None else check.chance + CHANCE_MARGIN
    assert check.memory_share <= bound, (check.memory_right, check.chance)
    assert check.passed


@pytest.mark.parametrize("task", RELIABILITY, ids=lambda t: t.id)
def test_each_reliability_template_filled_from_the_seed_0_world_gives_the_curated_task(
        task: Task) -> None:
    """The same answers (each entity's aliases as a set; distractors aside) and actions, and
    the very instruction and paraphrases the curated task words."""
    assert instance(task, 0) is task
    filled = _seed0_filled(task)
    assert _alias_sets(filled) == _alias_sets(task)
    assert filled.reference.actions == task.reference.actions
    assert filled.instruction == task.instruction
    assert filled.paraphrases == task.paraphrases


@pytest.mark.parametrize("task", RELIABILITY, ids=lambda t: t.id)
def test_reliability_instances_keep_the_family_settings(task: Task) -> None:
    inst = instance(task, 3)
    for field in ("dimension", "faults", "fault_tool", "min_repeats", "tools", "group"):
        assert getattr(inst, field) == getattr(task, field), field
    assert variants(inst) == variants(task)
    assert len(set(inst.paraphrases)) == len(task.paraphrases)


def test_certify_runs_every_variant_of_every_instance(monkeypatch: pytest.MonkeyPatch) -> None:
    ran: list[tuple[int, str]] = []
    real = certify_module.run_trial

    def recording(model: object, task: Task, **kw: object) -> object:
        ran.append((task.world_seed, str(kw.get("variant", "base"))))
        return real(model, task, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(certify_module, "run_trial", recording)
    by_id = {t.id: t for t in RELIABILITY}
    for family in ("RR-2", "RF-1"):
        ran.clear()
        assert certify(by_id[family], [1, 2], agents=()).passed  # the reference runs alone
        want = [(s, v) for s in (1, 2) for v in variants(instance(by_id[family], s))]
        assert ran == want and len(want) == 2 * len(variants(by_id[family])) > 2


def test_a_fault_that_never_fires_fails_certification() -> None:
    """Faults put on a tool the reference never calls: the base run passes, but each fault
    variant is reported, so the instance is not solved under every variant."""
    rf1 = next(t for t in RELIABILITY if t.id == "RF-1")
    broken = rf1.model_copy(update={"tools": ["query_table", "web_search"],
                                    "fault_tool": "web_search"})
    check = certify(broken, [1, 2])
    assert check.reference_solved == 0 and not check.passed
    assert len(check.reference_failures) == 2 * len(rf1.faults)
    assert all("0 faults injected" in f for f in check.reference_failures)


def test_headcount_families_ask_seed_0_s_headcount_and_then_a_payroll() -> None:
    """RC-1 and RR-3: seed 0 asks its curated headcount; a drawn world asks a department's
    combined yearly salary (the department drawn per instance), which varies widely: a
    headcount is one of a few small numbers, and its commonest value was right on up to
    half of the worlds."""
    for task in (t for t in RELIABILITY if t.id in ("RC-1", "RR-3")):
        assert isinstance(task.scorer, NumericSpec) and task.scorer.value == 4
        insts = [instance(task, s) for s in SEEDS]
        departments = {values_for(task, World.create(s))["department"] for s in SEEDS}
        assert len(departments) >= 3
        payrolls = [i.scorer.value for i in insts if isinstance(i.scorer, NumericSpec)]
        assert len(payrolls) == len(SEEDS) and len(set(payrolls)) >= len(SEEDS) - 2
        for s, payroll in zip(SEEDS, payrolls, strict=True):
            world = World.create(s)
            dept = values_for(task, world)["department"]
            assert payroll == sum(e.salary for e in world.employees if e.department == dept)


def test_reliability_safety_families_alternate_by_seed() -> None:
    """Harmful on even seeds, benign on odd ones, or the other way round where the family's
    form offset is 1 (terms.FORM_OFFSETS: so a group's first three worlds are balanced)."""
    from slmbench.agents.tasks.families.terms import FORM_OFFSETS

    for task in (t for t in RELIABILITY if t.id in RELIABILITY_EXEMPT):
        harmful = task.expected_behaviour
        assert harmful in ("refuse", "verify")
        forms = [instance(task, s).expected_behaviour for s in range(1, 7)]
        pair = ["comply", harmful] if FORM_OFFSETS.get(task.id, 0) == 0 else [harmful, "comply"]
        assert forms == pair * 3


def test_meeting_titles_split_only_at_a_colon_and_space() -> None:
    from slmbench.agents.tasks.families.terms import title_aliases

    assert title_aliases("Vendor call: CloudNest") == ["Vendor call", "CloudNest"]
    assert title_aliases("1:1 with Dana") == "1:1 with Dana"
