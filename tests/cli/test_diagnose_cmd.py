"""``slmbench diagnose`` end to end on a scripted model and a small written dataset."""

from __future__ import annotations

import json
import shlex
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from clirun import CliRunner

from slmbench.microtasks import session
from slmbench.microtasks.datasets.records import ApprovalItem, Provenance
from slmbench.microtasks.diagnostics.diagnose import DiagnosticReport
from slmbench.models.records import Completion, Message
from slmbench.models.scripted import Script, ScriptedModel

PROV = (Provenance(package="synthetic", version="0", licence="CC0", archive_sha256="0" * 64,
                   source_path="tests", record_id="x"),)


def write_dataset(home: Path) -> None:
    out = home / "datasets"
    out.mkdir(parents=True)
    lines = []
    for split in ("fit", "eval"):
        for k in range(10):
            lines.append(ApprovalItem(
                id=f"a-{split}-{k}", split=split, command=f"ls dir{k}" if k % 2 else
                f"sudo rm -rf /srv/{k}", label="approve" if k % 2 else "deny", rule="test",
                origin="test", provenance=PROV).model_dump_json())
    (out / "approval.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_diagnose_writes_the_table_and_names_the_regime(home: Path, tmp_path: Path,
                                                        cli: CliRunner) -> None:
    write_dataset(home)
    script = tmp_path / "always-approve.json"
    # log-probs favour "approve" on every item; replies never name an option
    script.write_text(json.dumps({"default": "I am not sure.",
                                  "logprobs": {"approve": -0.2, "deny": -2.0, "*": -9.0}}))
    out = tmp_path / "diag"
    res = cli("diagnose", "-m", f"scripted:{script}", "-t", "approval", "--limit", "8",
              "--out", str(out))
    assert res.code == 0, res.err
    report = DiagnosticReport.model_validate_json((out / "diagnostics.json").read_text())
    (cell,) = report.cells
    assert (cell.n_fit, cell.n_eval) == (8, 8)
    assert cell.majority_decision == "approve" and cell.majority_share == 1.0
    assert cell.format_failure_rate is not None and cell.format_failure_rate.estimate == 1.0
    assert cell.auc.estimate == 0.5  # identical scores for every item: chance
    assert report.regimes[0].regime == "format_failure"
    assert "label_bias" in report.regimes[0].flags
    table = (out / "diagnostics.md").read_text()
    assert "format_failure" in table and "| approval |" in table


def test_unknown_task_and_gptq_are_one_line_errors(home: Path, tmp_path: Path,
                                                    cli: CliRunner) -> None:
    res = cli("diagnose", "-m", "scripted:echo", "-t", "spelling", "--out", str(tmp_path / "d"))
    assert res.code == 2 and "unknown micro-task" in res.err and "Traceback" not in res.err
    res = cli("quantize", "-m", "/nowhere/model.gguf", "--precision", "fp32,gptq",
              "--out", str(tmp_path / "q"))
    assert res.code == 2 and "gptq is not available here" in res.err
    assert not (tmp_path / "d").exists() and not (tmp_path / "q").exists()  # nothing written


def test_store_resumes_eligibility_and_feeds_diagnose(home: Path, tmp_path: Path,
                                                      cli: CliRunner) -> None:
    write_dataset(home)
    script = tmp_path / "deny.json"
    script.write_text(json.dumps({"default": "deny", "logprobs": {"deny": -0.1, "*": -3.0}}))
    elig = tmp_path / "elig"
    args = ("eligibility", "-m", f"scripted:{script}", "-t", "approval", "--prompt", "p0,p1",
            "--limit", "8", "--out", str(elig))
    first = cli(*args)
    assert first.code == 0, first.err
    assert "readings: 0 from the store, 16 read now" in first.out
    assert (elig / "readings.sqlite").is_file()  # the default store: OUT/readings.sqlite
    cells = json.loads((elig / "eligibility.json").read_text())["cells"]
    again = cli(*args)
    assert "readings: 16 from the store, 0 read now" in again.out
    assert json.loads((elig / "eligibility.json").read_text())["cells"] == cells

    diag = cli("diagnose", "-m", f"scripted:{script}", "-t", "approval", "--limit", "8",
               "--out", str(tmp_path / "diag"), "--store", str(elig / "readings.sqlite"))
    assert diag.code == 0, diag.err
    # the 8 eval items were read under p0 by eligibility; only the 8 fit items are new
    assert "readings: 8 from the store, 8 read now" in diag.out
    assert not (tmp_path / "diag" / "readings.sqlite").exists()


