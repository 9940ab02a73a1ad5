"""A task file whose expected answer the seeded world cannot produce does not load (issue #21).

``tasks validate``, ``tasks list --file`` and ``run --suite FILE`` all stop with one line
naming the file, the task and the field, exit 2, and write nothing.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from clirun import CliRunner

from slmbench.agents.evaluator import load_task_file
from slmbench.core.errors import ConfigError

TASK = {
    "id": "XX-1", "group": "data_analysis", "instruction": "How many products do we sell?",
    "tools": ["query_table"], "difficulty": 1, "scorer": {"kind": "numeric", "value": 10},
    "reference": {"actions": [{"tool": "query_table",
                               "arguments": {"table": "products", "aggregate": "count"}}],
                  "answer": "We sell 10 products."},
}
BAD = {
    # the reference just asserts a number no tool shows (nor a sum or difference of two)
    "asserted number": ({"scorer": {"kind": "numeric", "value": 987654},
                         "reference": {**TASK["reference"], "answer": "987654"}},
                        "field scorer: the expected number 987654 is in no tool result"),
    # the reference's call fails, yet its answer would be scored right
    "failing call": ({"reference": {"actions": [{"tool": "query_table", "arguments": {
                         "table": "spaceships", "aggregate": "count"}}], "answer": "10"}},
                     "field reference.actions.0: query_table returns an error"),
    "asserted name": ({"scorer": {"kind": "entities", "required": ["Zebulon Quark"]},
                       "reference": {**TASK["reference"], "answer": "Zebulon Quark"}},
                      "field scorer: the expected 'Zebulon Quark' is in no tool result"),
}


def _file(tmp_path: Path, **changes: object) -> Path:
    path = tmp_path / "mine.yaml"
    path.write_text(yaml.safe_dump({"suite": "capability", "tasks": [{**TASK, **changes}]}),
                    encoding="utf-8")
    return path


def test_a_derivable_task_loads(tmp_path: Path) -> None:
    assert [t.id for t in load_task_file(_file(tmp_path))] == ["XX-1"]


@pytest.mark.parametrize("case", sorted(BAD))
def test_an_underivable_task_is_one_line_naming_file_task_and_field(tmp_path: Path,
                                                                    case: str) -> None:
    changes, says = BAD[case]
    path = _file(tmp_path, **changes)
    with pytest.raises(ConfigError) as err:
        load_task_file(path)
    assert str(err.value).startswith(f"{path}: task XX-1: {says}"), str(err.value)
    assert "\n" not in str(err.value) and "seeded world" in (err.value.hint or "")


@pytest.mark.parametrize("case", sorted(BAD))
def test_every_command_that_loads_a_task_file_refuses_it(cli: CliRunner, home: Path,
                                                         tmp_path: Path, case: str) -> None:
    changes, says = BAD[case]
    path = _file(tmp_path, **changes)
    out = tmp_path / "run"
    for argv in (("tasks", "validate", str(path)), ("tasks", "list", "--file", str(path)),
                 ("run", "--suite", str(path), "--model", "scripted:silent",
                  "--temperature", "0", "--repeats", "1", "--out", str(out))):
        result = cli(*argv)
        assert result.code == 2, (argv, result.out, result.err)
        lines = [ln for ln in result.err.splitlines() if ln.strip()]
        assert lines[0].startswith("error:") and says in " ".join(lines), result.err
        assert "Traceback" not in result.err
    assert not out.exists()  # nothing half-written
