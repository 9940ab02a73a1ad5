"""The grid: every combination once, seeds a pure function of the trial's identity."""

from __future__ import annotations

import hashlib
import json

import pytest
from runner_fakes import fake_load_suite, fake_variants

from slmbench.agents.runner.config import build_experiment
from slmbench.agents.runner.plan import build_plan, derive_seed
from slmbench.core.errors import ConfigError


def plan_for(**fields: object):
    exp = build_experiment({"models": ["scripted:a", "scripted:b"], "suites": ["alpha"],
                            "temperatures": [0.3, 0.7], "repeats": 3, **fields})
    return build_plan(exp, load_suite=fake_load_suite, variants=fake_variants)


def test_grid_is_the_full_product_without_duplicates() -> None:
    plan = plan_for()
    # 2 models x (A-1, A-2, A-3 + its fault variant = 4 runs) x 2 temperatures x 3 repeats
    assert len(plan.trials) == 2 * 4 * 2 * 3
    assert len(plan.keys()) == len(plan.trials)
    faulted = [p for p in plan.trials if p.key.variant == "fault-timeout"]
    assert len(faulted) == 2 * 2 * 3
    assert all(p.fault_plan is not None and p.fault_plan.fault == "timeout" for p in faulted)
    assert set(plan.tasks) == {"A-1", "A-2", "A-3"}


def test_seeds_are_deterministic_and_paired_across_models_variants_temperatures() -> None:
    first, second = plan_for(), plan_for()
    assert [p.key for p in first.trials] == [p.key for p in second.trials]
    seed_of: dict[tuple[str, int], set[int]] = {}
    for p in first.trials:
        seed_of.setdefault((p.key.task, p.key.repeat), set()).add(p.key.seed)
    # one seed per (task, repeat), whatever the model, variant or temperature: paired designs
    assert all(len(seeds) == 1 for seeds in seed_of.values())
    distinct = {next(iter(s)) for s in seed_of.values()}
    assert len(distinct) == len(seed_of) == 3 * 3  # differ across tasks and repeats
    assert plan_for(seed=1).trials[0].key.seed != first.trials[0].key.seed


def test_seed_scheme_is_pinned() -> None:
    # Changing the scheme would make resumed runs plan different trials: keep it fixed.
    # = int.from_bytes(sha256(b"IR-1|2|0").digest()[:4], "big") & 0x7fffffff
    assert derive_seed("IR-1", 2, 0) == 1862304028
    assert 0 <= derive_seed("X-9", 99, 12345) < 2**31


def test_order_is_repeat_major() -> None:
    trials = plan_for().for_model("scripted:a")
    repeats = [p.key.repeat for p in trials]
    assert repeats == sorted(repeats)  # one full pass over every task before the next


def test_task_ids_filter_and_search_all_named_suites() -> None:
    exp = build_experiment({"models": ["scripted:a"], "suites": ["alpha", "beta"],
                            "tasks": ["B-2", "A-1"], "temperatures": [0.0], "repeats": 1})
    plan = build_plan(exp, load_suite=fake_load_suite, variants=fake_variants)
    assert [p.key.task for p in plan.trials] == ["B-2", "A-1"]
    assert plan.trials[0].suite == "beta"


def test_unknown_task_id_suggests_close_ones() -> None:
    with pytest.raises(ConfigError, match="no task 'A-4'") as info:
        plan_for(tasks=["A-4"])
    assert "A-1" in info.value.hint


def test_variant_filter() -> None:
    plan = plan_for(variants=["fault-timeout"])
    assert {p.key.variant for p in plan.trials} == {"fault-timeout"}
    with pytest.raises(ConfigError, match="no task has any of the variants"):
        plan_for(variants=["paraphrase-9"])


def test_quick_suite_has_one_task_of_each_group_and_dimension() -> None:
    from slmbench.agents.runner.plan import load_runner_suite

    quick = load_runner_suite("quick")
    assert len(quick) == 12
    kinds = [(t.suite, t.dimension or t.group) for t in quick]
    assert len(set(kinds)) == 12
    assert {d for s, d in kinds if s == "reliability"} == {
        "consistency", "robustness", "fault_tolerance", "safety"}
    assert len([k for k in kinds if k[0] == "capability"]) == 8


