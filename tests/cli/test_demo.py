"""``slmbench demo``: the smoke job writes an honest report and fails cleanly."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import yaml
from clirun import CliRunner

from slmbench import paths
from slmbench.cli.demo_cmd import CANDIDATES, PROMPTS, DemoReport


def report_at(stdout: str, out: Path) -> DemoReport:
    path = Path(stdout.strip().splitlines()[-1])
    assert path.parent.parent == out and path.parent.name.startswith("demo-")
    assert path.name == "report.json"
    return DemoReport.model_validate_json(path.read_text())


def test_demo_with_echo_records_replies_and_no_made_up_logprobs(
        cli: CliRunner, home: Path, tmp_path: Path) -> None:
    out = tmp_path / "runs"
    result = cli("demo", "--model", "scripted:echo", "--out", str(out))
    assert result.code == 0, result.err
    report = report_at(result.out, out)
    assert report.model == "scripted:echo" and report.backend == "scripted"
    assert [r.prompt for r in report.replies] == list(PROMPTS)
    assert [r.reply for r in report.replies] == list(PROMPTS)  # echo repeats the prompt
    assert report.temperature == 0.0
    assert report.scoring.candidates == [] and report.scoring.preferred is None
    assert "no log-probabilities" in (report.scoring.unsupported or "")
    assert report.model_file is None


def test_demo_records_the_scored_candidate_pair(
        cli: CliRunner, home: Path, tmp_path: Path) -> None:
    script = tmp_path / "script.yaml"
    script.write_text(yaml.safe_dump({"default": "42", "logprobs": {"yes": -2.5, "no": -0.4}}))
    out = tmp_path / "runs"
    result = cli("demo", "--model", f"scripted:{script}", "--out", str(out))
    assert result.code == 0, result.err
    report = report_at(result.out, out)
    assert [r.reply for r in report.replies] == ["42", "42", "42"]
    scores = {c.candidate: c.logprob for c in report.scoring.candidates}
    assert scores == {"yes": -2.5, "no": -0.4}
    assert report.scoring.preferred == "no"
    assert report.scoring.unsupported is None


def test_two_demos_in_the_same_second_do_not_overwrite_each_other(
        cli: CliRunner, home: Path, tmp_path: Path) -> None:
    out = tmp_path / "runs"
    first = cli("demo", "--model", "scripted:echo", "--out", str(out)).out.strip()
    second = cli("demo", "--model", "scripted:echo", "--out", str(out)).out.strip()
    assert first != second
    assert Path(first).is_file() and Path(second).is_file()


@pytest.mark.parametrize(("spec", "message", "hint"), [
    ("nonsense", "names no backend", "BACKEND:TARGET"),
    ("llamacpp:qwen2.5-coder-1.5b", "is not in the cache", "slmbench pull qwen2.5-coder-1.5b"),
    ("llamacpp:no-such-model", "no model named 'no-such-model'", "slmbench models"),
])
def test_demo_errors_are_one_line_and_a_hint(
        cli: CliRunner, home: Path, tmp_path: Path, spec: str, message: str, hint: str) -> None:
    out = tmp_path / "runs"
    result = cli("demo", "--model", spec, "--out", str(out))
    assert result.code == 2
    lines = result.err.strip().splitlines()
    assert len(lines) == 2, result.err
    assert lines[0].startswith("error:") and message in lines[0]
    assert lines[1].startswith("what to do:") and hint in lines[1]
    assert not out.exists()  # nothing written for a run that never started


@pytest.mark.embedded
@pytest.mark.slow
def test_demo_on_the_real_smollm2(cli: CliRunner, tmp_path: Path,
                                  monkeypatch: pytest.MonkeyPatch) -> None:
    real = paths.models_dir() / "smollm2-135m.gguf"
    assert real.is_file(), "run `slmbench pull smollm2-135m` (make models) first"
    home = tmp_path / "home"
    (home / "models").mkdir(parents=True)
    (home / "models" / "smollm2-135m.gguf").symlink_to(real)
    monkeypatch.setenv("SLMBENCH_HOME", str(home))
    out = tmp_path / "runs"
    result = cli("demo", "--model", "llamacpp:smollm2-135m", "--out", str(out))
    assert result.code == 0, result.err
    report = report_at(result.out, out)
    assert report.model_file is not None
    assert report.model_file.registry_name == "smollm2-135m"
    assert report.model_file.matches_registry is True
    assert all(r.reply.strip() and r.completion_tokens > 0 for r in report.replies)
    assert all(r.tokens_per_s is not None and r.tokens_per_s > 0 for r in report.replies)
    assert [c.candidate for c in report.scoring.candidates] == list(CANDIDATES)
    for c in report.scoring.candidates:
        assert math.isfinite(c.logprob) and c.logprob < 0
    assert report.scoring.preferred in CANDIDATES
