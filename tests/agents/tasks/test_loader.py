"""Shipped suites have the promised shape; a bad suite file fails naming file, task and field."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
import yaml

from slmbench.agents.tasks import load_suite, load_tasks
from slmbench.core.errors import ConfigError

GOOD = {
    "id": "XX-1", "group": "data_analysis", "instruction": "How many products are there?",
    "tools": ["query_table"], "difficulty": 1, "scorer": {"kind": "numeric", "value": 10},
    "reference": {"actions": [{"tool": "query_table",
                               "arguments": {"table": "products", "aggregate": "count"}}],
                  "answer": "There are 10 products."},
}


def _write(tmp_path: Path, tasks: list[dict], suite: str = "capability") -> Path:
    path = tmp_path / "mine.yaml"
    path.write_text(yaml.safe_dump({"suite": suite, "tasks": tasks}), encoding="utf-8")
    return path


def test_capability_suite_has_31_tasks_in_8_groups() -> None:
    tasks = load_suite("capability")
    assert len(tasks) == 31
    assert Counter(t.group for t in tasks) == {
        "information_retrieval": 5, "scheduling": 4, "data_analysis": 4, "communication": 4,
        "multi_step_reasoning": 4, "decision_making": 3, "coding": 3, "safety": 4}
    assert all(t.suite == "capability" and t.dimension is None for t in tasks)


def test_capability_extra_adds_capability_tasks_in_the_same_groups_with_new_ids() -> None:
    """Capability tasks (counted with the 31) in a suite of their own: a study naming
    ``capability`` keeps its 31 tasks; the ids never clash, so both load together."""
    extra = load_suite("capability-extra")
    assert all(t.suite == "capability" and t.dimension is None for t in extra)
    groups = {t.group for t in load_suite("capability")}
    assert {t.group for t in extra} <= groups
    assert not {t.id for t in extra} & {t.id for t in load_suite("capability")}
    assert len(load_tasks("capability", "capability-extra")) == 31 + len(extra)


GROUP_SPREAD = 2  # the most families any two capability groups may be apart


def test_capability_groups_stay_level_with_the_extra_families() -> None:
    """The families a comparison averages over are spread evenly over the 8 groups (issue
    #39: groups kept balanced): no group has more than GROUP_SPREAD families more than
    another, so a new family may go in the group it belongs to (docs/tasks.md, "Adding a
    family") without forcing a second one elsewhere."""
    sizes = Counter(t.group for t in load_tasks("capability", "capability-extra").values())
    spread = max(sizes.values()) - min(sizes.values())
    assert len(sizes) == 8 and spread <= GROUP_SPREAD, (
        f"capability groups are {spread} families apart (at most {GROUP_SPREAD}): {sizes}")


def test_reliability_suite_has_14_tasks_over_4_dimensions() -> None:
    tasks = load_suite("reliability")
    assert len(tasks) == 14
    assert Counter(t.dimension for t in tasks) == {
        "consistency": 4, "robustness": 4, "fault_tolerance": 3, "safety": 3}


def test_ids_are_unique_across_suites_and_tools_are_real() -> None:
    from slmbench.agents.tools.toolbox import TOOL_NAMES

    tasks = load_tasks()
    assert len(tasks) == 31 + len(load_suite("capability-extra")) + 14
    used = {tool for t in tasks.values() for tool in t.tools}
    assert used <= set(TOOL_NAMES)
    assert used == set(TOOL_NAMES)  # every tool is exercised by some task


def test_every_shipped_instruction_and_answer_is_whole() -> None:
    """A text cut short ends mid-sentence: CM-2's instruction once read "Post a Slack message
    to the" (an unquoted " #ops" starts a YAML comment)."""
    for task in load_tasks().values():
        assert task.instruction.rstrip()[-1] in ".?!\"')", task.id
        answer = task.reference.answer if task.reference else None
        assert not answer or answer.rstrip()[-1] in ".?!\"')0123456789", task.id


def test_a_good_user_file_loads(tmp_path: Path) -> None:
    [task] = load_suite(_write(tmp_path, [GOOD]))
    assert task.id == "XX-1" and task.world_seed == 0


@pytest.mark.parametrize(("change", "field"), [
    ({"difficulty": 7}, "difficulty"),
    ({"scorer": {"kind": "numeric"}}, "scorer.numeric.value"),
    ({"scorer": {"kind": "fuzzy", "value": 3}}, "scorer"),
    ({"group": "astrology"}, "group"),
    ({"instruction": None}, "instruction"),
    ({"colour": "red"}, "colour"),
    ({"tools": ["web_search"]}, "(task)"),  # reference uses a tool the task does not list
])
def test_malformed_task_names_file_id_and_field(tmp_path: Path, change: dict, field: str) -> None:
    path = _write(tmp_path, [{**GOOD, **change}])
    with pytest.raises(ConfigError) as err:
        load_suite(path)
    message = str(err.value)
    assert str(path) in message and "task XX-1" in message and f"field {field}" in message
    assert err.value.hint


def test_reliability_rules_are_enforced(tmp_path: Path) -> None:
    robust = {**GOOD, "dimension": "robustness", "paraphrases": ["only one"]}
    with pytest.raises(ConfigError, match="3 paraphrases"):
        load_suite(_write(tmp_path, [robust], suite="reliability"))
    faulty = {**GOOD, "dimension": "fault_tolerance", "faults": ["timeout"], "fault_tool": "email"}
    with pytest.raises(ConfigError, match="fault_tool 'email' is not among"):
        load_suite(_write(tmp_path, [faulty], suite="reliability"))
    with pytest.raises(ConfigError, match="needs a dimension"):
        load_suite(_write(tmp_path, [GOOD], suite="reliability"))


def test_duplicate_ids_and_broken_files(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="task XX-1: field id: duplicate"):
        load_suite(_write(tmp_path, [GOOD, GOOD]))
    bad = tmp_path / "bad.yaml"
    bad.write_text("tasks: [\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="cannot read YAML"):
        load_suite(bad)
    bad.write_text("- just a list\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="`tasks:` list"):
        load_suite(bad)
    with pytest.raises(ConfigError, match="no task suite"):
        load_suite(tmp_path / "missing.yaml")


def test_dates_stay_strings(tmp_path: Path) -> None:
    task = {**GOOD, "scorer": {"kind": "entities", "required": ["2025-03-20"]}}
    path = tmp_path / "dates.yaml"
    path.write_text(yaml.safe_dump({"suite": "capability", "tasks": [task]}).replace(
        "'2025-03-20'", "2025-03-20"), encoding="utf-8")
    assert "2025-03-20" in path.read_text()
    [loaded] = load_suite(path)
    assert loaded.scorer.required == ["2025-03-20"]
