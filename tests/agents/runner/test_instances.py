"""Running task instances (issue #39): each trial in its instance's world, end to end."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from runner_fakes import CountingLoader

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


def test_a_run_stored_before_instances_resumes_with_nothing_to_run(
        tmp_path: Path, fakes: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    """The same grid, stored in the schema 1 shape (no instance column, records without the
    field): opened by this slmbench it migrates, and every planned key is already there."""
    import sqlite3

    exp = build_experiment({"models": ["scripted:a"], "suites": ["alpha"],
                            "temperatures": [0.0, 0.7], "repeats": 2})
    first = execute(exp, run_dir=tmp_path, progress=_quiet(), model_loader=CountingLoader(),
                    **fakes)
    assert first.complete and first.run_now == first.planned == 16
    with sqlite3.connect(tmp_path / "run.sqlite") as conn:  # back to the schema 1 shape
        conn.executescript("""
            CREATE TABLE old (model TEXT NOT NULL, task TEXT NOT NULL, variant TEXT NOT NULL,
                temperature REAL NOT NULL, seed INTEGER NOT NULL, repeat INTEGER NOT NULL,
                outcome TEXT NOT NULL, record TEXT NOT NULL, created_at REAL NOT NULL,
                PRIMARY KEY (model, task, variant, temperature, seed, repeat));
            INSERT INTO old SELECT model, task, variant, temperature, seed, repeat, outcome,
                json_remove(record, '$.instance'), created_at FROM trials;
            DROP TABLE trials;
            ALTER TABLE old RENAME TO trials;
            UPDATE meta SET value = '1' WHERE key = 'schema_version';
        """)
    again = execute(exp, run_dir=tmp_path, progress=_quiet(), model_loader=CountingLoader(),
                    **fakes)
    assert again.complete and again.run_now == 0 and again.stored == 16
    monkeypatch.setattr(families, "instance", lambda task, seed: task)  # fake tasks: no family
    more = execute(exp.model_copy(update={"instances": 2}), run_dir=tmp_path / "two",
                   progress=_quiet(), model_loader=CountingLoader(),
                   **{**fakes, "trial_fn": _instance_aware(fakes)})
    assert more.planned == 32
    with RunStore(tmp_path / "two") as store, RunStore(tmp_path) as old:
        zero = {k for k in store.keys() if k.instance == 0}
        assert zero == old.keys()  # instance 0 of a 2-instance grid is the old run, key for key


def _instance_aware(fakes: dict[str, Any]) -> Any:
    """The fake trial function, recording the instance it was given."""

    def trial(model: Any, task: Any, *, instance: int = 0, **kw: Any) -> Trial:
        made: Trial = fakes["trial_fn"](model, task, **kw)
        return made.model_copy(update={"instance": instance})

    return trial


def test_drawn_instances_of_a_task_that_is_not_shipped_are_refused_before_any_folder(
        tmp_path: Path) -> None:
    from slmbench.core.errors import ConfigError

    mine = FAMILY.model_copy(update={"instruction": "What is the total of all our sales?"})
    exp = build_experiment({"models": ["scripted:echo"], "tasks": ["DA-1"],
                            "temperatures": [0.0], "repeats": 1, "instances": 2})
    with pytest.raises(ConfigError, match="DA-1 is not a shipped task as shipped") as exc:
        execute(exp, run_dir=tmp_path / "run", load_suite=lambda _: [mine], progress=_quiet())
    assert "instances = 1" in (exc.value.hint or "")
    assert not (tmp_path / "run").exists()
    # the same task file at instance 0 alone (its own world) runs
    one = exp.model_copy(update={"instances": 1})
    assert execute(one, run_dir=tmp_path / "run", load_suite=lambda _: [mine],
                   progress=_quiet()).complete
