"""A bad file a user wrote is named in the error: ``FILE:LINE:COLUMN: ...`` for a syntax error,
``FILE: field: ...`` for a schema error; one line, a hint, exit 2.

Covers the four kinds of file a user writes: an experiment (TOML), a study (TOML), an agent
task suite (YAML) and a micro-task file (YAML).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml
from clirun import CliResult, CliRunner

from slmbench.core.errors import ConfigError
from slmbench.core.tomlfile import load_toml

EXAMPLE = Path(__file__).parents[2] / "examples" / "my-tools.yaml"
TASK = {"id": "XX-1", "group": "data_analysis", "instruction": "How many products are there?",
        "tools": ["query_table"], "difficulty": 1, "scorer": {"kind": "numeric", "value": 10},
        "reference": {"actions": [{"tool": "query_table",
                                   "arguments": {"table": "products", "aggregate": "count"}}],
                      "answer": "There are 10 products."}}


def _error_line(result: CliResult) -> str:
    """The error line of a refused command (exit 2, one error line and one hint line)."""
    assert result.code == 2, result.out + result.err
    lines = result.err.strip().splitlines()
    assert len(lines) == 2 and lines[1].startswith("what to do: "), result.err
    assert lines[0].startswith("error: "), result.err
    return lines[0].removeprefix("error: ")


@pytest.mark.parametrize(("text", "place", "problem"), [
    ('name = "x"\nmodels = ["scripted:echo"\nsuites = ["quick"]\n', ":3:1:", "Unclosed array"),
    ('name = "x"\nrepeats = 2 3\n', ":2:13:", "Expected newline"),
    ('name = "x"\nname = "y"\n', ":2:", "Cannot overwrite a value"),
    ('name = "x\n', ":1:", "Illegal character"),
    ('name = "x"\nmodels = [', ":2:11:", "not valid TOML"),  # at the end of the document
])
@pytest.mark.parametrize("kind", ["experiment", "study"])
def test_a_toml_syntax_error_names_the_file_line_and_column(
        cli: CliRunner, home: Path, tmp_path: Path, kind: str, text: str, place: str,
        problem: str) -> None:
    path = tmp_path / f"my {kind}.toml"
    path.write_text(text, encoding="utf-8")
    line = _error_line(cli("run" if kind == "experiment" else "study", str(path)))
    assert line.startswith(f"{path}{place}"), line
    assert problem in line and line.endswith("(not valid TOML)"), line
    assert not (tmp_path / "runs").exists()


@pytest.mark.parametrize(("kind", "text", "says"), [
    ("experiment", 'name = "x"\nmodels = ["scripted:echo"]\nsuites = ["quick"]\nrepeats = 0\n',
     "repeats: Input should be greater than or equal to 1 (got 0)"),
    ("experiment", 'name = "x"\nmodels = "scripted:echo"\nsuites = ["quick"]\n',
     "models: Input should be a valid list (got 'scripted:echo')"),
    ("experiment", 'name = "x"\nmodel = ["scripted:echo"]\nsuites = ["quick"]\n',
     "models: Field required (and 1 more)"),
    ("study", 'name = "s"\nout = "o"\n[part_a]\nmodels = ["scripted:echo"]\nrepeats = 0\n',
     "part_a.0.repeats: Input should be greater than or equal to 1 (got 0)"),
    ("study", 'name = "s"\nout = "o"\n[part_b]\nmodels = ["scripted:echo"]\ntasks = ["x"]\n',
     "part_b.0.tasks.0: Input should be"),
    ("study", 'name = "s"\nout = "o"\n', "has no [part_a], [part_b], [cascade] or [agreement]"),
])
def test_a_toml_schema_error_names_the_file_and_the_field(
        cli: CliRunner, home: Path, tmp_path: Path, kind: str, text: str, says: str) -> None:
    path = tmp_path / f"{kind}.toml"
    path.write_text(text, encoding="utf-8")
    line = _error_line(cli("run" if kind == "experiment" else "study", str(path)))
    assert line.startswith(f"{path}: "), line
    assert says in line, line


def test_a_missing_toml_file_is_named(cli: CliRunner, home: Path, tmp_path: Path) -> None:
    for command, what in (("run", "experiment file"), ("study", "study file")):
        line = _error_line(cli(command, str(tmp_path / "nope.toml")))
        assert line == f"{what} {tmp_path / 'nope.toml'} does not exist"


def test_toml_nested_past_the_parser_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "deep.toml"
    path.write_text("a = " + "[" * 5000, encoding="utf-8")
    with pytest.raises(ConfigError) as err:
        load_toml(path, what="experiment file", hint="fix it")
    assert str(err.value) == f"{path}: nested too deeply (not valid TOML here)"


def test_a_file_that_is_not_utf8_is_named(tmp_path: Path) -> None:
    path = tmp_path / "latin1.toml"
    path.write_bytes('name = "café"\n'.encode("latin-1"))
    with pytest.raises(ConfigError) as err:
        load_toml(path, what="experiment file", hint="fix it")
    assert str(err.value).startswith(f"{path}: cannot read it: ")


@pytest.mark.parametrize(("command", "text", "start", "says"), [
    ("validate", "suite: capability\ntasks:\n  - id: XX-1\n    tools: [a, b\n", ":5:1: ",
     "(cannot read YAML)"),
    ("validate", yaml.safe_dump({"suite": "capability", "tasks": [{**TASK, "difficulty": "x"}]}),
     ": task XX-1: field difficulty: ", "Input should be a valid integer"),
    ("validate", yaml.safe_dump({"suite": "capability", "tasks": [TASK], "tsks": []}),
     ": unknown top-level key(s) ['tsks']", ""),
    ("list", "tasks: [\n", ":2:1: ", "(cannot read YAML)"),
])
def test_a_task_file_error_names_the_file(cli: CliRunner, home: Path, tmp_path: Path,
                                          command: str, text: str, start: str,
                                          says: str) -> None:
    path = tmp_path / "my tasks.yaml"
    path.write_text(text, encoding="utf-8")
    argv = ("tasks", "validate", str(path)) if command == "validate" else (
        "tasks", "list", "--file", str(path))
    line = _error_line(cli(*argv))
    assert line.startswith(f"{path}{start}"), line
    assert says in line, line


@pytest.fixture
def micro_task(tmp_path: Path) -> Path:
    for name in ("my-tools.yaml", "my-tools.jsonl"):
        shutil.copy(EXAMPLE.parent / name, tmp_path / name)
    yield tmp_path / "my-tools.yaml"
    from slmbench.microtasks import tasks as registry

    registry.unregister("my-tools")


@pytest.mark.parametrize(("edit", "start", "says"), [
    (lambda text: text + "\nprompts: [\n", ":", "(cannot read YAML)"),
    (lambda text: text.replace("metric:", "metrik:", 1), ": metrik: ", "not permitted"),
])
def test_a_micro_task_file_error_names_the_file(cli: CliRunner, home: Path, tmp_path: Path,
                                                micro_task: Path, edit, start: str,
                                                says: str) -> None:
    text = micro_task.read_text(encoding="utf-8")
    assert "metric:" in text  # the example sets its metric (the edit above renames it)
    micro_task.write_text(edit(text), encoding="utf-8")
    line = _error_line(cli("eligibility", "-m", "scripted:echo", "--task-file", str(micro_task),
                           "--out", str(tmp_path / "out")))
    assert line.startswith(f"{micro_task}{start}"), line
    assert says in line, line
    assert not (tmp_path / "out").exists()
