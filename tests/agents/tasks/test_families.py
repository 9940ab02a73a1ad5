"""Task families: every instance certified over 20 world seeds, and seed 0 is today's task.

Certification (``slmbench.agents.certify``) runs the scripted reference agent through the
real loop and tools on each instance, and scores a tool-less agent that answers with the
seed-0 answer: a family whose answer does not move with the world, or whose expected
answer the tools do not give, fails here.
"""

from __future__ import annotations

import pytest

from slmbench.agents.certify import CHANCE_MARGIN, MEMORY_BOUND, certify, chance_share
from slmbench.agents.tasks import Task, load_suite
from slmbench.agents.tasks.families import has_template, instance, template_of, values_for
from slmbench.agents.tasks.families.render import fields_of, fill
from slmbench.agents.tasks.model import AllSpec, ChoiceSpec, EntitiesSpec, NumericSpec, StateSpec
from slmbench.agents.world import World

CAPABILITY = load_suite("capability")
SEEDS = range(1, 21)
# families whose answer is a small choice, a refusal or sandboxed code (docs/tasks.md)
EXEMPT = {"DM-2", "DM-3", "CD-2", "CD-3", "SF-1", "SF-2", "SF-3", "SF-4"}


@pytest.mark.parametrize("task", CAPABILITY, ids=lambda t: t.id)
def test_every_capability_family_is_certified_over_20_seeds(task: Task) -> None:
    check = certify(task, SEEDS)
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
    if task.id == "CM-2":  # the curated instruction is cut at "#ops" (a YAML comment)
        assert task.instruction == "Post a Slack message to the"
    else:
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


def test_chance_shares() -> None:
    by_id = {t.id: t for t in CAPABILITY}
    assert chance_share(by_id["DM-2"].scorer) == 0.5
    assert chance_share(by_id["CD-2"].scorer) == 0.0
    assert chance_share(by_id["IR-1"].scorer) is None
