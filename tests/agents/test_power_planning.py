"""Power planning of Part A (issue #39): which trials size a design, how an unseparated
instance term is split, and the committed power table is what the stored trials give."""

from __future__ import annotations

import runpy
from pathlib import Path

import numpy as np
import pytest
from scipy import stats as sps

from slmbench.agents import power
from slmbench.agents.records import Outcome, Trial
from slmbench.agents.store import read_trials
from slmbench.core import stats
from slmbench.core.stats import StatsInputError, VarianceComponents

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = runpy.run_path(str(ROOT / "benchmarks" / "power_table.py"))
V2 = ROOT / "docs" / "results" / "reference-study" / "trials.jsonl.gz"


def _trial(model: str, task: str, ok: bool | Outcome, *, instance: int = 0, repeat: int = 0,
           temperature: float = 0.7, variant: str = "base", suite: str = "capability") -> Trial:
    outcome = ok if isinstance(ok, Outcome) else (
        Outcome.SUCCESS if ok else Outcome.WRONG_ANSWER)
    return Trial(model=model, task_id=task, suite=suite, variant=variant,
                 temperature=temperature, seed=repeat, repeat=repeat, instance=instance,
                 outcome=outcome, final_answer="x")


def test_the_committed_power_table_is_what_the_stored_trials_give() -> None:
    doc = (ROOT / "docs" / "tasks.md").read_text(encoding="utf-8")
    assert SCRIPT["regenerated"](doc) == doc, (
        "regenerate: python benchmarks/power_table.py")


def test_the_defaults_are_the_reference_studys_most_variable_pair() -> None:
    pair = power.most_variable_pair(read_trials(V2, "x"))
    assert pair is not None and {pair.a, pair.b} == {
        "llamacpp:qwen2.5-coder-0.5b", "llamacpp:qwen2.5-coder-1.5b"}
    assert pair.b.split(":")[1] in power.DEFAULT_SOURCE
    got, want = pair.components, power.DEFAULT_COMPONENTS
    assert got.family == pytest.approx(want.family, abs=5e-5)
    assert got.trial == pytest.approx(want.trial, abs=5e-5)
    assert (got.instance, got.families, got.trials) == (want.instance, want.families, want.trials)


def test_the_temperature_defaults_are_the_reference_studys_most_variable_temperature_pair(
        ) -> None:
    pair = power.most_variable_pair(read_trials(V2, "x"), temperatures=True)
    assert pair is not None and pair.a.startswith("llamacpp:qwen2.5-coder-1.5b @ T 0.7")
    assert pair.b == "llamacpp:qwen2.5-coder-1.5b @ T 1"
    got, want = pair.components, power.DEFAULT_TEMPERATURE_COMPONENTS
    assert got.family == pytest.approx(want.family, abs=5e-5)
    assert got.trial == pytest.approx(want.trial, abs=5e-5)
    assert (got.instance, got.families, got.trials) == (want.instance, want.families, want.trials)


def test_temperatures_pair_within_one_model_on_task_instance_and_repeat() -> None:
    """Two temperatures of one model pair on (task, instance, repeat); another model's
    temperature never pairs with them, and a model pair ignores the split."""
    tasks = [f"T-{i}" for i in range(4)]
    trials = [_trial(m, t, (r + i * (m == "b") + int(10 * temp)) % 2 == 0, repeat=r,
                     temperature=temp)
              for m in ("a", "b") for i, t in enumerate(tasks) for r in (0, 1)
              for temp in (0.3, 1.0)]
    pair = power.most_variable_pair(trials, temperatures=True)
    assert pair is not None and pair.pairs == len(tasks) * 2
    assert {pair.a.split(" @ ")[0], pair.b.split(" @ ")[0]} in ({"a"}, {"b"})
    assert power.most_variable_pair(trials) is not None  # a - b, paired on temperatures too
    assert power.difference_components(trials, "a", "b").pairs == len(tasks) * 2 * 2


def test_only_the_models_capability_base_trials_pair_and_only_on_shared_cells() -> None:
    """b's backend errors, a reliability trial, a reworded variant and a cell only a ran
    never enter the differences."""
    tasks = [f"T-{i}" for i in range(4)]
    a = [_trial("a", t, True, repeat=r) for t in tasks for r in (0, 1)]
    b = [_trial("b", t, r == 0, repeat=r) for t in tasks for r in (0, 1)]
    noise = [_trial("b", "T-0", Outcome.BACKEND_ERROR, repeat=2),
             _trial("a", "T-0", True, repeat=2),
             _trial("a", "T-1", False, repeat=3), _trial("b", "T-1", True, repeat=3,
                                                         variant="typos"),
             _trial("a", "T-2", False, suite="reliability", repeat=4),
             _trial("b", "T-2", True, suite="reliability", repeat=4)]
    pair = power.difference_components([*a, *b, *noise], "a", "b")
    assert pair.pairs == 8
    # every family's differences are (0, 1): no family term, trial variance 0.5
    assert pair.components.family == 0.0
    assert pair.components.trial == pytest.approx(0.5)


