"""``slmbench tasks list`` and ``slmbench tasks validate``."""

from __future__ import annotations

from pathlib import Path

import yaml
from clirun import CliRunner

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


def test_list_shows_every_shipped_suite_with_counts(cli: CliRunner, home: Path) -> None:
    result = cli("tasks", "list")
    assert result.code == 0, result.err
    assert "capability: 31 tasks" in result.out and "reliability: 14 tasks" in result.out
    # the count lines wrap at the console's width (80 columns when its module was imported
    # before the fixture widened it): read them with the wrapping undone
    out = " ".join(result.out.split())
    assert ("groups: coding 3, communication 4, data_analysis 4, decision_making 3, "
            "information_retrieval 5, multi_step_reasoning 4, safety 4, scheduling 4") in out
    assert "dimensions: consistency 4, fault_tolerance 3, robustness 4, safety 3" in out
    # the last line counts what capability rates run over: both capability suites' families
    assert ("capability families in all (62), groups: coding 7, communication 8, "
            "data_analysis 8, decision_making 8, information_retrieval 8, "
            "multi_step_reasoning 8, safety 7, scheduling 8") in out
    assert out.rstrip().endswith("safety 7, scheduling 8")
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
    (10 products, in every world) can be remembered, and certification says so."""
    result = cli("tasks", "validate", str(_suite(tmp_path, GOOD)), "--instances", "2",
                 "--no-reference")
    assert result.code == 1, result.err
    assert "XX-1" in result.out and "2/2" in result.out and "FAIL" in result.out
    assert "1 famil(ies) not certified: XX-1" in result.out
    result = cli("tasks", "validate", "capability", "--instances", "1", "--no-reference")
    assert "31 tasks parse and validate" in result.out and "IR-1" in result.out
