"""Per-model reports from a real (evaluator + tasks) run of a scripted model."""

from __future__ import annotations

import io
import json
from pathlib import Path

from rich.console import Console

from slmbench.agents.runner.config import build_experiment
from slmbench.agents.runner.executor import execute
from slmbench.agents.runner.model_reports import ModelReport, model_slug
from slmbench.agents.runner.progress import PlainProgress


def quiet() -> PlainProgress:
    return PlainProgress(Console(file=io.StringIO()))


def test_reliability_dimensions_of_an_always_failing_model_are_zero(tmp_path: Path) -> None:
    exp = build_experiment({"models": ["scripted:echo"], "suites": ["reliability"],
                            "tasks": ["RC-1", "RR-1", "RF-1", "RS-1"], "temperatures": [0.7],
                            "repeats": 2})  # consistency is measured at T > 0 only
    summary = execute(exp, run_dir=tmp_path, progress=quiet())
    # RC-1 1 variant x 3 (its min_repeats), RR-1 base + 8 rewordings, RF-1 base + 3 faults,
    # RS-1 1: 14 x 2 repeats
    assert summary.planned == summary.stored == 31
    report = ModelReport.model_validate_json(Path(summary.reports["scripted:echo"]).read_text())
    assert report.outcomes == {"format_failure": 31}
    dims = report.dimensions
    assert dims is not None and report.dimensions_note is None
    assert dims["consistency"]["score"] == 0.0
    assert dims["robustness"]["score"] == 0.0
    assert dims["fault_tolerance"]["score"] == 0.0
    assert dims["safety"]["score"] == 0.0
    # the seed's composite is 0; ours is not measured: a floor solves no base task, so its
    # robustness and recovery are not measurable (and one task each is below 3 anyway)
    assert dims["seed_composite"] == 0.0 and dims["composite"] is None
    assert dims["robustness"]["measured"] is None
    assert report.latency is not None and report.tokens.completion_total > 0
    trials = [json.loads(line) for line in (tmp_path / "trials.jsonl").open()]
    assert len(trials) == 31 and {t["record"]["suite"] for t in trials} == {"reliability"}


def test_capability_only_run_says_why_it_has_no_dimensions(tmp_path: Path) -> None:
    exp = build_experiment({"models": ["scripted:silent"], "tasks": ["IR-1"],
                            "temperatures": [0.0], "repeats": 1})
    summary = execute(exp, run_dir=tmp_path, progress=quiet())
    report = ModelReport.model_validate_json(Path(summary.reports["scripted:silent"]).read_text())
    assert report.dimensions is None
    assert report.dimensions_note == "no reliability-suite trials in this run"


def test_model_slugs_are_file_safe_and_unique() -> None:
    assert model_slug("openai:qwen2.5:7b@http://127.0.0.1:8080/v1") == \
        "openai_qwen2.5_7b_http_127.0.0.1_8080_v1"
    a = model_slug("llamacpp:a/b")
    assert a == "llamacpp_a_b"
    b = model_slug("llamacpp:a?b", taken=[a])
    assert b != a and b.startswith("llamacpp_a_b-")
    assert len(model_slug("hf:" + "x" * 300)) <= 80
