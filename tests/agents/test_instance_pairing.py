"""Instances in the analysis (issue #39): trials pair within one instance, and a family (every
instance and repeat of one task id) is one cluster."""

from __future__ import annotations

from pathlib import Path

from slmbench.agents.analysis import analyze
from slmbench.agents.comparison import pair_trials
from slmbench.agents.rates import task_counts
from slmbench.agents.records import Outcome, Trial
from slmbench.agents.reliability import consistency, robustness, safety
from slmbench.agents.runner.model_reports import RunnerStats, build_model_report
from slmbench.agents.tasks import load_tasks

TASKS = load_tasks()
CAPABILITY = ["IR-1", "IR-2", "DA-1", "SC-1"]


def _trial(model: str, task: str, instance: int, ok: bool, *, repeat: int = 0,
           seed: int | None = None, variant: str = "base", temperature: float = 0.0,
           suite: str = "capability") -> Trial:
    return Trial(model=model, task_id=task, suite=suite, variant=variant,
                 temperature=temperature, seed=1000 * instance + repeat if seed is None else seed,
                 repeat=repeat, instance=instance,
                 outcome=Outcome.SUCCESS if ok else Outcome.WRONG_ANSWER, final_answer="x")


def test_two_models_pair_only_on_the_instances_both_ran() -> None:
    """a: right in world 0, wrong in world 1; b ran world 0 only, right. Paired by instance the
    two tie (world 0 against world 0); pooled over a's worlds, a would look 0.5 behind."""
    a = [_trial("scripted:a", task, i, ok=i == 0) for task in CAPABILITY for i in (0, 1)]
    b = [_trial("scripted:b", task, 0, ok=True) for task in CAPABILITY]
    summary = analyze([*a, *b], tasks=TASKS)
    (pair,) = summary.pairwise
    assert pair.cells == len(CAPABILITY)  # one shared cell per task: instance 0
    assert pair.comparison.mean_difference == 0.0
    assert pair.comparison.ties == len(CAPABILITY)
    # b ran world 1 too, and failed it: now both worlds pair, still a tie in every task
    b += [_trial("scripted:b", task, 1, ok=False) for task in CAPABILITY]
    (pair,) = analyze([*a, *b], tasks=TASKS).pairwise
    assert pair.cells == 2 * len(CAPABILITY) and pair.comparison.mean_difference == 0.0


def test_trials_of_two_instances_are_never_one_pair() -> None:
    here = [_trial("m", "IR-1", 0, ok=True, seed=5)]
    there = [_trial("m", "IR-1", 1, ok=False, seed=5)]  # same key but for the instance
    pairs, unpaired = pair_trials(here, there)
    assert pairs == [] and unpaired == 2
    assert pair_trials(here, here)[0] == [(here[0], here[0])]


def test_a_family_is_one_cluster_whatever_its_instances_and_repeats() -> None:
    trials = [_trial("m", task, i, ok=(i + r) % 2 == 0, repeat=r)
              for task in ("IR-1", "DA-1") for i in range(3) for r in range(2)]
    assert task_counts(trials) == [(6, 3), (6, 3)]  # DA-1, IR-1: 3 worlds x 2 repeats each
    accuracy = analyze(trials, tasks=TASKS).accuracy[0]
    assert accuracy.tasks == 2 and accuracy.accuracy.tasks == 2  # type: ignore[union-attr]
    assert accuracy.trials == 12 and accuracy.accuracy.n == 12
    report = build_model_report(trials, model="m", run_dir=Path("r"), experiment=None,
                                fingerprint="f", planned=12, runner=RunnerStats(), tasks=TASKS)
    assert [(row.task_id, row.n) for row in report.tasks] == [("DA-1", 6), ("IR-1", 6)]
    assert report.success is not None and report.success.tasks == 2


def test_consistency_repeats_one_instance_and_robustness_pairs_within_it() -> None:
    runs = [_trial("m", task, i, ok=True, repeat=r, temperature=0.7, suite="reliability")
            for task in ("RC-1", "RC-2", "RC-3") for i in (0, 1) for r in range(3)]
    got = consistency(runs)
    assert got.items == 6 and got.tasks == 3  # (task, instance, T) items; three families
    assert sorted(got.item_tasks) == sorted(["RC-1", "RC-2", "RC-3"] * 2)
    assert got.counts == [(3, 3)] * 6
    base = _trial("m", "RR-1", 0, ok=True, seed=5, suite="reliability")
    other_world = _trial("m", "RR-1", 1, ok=False, seed=5, variant="para1", suite="reliability")
    assert robustness([base, other_world]).pairs == 0
    same_world = other_world.model_copy(update={"instance": 0})
    assert robustness([base, same_world]).pairs == 1


def test_a_safety_trial_counts_under_its_instances_expected_behaviour() -> None:
    """RS-1 asks for a fraud at seed 0 and something benign at seed 1 (families alternate)."""
    harmful = _trial("m", "RS-1", 0, ok=True, suite="reliability")
    benign = _trial("m", "RS-1", 1, ok=False, suite="reliability")
    got = safety([harmful, benign], TASKS)
    assert got.by_expectation == {"comply": 0.0, "refuse": 1.0}


def test_two_runtimes_pair_only_on_the_instances_both_ran() -> None:
    from slmbench.agents.agreement import compare_runtimes

    a = [_trial("llamacpp:m", task, i, ok=i == 0) for task in CAPABILITY for i in (0, 1)]
    b = [_trial("llamaserver:m", task, 0, ok=True) for task in CAPABILITY]
    (pair,) = compare_runtimes({"a": a, "b": b})
    assert pair.pairs == len(CAPABILITY) and pair.unpaired == len(CAPABILITY)
    assert pair.by_task.mean_difference == 0.0
