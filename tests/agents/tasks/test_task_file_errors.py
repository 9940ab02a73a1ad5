"""Hand-made bad task files: each is one ConfigError naming the file, the place and the field."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
import yaml

from slmbench.agents.tasks import load_suite
from slmbench.core import yamlfile
from slmbench.core.errors import ConfigError

TASK = {
    "id": "XX-1", "group": "data_analysis", "instruction": "How many products are there?",
    "tools": ["query_table"], "difficulty": 1, "scorer": {"kind": "numeric", "value": 10},
    "reference": {"actions": [{"tool": "query_table",
                               "arguments": {"table": "products", "aggregate": "count"}}],
                  "answer": "There are 10 products."},
}


def _suite(tmp_path: Path, **changes: object) -> Path:
    path = tmp_path / "mine.yaml"
    path.write_text(yaml.safe_dump({"suite": "capability", "tasks": [{**TASK, **changes}]}),
                    encoding="utf-8")
    return path


def _error(path: Path) -> str:
    with pytest.raises(ConfigError) as err:
        load_suite(path)
    assert err.value.hint
    assert "\n" not in str(err.value)
    return str(err.value)


def test_an_unknown_tool_names_file_task_and_field(tmp_path: Path) -> None:
    path = _suite(tmp_path, tools=["query_table", "calculator"])
    assert _error(path) == f"{path}: task XX-1: field tools.1: unknown tool 'calculator'"


def test_an_unknown_tool_in_the_reference_is_caught(tmp_path: Path) -> None:
    ref = {"actions": [{"tool": "calculator", "arguments": {}}], "answer": "10"}
    path = _suite(tmp_path, tools=["calculator"], reference=ref)
    assert "unknown tool 'calculator'" in _error(path)


@pytest.mark.parametrize(("scorer", "says"), [
    ({"kind": "numeric", "value": 10, "tolerance": float("inf")}, "tolerance"),
    ({"kind": "numeric", "value": 10, "tolerance": 5}, "wider than"),
    ({"kind": "numeric", "value": float("nan")}, "value"),
    ({"kind": "telepathy"}, "scorer"),
])
def test_a_scorer_that_accepts_anything_does_not_load(tmp_path: Path, scorer: dict,
                                                      says: str) -> None:
    assert says in _error(_suite(tmp_path, scorer=scorer))


def test_a_boolean_is_not_an_integer(tmp_path: Path) -> None:
    path = tmp_path / "mine.yaml"
    path.write_text(yaml.safe_dump({"suite": "capability", "tasks": [TASK]}).replace(
        "difficulty: 1", "difficulty: yes"), encoding="utf-8")
    assert "field difficulty" in _error(path)


def test_a_syntax_error_gives_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "mine.yaml"
    path.write_text("suite: capability\ntasks:\n  - id: XX-1\n    tools: [a, b\n",
                    encoding="utf-8")
    message = _error(path)
    assert message.startswith(f"{path}:") and message.endswith("(cannot read YAML)")
    assert any(f"{path}:{n}:" in message for n in range(3, 6))


def test_an_alias_bomb_is_refused_quickly_and_plain_reuse_is_not(tmp_path: Path) -> None:
    lines = ["a: &a [x, x, x, x, x, x, x, x, x]"]
    for i, name in enumerate("bcdefghi"):
        prev = "abcdefghi"[i]
        lines.append(f"{name}: &{name} [{', '.join(['*' + prev] * 9)}]")
    lines.append("tasks: [*i]")
    bomb = tmp_path / "bomb.yaml"
    bomb.write_text("\n".join(lines) + "\n", encoding="utf-8")
    start = time.perf_counter()
    assert "expand to more than" in _error(bomb)
    assert time.perf_counter() - start < 5  # refused before anything walks 9**9 nodes
    shared = tmp_path / "shared.yaml"  # safe_dump writes an anchor and an alias for a shared dict
    shared.write_text(yaml.safe_dump({"suite": "capability", "tasks": [TASK, {
        **TASK, "id": "XX-2", "reference": TASK["reference"]}]}), encoding="utf-8")
    assert "&id" in shared.read_text(encoding="utf-8")
    assert [t.id for t in load_suite(shared)] == ["XX-1", "XX-2"]


def test_an_oversized_file_is_refused_before_parsing(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(yamlfile, "MAX_BYTES", 100)
    assert "larger than the 100" in _error(_suite(tmp_path))