def test_the_most_variable_pair_sizes_the_design() -> None:
    tasks = [f"T-{i}" for i in range(5)]
    never = [_trial("never", t, False, repeat=r) for t in tasks for r in (0, 1)]
    also_never = [_trial("also", t, False, repeat=r) for t in tasks for r in (0, 1)]
    half = [_trial("half", t, r == 0, repeat=r) for t in tasks for r in (0, 1)]
    pair = power.most_variable_pair([*never, *also_never, *half])
    assert pair is not None and "half" in (pair.a, pair.b) and pair.cell_sd > 0
    assert power.most_variable_pair(never) is None  # one model: no pair
    assert power.most_variable_pair([*never, *also_never]) is None  # they never differ


def test_an_unseparated_family_term_is_split_and_a_separated_one_kept() -> None:
    joint = VarianceComponents(family=0.04, instance=None, trial=0.08, families=31,
                               instances=1, trials=3)
    split = power.split_by_instances(joint, 0.25)
    assert (split.family, split.instance) == pytest.approx((0.03, 0.01))
    assert "split 0.25" in split.method
    # unsplit, 10 instances only average the trial term; split, they shrink the family term too
    assert power.planned(split, 31, 10, 1) < power.planned(joint, 31, 10, 1)
    assert power.planned(joint, 31, 1, 1) == pytest.approx(power.planned(split, 31, 1, 1))
    separated = split.model_copy(update={"instance": 0.02})
    assert power.split_by_instances(separated, 0.9) is separated
    with pytest.raises(StatsInputError):
        power.split_by_instances(joint, 1.5)


def test_the_instance_share_comes_from_a_run_over_instances() -> None:
    """One model over 3 instances of 6 families: the share is its instance / (family +
    instance); trials of one instance alone separate nothing."""
    rng = np.random.default_rng(3)
    runs = [_trial("m", f"T-{f}", bool(rng.random() < p), instance=i, repeat=r)
            for f in range(6) for i, p in enumerate((0.1, 0.9, 0.5)) for r in range(2)]
    share = power.instance_share(runs)
    assert share is not None and share[1] == "m"
    c = stats.variance_components(power._nest(
        {(t.task_id, t.instance, t.temperature, t.repeat): float(t.outcome == Outcome.SUCCESS)
         for t in runs}))
    assert share[0] == pytest.approx(c.instance / (c.family + c.instance))
    assert power.instance_share([t for t in runs if t.instance == 0]) is None


def test_the_table_covers_the_grid_and_shrinks_with_data() -> None:
    rows = power.power_table(power.DEFAULT_COMPONENTS)
    assert len(rows) == len(power.FAMILIES) * len(power.INSTANCES) * len(power.TRIALS)
    by = {(r.families, r.instances, r.trials): r.mdd for r in rows}
    assert by[(124, 10, 3)] < by[(62, 10, 3)] < by[(31, 10, 3)] < by[(31, 1, 1)]
    assert all(0 < v < 100 for v in by.values())


def test_a_split_plan_detects_its_mdd_with_its_power() -> None:
    """Simulated differences with a family, an instance and a trial term; the design is sized
    from one instance a family (the instance term unseparated) split by the true share, and a
    t test across families on 5 instances a family detects the planned MDD about 80% of the
    time (400 studies; the 99% binomial band around 0.8 is about ±0.05)."""
    rng = np.random.default_rng(11)
    fam, inst, trial, families = 0.03, 0.03, 0.09, 31
    one = [[rng.normal(0, fam ** .5) + rng.normal(0, inst ** .5) + rng.normal(0, trial ** .5, 3)]
           for _ in range(2000)]
    measured = stats.variance_components(one)
    assert measured.instance is None
    plan = power.split_by_instances(measured, inst / (fam + inst))
    mdd = power.planned(plan, families, 5, 3) / 100
    hits = 0
    for _ in range(400):
        means = [mdd + rng.normal(0, fam ** .5) + np.mean(
            [rng.normal(0, inst ** .5) + rng.normal(0, trial ** .5, 3).mean()
             for _ in range(5)]) for _ in range(families)]
        hits += sps.ttest_1samp(means, 0).pvalue < stats.MDD_ALPHA
    assert 0.72 <= hits / 400 <= 0.88