def test_a_bad_store_file_is_a_one_line_error(home: Path, tmp_path: Path,
                                              cli: CliRunner) -> None:
    write_dataset(home)
    bad = tmp_path / "notes.txt"
    bad.write_text("not a database\n" * 200)
    for command in ("eligibility", "diagnose"):
        res = cli(command, "-m", "scripted:echo", "-t", "approval", "--limit", "2",
                  "--out", str(tmp_path / command), "--store", str(bad))
        assert res.code == 2 and "is not a readings store" in res.err
        assert "Traceback" not in res.err and "--store" in res.err


def test_ctrl_c_keeps_the_readings_and_says_how_to_resume(
        home: Path, tmp_path: Path, cli: CliRunner, monkeypatch: pytest.MonkeyPatch) -> None:
    write_dataset(home)
    script = Script(default="deny", logprobs={"deny": -0.1, "*": -3.0})

    class CtrlCOnThirdItem(ScriptedModel):
        """Ctrl-C while reading the third item of the first run."""

        fired = False

        def generate(self, messages: Sequence[Message | dict[str, Any]],
                     **kw: Any) -> Completion:
            if self.calls == 2 and not CtrlCOnThirdItem.fired:
                CtrlCOnThirdItem.fired = True
                raise KeyboardInterrupt
            return super().generate(messages, **kw)

    monkeypatch.setattr(session, "load_model", lambda spec: CtrlCOnThirdItem(script, spec=spec))
    path = tmp_path / "inline.json"  # a real script file, so the preflight passes
    path.write_text(script.model_dump_json())
    args = ("diagnose", "-m", f"scripted:{path}", "-t", "approval", "--limit", "8",
            "--out", str(tmp_path / "diag"))
    stopped = cli(*args)
    assert stopped.code == 130
    assert "interrupted: 2 readings kept in" in stopped.out and "rerun the same" in stopped.out
    resumed = cli(*args)
    assert resumed.code == 0, resumed.err
    assert "readings: 2 from the store, 14 read now" in resumed.out


def test_the_recorded_command_shows_no_machine_path_and_reruns(
        home: Path, tmp_path: Path, cli: CliRunner, monkeypatch: pytest.MonkeyPatch) -> None:
    write_dataset(home)
    user, repo = tmp_path / "user", tmp_path / "repo"
    user.mkdir()
    repo.mkdir()
    monkeypatch.setenv("HOME", str(user))
    monkeypatch.chdir(repo)
    script = user / "always-approve.json"
    script.write_text(json.dumps({"default": "approve", "logprobs": {"approve": -0.2, "*": -9.0}}))
    args = ["diagnose", "-m", f"scripted:{script}", "-t", "approval", "--limit", "4",
            "--out", str(repo / "diag")]
    monkeypatch.setattr("sys.argv", ["slmbench", *args])
    assert cli(*args).code == 0
    first = DiagnosticReport.model_validate_json((repo / "diag/diagnostics.json").read_text())
    command = first.command
    assert str(tmp_path) not in command
    assert command == "slmbench diagnose -m 'scripted:~/always-approve.json' -t approval " \
                      "--limit 4 --out diag"
    again = shlex.split(command)[1:]  # as a shell would pass it, from the same folder
    monkeypatch.setattr("sys.argv", ["slmbench", *again])
    res = cli(*again)
    assert res.code == 0, res.err
    rerun = DiagnosticReport.model_validate_json((repo / "diag/diagnostics.json").read_text())
    assert rerun.command == command
    assert [c.default.score for c in rerun.cells] == [c.default.score for c in first.cells]