@pytest.mark.parametrize("repeats", [1, 2, 5])
def test_consistency_tasks_get_their_minimum_repeats(repeats: int) -> None:
    from slmbench.agents.runner.plan import plan_of

    exp = build_experiment({"models": ["scripted:a"], "suites": ["reliability"],
                            "temperatures": [0.7], "repeats": repeats})
    plan = plan_of(exp)
    runs: dict[tuple[str, str], int] = {}
    for p in plan.trials:
        runs[(p.key.task, p.key.variant)] = runs.get((p.key.task, p.key.variant), 0) + 1
    consistency = {k: n for k, n in runs.items() if k[0].startswith("RC-")}
    others = {k: n for k, n in runs.items() if not k[0].startswith("RC-")}
    assert len(consistency) == 4 and set(consistency.values()) == {max(repeats, 3)}
    assert set(others.values()) == {repeats}
    reps = [p.key.repeat for p in plan.trials]
    assert reps == sorted(reps)  # still repeat-major: the extra RC repeats come last


# -- instances (issue #39): each task in the worlds 0..N-1 -------------------------------------

def test_instances_multiply_the_grid_and_instance_0_is_todays_plan() -> None:
    one, three = plan_for(), plan_for(instances=3)
    assert len(three.trials) == 3 * len(one.trials)
    assert len(three.keys()) == len(three.trials)  # distinct keys
    assert {p.key.instance for p in three.trials} == {0, 1, 2}
    assert [p.key for p in three.trials if p.key.instance == 0] == [p.key for p in one.trials]
    assert all(p.key.instance == 0 for p in one.trials)
    # the curated world keeps the seeds planned before instances; the drawn ones differ
    seeds: dict[tuple[str, int], set[int]] = {}
    for p in three.trials:
        seeds.setdefault((p.key.task, p.key.repeat), set()).add(p.key.seed)
    assert all(len(s) == 3 for s in seeds.values())
    assert derive_seed("IR-1", 2, 0, 0) == derive_seed("IR-1", 2, 0) == 1862304028
    assert derive_seed("IR-1", 2, 0, 1) != derive_seed("IR-1", 2, 0, 2)
    # still one seed per (task, repeat, instance) across models, variants and temperatures
    per_cell: dict[tuple[str, int, int], set[int]] = {}
    for p in three.trials:
        per_cell.setdefault((p.key.task, p.key.repeat, p.key.instance), set()).add(p.key.seed)
    assert all(len(s) == 1 for s in per_cell.values())
    reps = [p.key.repeat for p in three.for_model("scripted:a")]
    assert reps == sorted(reps)  # repeat-major: every instance before the second repeat


def test_drawn_only_leaves_the_curated_world_out() -> None:
    plan = plan_for(instances=2, include_curated=False)
    assert {p.key.instance for p in plan.trials} == {1, 2}
    assert len(plan.trials) == 2 * len(plan_for().trials)
    assert plan_for(instances=1, include_curated=False).keys().isdisjoint(plan_for().keys())


def test_instances_keep_the_grid_fingerprint_at_their_defaults() -> None:
    base = {"models": ["scripted:echo"], "suites": ["quick"]}
    plain = build_experiment(base)
    assert build_experiment({**base, "instances": 1, "include_curated": True}
                            ).grid_fingerprint() == plain.grid_fingerprint()
    # as hashed before instances existed: an old run's folder and resume check are unchanged
    old_fields = {"suites", "tasks", "variants", "temperatures", "repeats", "seed", "scaffold",
                  "max_steps", "toolset", "skip_code_tasks", "prompts"}
    blob = json.dumps(plain.model_dump(mode="json", include=old_fields), sort_keys=True,
                      separators=(",", ":"))
    assert plain.grid_fingerprint() == hashlib.sha256(blob.encode()).hexdigest()[:12]
    more = {build_experiment({**base, **extra}).grid_fingerprint()
            for extra in ({"instances": 3}, {"include_curated": False},
                          {"instances": 3, "include_curated": False})}
    assert len(more) == 3 and plain.grid_fingerprint() not in more
    with pytest.raises(ConfigError, match="instances: Input should be greater than or equal to 1"):
        build_experiment({**base, "instances": 0})
