"""A micro-task declared outside the package (tests/microtasks/greeting_task.py and its
YAML), registered by a fixture, runs through eligibility like the built-in four."""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Iterator
from pathlib import Path

import greeting_task
import pytest

from slmbench.core.errors import ConfigError
from slmbench.microtasks import tasks
from slmbench.microtasks import tasks as registry
from slmbench.microtasks.matrix import run_matrix
from slmbench.microtasks.readout import NO_LOGPROBS_NOTE

GREETINGS = ["hello there", "good morning team", "hey, how are you?", "hiya!", "howdy"]
OTHERS = ["the build failed again", "please send the report", "what time is the meeting?",
          "hello world is a program", "thanks, that is all"]


@pytest.fixture
def greeting() -> Iterator[tasks.MicroTask]:
    yield tasks.register(greeting_task.TASK)
    tasks.unregister("greeting")


def write_items(folder: Path) -> Path:
    """20 fit and 40 eval items, half of them greetings."""
    lines = []
    for split, copies in (("fit", 2), ("eval", 4)):
        for k in range(copies):
            for text, label in [(t, "greeting") for t in GREETINGS] + [(t, "other")
                                                                       for t in OTHERS]:
                lines.append(greeting_task.GreetingItem(
                    id=f"g-{split}-{k}-{len(lines)}", split=split, provenance=(), text=text,
                    label=label).model_dump_json())
    (folder / "greeting.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


def test_a_registered_task_runs_through_eligibility(greeting: tasks.MicroTask,
                                                    tmp_path: Path) -> None:
    assert "greeting" in tasks.names() and tasks.resolve(["greeting"]) == ["greeting"]
    script = tmp_path / "greeter.json"
    script.write_text(json.dumps({"rules": [{"match": r"(?i)message: (hello there|good morning|"
                                                      r"hey|hiya|howdy)", "reply": "Greeting."}],
                                  "default": "other"}))
    run = run_matrix([f"scripted:{script}"], [registry.get("greeting")], ["p0"],
                     source=write_items(tmp_path))
    (cell,) = run.cells
    assert (cell.task, cell.metric, cell.reading, cell.n_items) == ("greeting", "accuracy",
                                                                    "generation", 40)
    assert cell.score.estimate == 1.0  # "Greeting." parsed as greeting
    assert cell.format_failures == 0
    # the rule misses "hey", "hiya", "howdy" and takes "hello world is a program": 24 of 40
    assert cell.tau_anchor == "rules" and cell.tau == pytest.approx(0.6)
    assert cell.eligible and cell.note == NO_LOGPROBS_NOTE
    assert {r.task for r in run.readings} == {"greeting"}


def test_an_unregistered_task_is_refused_by_name(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="unknown micro-task"):
        run_matrix(["scripted:echo"], [registry.get("greeting")], ["p0"], source=tmp_path)
    with pytest.raises(ConfigError, match="already registered"):
        tasks.register(dataclasses.replace(greeting_task.TASK, name="approval"))


def test_the_recipe_in_the_docs_is_this_task() -> None:
    """docs/microtasks.md "A new micro-task" shows exactly the module and YAML run above."""
    docs = Path(__file__).resolve().parents[2] / "docs" / "microtasks.md"
    section = docs.read_text(encoding="utf-8").split("## A new micro-task", 1)[1]
    section = section.split("\n## ", 1)[0]
    blocks = dict(re.findall(r"```(python|yaml)\n(.*?)\n```", section, flags=re.DOTALL))
    here = Path(greeting_task.__file__)
    assert blocks["python"] + "\n" == here.read_text(encoding="utf-8")
    assert blocks["yaml"] + "\n" == here.with_name("greeting.yaml").read_text(encoding="utf-8")
