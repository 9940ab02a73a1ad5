"""Running task instances (issue #39): each trial in its instance's world, end to end."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from slmbench.agents.records import Outcome, Trial
from slmbench.agents.runner.config import build_experiment
from slmbench.agents.runner.executor import execute
from slmbench.agents.store import RunStore
from slmbench.agents.tasks import families, load_tasks
from slmbench.agents.tasks.reference import reference_agent
from slmbench.models.base import Model

TASKS = load_tasks()
FAMILY = TASKS["DA-1"]  # the same question in every world; its answer is the world's
DRAWN = families.instance(FAMILY, 1)


def _quiet() -> Any:
    from io import StringIO

    from rich.console import Console

    from slmbench.agents.runner.progress import PlainProgress

    return PlainProgress(Console(file=StringIO(), width=200))


def _loader(spec: str) -> Model:
    """``scripted:seed0`` plays the curated task's reference (seed 0's tool calls and answer);
    ``scripted:seed1`` plays instance 1's."""
    task = FAMILY if spec == "scripted:seed0" else DRAWN
    model = reference_agent(task)
    model.spec = spec
    return model


def test_each_trial_runs_and_is_judged_in_its_instances_world(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert DRAWN.world_seed == 1 and DRAWN.reference.answer != FAMILY.reference.answer
    built: list[int] = []
    real = families.instance

    def counting(task: Any, seed: int) -> Any:
        built.append(seed)
        return real(task, seed)

    monkeypatch.setattr(families, "instance", counting)
    exp = build_experiment({"models": ["scripted:seed0", "scripted:seed1"], "tasks": ["DA-1"],
                            "temperatures": [0.0, 0.7], "repeats": 2, "instances": 2,
                            "cache": "off"})
    summary = execute(exp, run_dir=tmp_path, model_loader=_loader, progress=_quiet())
    assert summary.complete and summary.stored == 2 * 2 * 2 * 2
    assert built == [1]  # instance 1 built once for its 8 trials; instance 0 is the task itself
    with RunStore(tmp_path) as store:
        trials = [Trial.model_validate(t.record) for t in store.trials()]
        assert all(t.key == s.key for t, s in zip(trials, store.trials(), strict=True))
    outcome = {(t.model, t.instance): set() for t in trials}
    for t in trials:
        outcome[(t.model, t.instance)].add(t.outcome)
    assert outcome == {
        ("scripted:seed0", 0): {Outcome.SUCCESS},  # seed 0's answer in seed 0's world
        ("scripted:seed0", 1): {Outcome.WRONG_ANSWER},  # ... is wrong in world 1
        ("scripted:seed1", 0): {Outcome.WRONG_ANSWER},
        ("scripted:seed1", 1): {Outcome.SUCCESS},  # instance 1's answer in world 1
    }
    # every instance of a family is made by one harness: the family's
    assert len({t.harness for t in trials}) == 1
    right = next(t for t in trials if (t.model, t.instance) == ("scripted:seed1", 1))
    assert "47,671" in (right.final_answer or "") and right.seed != next(
        t.seed for t in trials if t.instance == 0 and t.repeat == right.repeat)
