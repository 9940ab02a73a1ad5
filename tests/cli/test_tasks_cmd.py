"""``slmbench tasks list`` and ``slmbench tasks validate``."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import yaml
from clirun import CliRunner

from slmbench.agents.tasks import SHIPPED_SUITES, load_suite

GOOD = {
    "id": "XX-1", "group": "data_analysis", "instruction": "How many products do we sell?",
    "tools": ["query_table"], "difficulty": 1, "scorer": {"kind": "numeric", "value": 10},
    "reference": {"actions": [{"tool": "query_table",
                               "arguments": {"table": "products", "aggregate": "count"}}],
                  "answer": "We sell 10 products."},
}


def _suite(tmp_path: Path, *tasks: dict) -> Path:
    path = tmp_path / "suite.yaml"
    path.write_text(yaml.safe_dump({"suite": "capability", "tasks": list(tasks)}))
    return path


def _counts(values: list[str]) -> str:
    return ", ".join(f"{k} {v}" for k, v in sorted(Counter(values).items()))


def test_list_shows_every_shipped_suite_with_counts(cli: CliRunner, home: Path) -> None:
    """The counts are the suites' own (derived here, not typed: a new family moves them)."""
    suites = {name: load_suite(name) for name in SHIPPED_SUITES}
    result = cli("tasks", "list")
    assert result.code == 0, result.err
    for name, tasks in suites.items():
        assert f"{name}: {len(tasks)} tasks" in result.out
    # the count lines wrap at the console's width (80 columns when its module was imported
    # before the fixture widened it): read them with the wrapping undone
    out = " ".join(result.out.split())
    core = suites["capability"]
    assert f"groups: {_counts([t.group for t in core])}" in out
    dims = [t.dimension for t in suites["reliability"] if t.dimension]
    assert f"dimensions: {_counts(dims)}" in out
    # the last line counts what capability rates run over: both capability suites' families
    capability = [t.group for ts in suites.values() for t in ts if t.suite == "capability"]
    last = f"capability families in all ({len(capability)}), groups: {_counts(capability)}"
    assert out.rstrip().endswith(last)
    for task_id in ("IR-1", "CD-3", "SF-4", "RC-1", "RF-3", "RS-3", "IR-8", "SF-7"):
        assert task_id in result.out


def test_list_one_suite_or_a_file(cli: CliRunner, home: Path, tmp_path: Path) -> None:
    result = cli("tasks", "list", "--suite", "reliability")
    assert "reliability: 14 tasks" in result.out and "capability" not in result.out
    result = cli("tasks", "list", "--file", str(_suite(tmp_path, GOOD)))
    assert result.code == 0 and "1 tasks" in result.out and "XX-1" in result.out


def test_validate_replays_references(cli: CliRunner, home: Path, tmp_path: Path) -> None:
    result = cli("tasks", "validate", str(_suite(tmp_path, GOOD)))
    assert result.code == 0, result.out
    assert "every reference solution succeeds" in result.out
    # the world shows 10 (derivable), but the reference answers 11
    wrong = {**GOOD, "reference": {**GOOD["reference"], "answer": "We sell 11 products."}}
    result = cli("tasks", "validate", str(_suite(tmp_path, wrong)))
    assert result.code == 1
    assert "FAIL XX-1 (base): wrong_answer: stated 11; expected 10" in result.out


def test_validate_reports_a_malformed_file_in_one_line(cli: CliRunner, home: Path,
                                                       tmp_path: Path) -> None:
    path = _suite(tmp_path, {**GOOD, "difficulty": 9})
    result = cli("tasks", "validate", str(path))
    assert result.code == 2
    assert f"{path}: task XX-1: field difficulty" in result.err
    assert "Traceback" not in result.err and "what to do" in result.err


def test_shipped_suites_validate(cli: CliRunner, home: Path) -> None:
    from slmbench.agents.tasks.loader import suite_path

    for name in ("capability", "reliability"):
        result = cli("tasks", "validate", str(suite_path(name)))
        assert result.code == 0, result.out


def test_validate_instances_certifies_families_and_refuses_a_fixed_answer(
        cli: CliRunner, home: Path, tmp_path: Path) -> None:
    """A user's task has no family template: it is the same in every world, so its answer
    (10 products, in every world) can be remembered, and certification says so: the family,
    the agent, the seed and the answer that passed."""
    result = cli("tasks", "validate", str(_suite(tmp_path, GOOD)), "--instances", "2",
                 "--no-reference")
    assert result.code == 1, result.err
    out = " ".join(result.out.split())
    assert "FAIL XX-1: the same in every world" in out
    assert "XX-1: the memory agent is right on 2/2" in out
    assert "seed 1: 'We sell 10 products.'" in out
    assert "1 famil(ies) not certified: XX-1" in out
    fixed = {**GOOD, "fixed": "the catalogue is the same in every world, on purpose"}
    result = cli("tasks", "validate", str(_suite(tmp_path, fixed)), "--instances", "2",
                 "--no-reference")
    assert "same in every world" not in result.out and "memory agent" in result.out


def test_validate_prints_the_reference_step_that_failed(cli: CliRunner, home: Path,
                                                        tmp_path: Path) -> None:
    wrong = {**GOOD, "id": "XX-2", "fixed": "the catalogue is the same in every world",
             "reference": {**GOOD["reference"], "answer": "We sell 11 products."}}
    result = cli("tasks", "validate", str(_suite(tmp_path, wrong)), "--instances", "1",
                 "--no-reference")
    assert result.code == 1, result.err
    out = " ".join(result.out.split())
    assert "FAIL XX-2 seed 1: reference wrong_answer (stated 11; expected 10" in out


def test_a_user_task_reusing_a_shipped_id_is_an_error(cli: CliRunner, home: Path,
                                                      tmp_path: Path) -> None:
    result = cli("tasks", "validate", str(_suite(tmp_path, {**GOOD, "id": "IR-1"})))
    assert result.code == 2
    assert "task IR-1: field id: id IR-1 is a shipped family: rename it" in result.err
    assert "Traceback" not in result.err
    result = cli("tasks", "validate", "capability", "--instances", "1", "--no-reference")
    assert "31 tasks parse and validate" in result.out and "IR-1" in result.out
