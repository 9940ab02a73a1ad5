"""``slmbench rescore`` (agents/rescoring.py): stored exports judged again against each trial's
recorded question; what moved rewritten and listed in ``rescored.json``, nothing else touched."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from slmbench.agents.evaluator import run_trial
from slmbench.agents.questions import question_for
from slmbench.agents.records import Outcome, Score, Trial
from slmbench.agents.rescoring import RESCORED_NAME, read_rescored, rescore_exports
from slmbench.agents.store import StoredTrial
from slmbench.agents.tasks import load_tasks
from slmbench.cli.main import main
from slmbench.core.errors import ConfigError
from slmbench.core.jsonl import write_jsonl_gz
from slmbench.models.scripted import ScriptedModel

TASKS = load_tasks()
SEARCH = '{"name": "web_search", "arguments": {"query": "Mount Varrick height"}}'
DUMP = 'Final Answer: {"title": "Mount Varrick", "text": "Mount Varrick is 4,612 metres"}'


def _trial(final: str, seed: int) -> Trial:
    return run_trial(ScriptedModel([SEARCH, final], spec="scripted:test"), TASKS["IR-1"],
                     seed=seed)


def _as_before(trial: Trial) -> Trial:
    """``trial`` as a scorer without the dump rule judged it: a success."""
    assert trial.score is not None
    reason = trial.score.reason.split("; dumped:")[0]
    return trial.model_copy(update={"outcome": Outcome.SUCCESS,
                                    "score": trial.score.model_copy(update={"reason": reason})})


def _lines(path: Path) -> list[str]:
    return gzip.decompress(path.read_bytes()).decode().splitlines()


def test_a_dump_judged_a_success_moves_and_only_its_line_is_rewritten(tmp_path: Path) -> None:
    dumped, answer = _trial(DUMP, 1), _trial("Final Answer: 4,612 metres", 2)
    assert dumped.outcome == Outcome.DUMPED and answer.outcome == Outcome.SUCCESS
    old = _as_before(dumped)
    stored = StoredTrial(key=old.key, outcome="success", record=old.model_dump(mode="json"),
                         created_at=1.0)
    export = tmp_path / "trials.jsonl.gz"
    write_jsonl_gz(export, [answer.model_dump_json(), old.model_dump_json()])
    legacy = tmp_path / "legacy-trials.jsonl.gz"
    write_jsonl_gz(legacy, [stored.model_dump_json()])
    before = _lines(export)

    done = {d.path.name: d for d in rescore_exports([tmp_path])}
    assert set(done) == {"legacy-trials.jsonl.gz", "trials.jsonl.gz"}
    assert [m.key for m in done["trials.jsonl.gz"].moved] == [old.key]
    assert done["trials.jsonl.gz"].rewritten and done["trials.jsonl.gz"].tally.trials == 2
    first, second = _lines(export)
    assert first == before[0]  # a trial that did not move keeps its bytes
    moved = Trial.model_validate_json(second)
    assert moved.outcome == Outcome.DUMPED and "dumped: the answer is a JSON object" in \
        str(moved.score)
    assert moved.model_copy(update={"outcome": old.outcome, "score": old.score}) == old
    row = json.loads(_lines(legacy)[0])  # a stored trial's outcome column moves with it
    assert row["outcome"] == "dumped" and row["record"]["outcome"] == "dumped"

    record = read_rescored(tmp_path)
    assert record is not None and record.rules["dump_rule"] >= 1
    assert {(m.export, m.before, m.after, m.rule) for m in record.moved} == {
        (name, Outcome.SUCCESS, Outcome.DUMPED, "dumped")
        for name in ("trials.jsonl.gz", "legacy-trials.jsonl.gz")}
    assert all("JSON object" in m.reason for m in record.moved)

    # a second run moves nothing more, writes no export and keeps the moves listed
    saved, bytes_before = (tmp_path / RESCORED_NAME).read_bytes(), export.read_bytes()
    again = rescore_exports([export, legacy])
    assert not any(d.moved or d.rewritten for d in again)
    assert export.read_bytes() == bytes_before
    assert (tmp_path / RESCORED_NAME).read_bytes() == saved


def _code_export(tmp_path: Path) -> Path:
    """An export of one CD-2 trial that passed its tests when it ran."""
    base = _trial("Final Answer: 4,612 metres", 3)
    code = base.model_copy(update={
        "task_id": "CD-2", "question": question_for(TASKS["CD-2"]),
        "world_state": {"files": {"pricing.py": "def price():\n    return 1\n"}},
        "final_answer": "done", "outcome": Outcome.SUCCESS,
        "score": Score(value=1.0, passed=True, reason="the code passes the task's tests")})
    export = tmp_path / "trials.jsonl.gz"
    write_jsonl_gz(export, [code.model_dump_json()])
    return export


@pytest.mark.parametrize("machine", ["no bwrap", "a limit stops the tests"])
def test_code_the_environment_cannot_run_is_left_as_it_is_and_counted_apart(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, machine: str) -> None:
    import slmbench.agents.tools.sandbox as sandbox

    export = _code_export(tmp_path)
    before = export.read_bytes()
    if machine == "no bwrap":
        monkeypatch.setattr(sandbox.shutil, "which", lambda _name: None)
    else:
        stopped = sandbox.SandboxResult(stdout="", stderr="", exit_code=None, timed_out=True,
                                        killed_reason="wall-clock limit (10 s)")
        monkeypatch.setattr(sandbox.Sandbox, "run_python", lambda *_a, **_k: stopped)
    [done] = rescore_exports([export])
    assert done.tally.not_run == 1 and not done.moved and export.read_bytes() == before


def test_code_that_now_fails_its_tests_moves_by_the_scorer(tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    import slmbench.agents.tools.sandbox as sandbox

    failed = sandbox.SandboxResult(stdout="", stderr="AssertionError", exit_code=1)
    monkeypatch.setattr(sandbox.Sandbox, "run_python", lambda *_a, **_k: failed)
    [done] = rescore_exports([_code_export(tmp_path)])
    [moved] = done.moved
    assert (moved.before, moved.after, moved.rule) == (Outcome.SUCCESS, Outcome.WRONG_ANSWER,
                                                       "scorer")
    assert moved.reason == "tests failed: AssertionError"


def test_a_trial_of_an_unknown_task_stops_the_run_naming_it_before_anything_is_written(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good = _as_before(_trial(DUMP, 4))
    stranger = good.model_copy(update={"task_id": "ZZ-9"})
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    first, second = tmp_path / "a" / "trials.jsonl.gz", tmp_path / "b" / "trials.jsonl.gz"
    write_jsonl_gz(first, [good.model_dump_json()])  # would move
    write_jsonl_gz(second, [good.model_dump_json(), stranger.model_dump_json()])
    before = first.read_bytes()
    with pytest.raises(ConfigError, match=r"trials.jsonl.gz: line 2: .*ZZ-9"):
        rescore_exports([first, second])
    assert first.read_bytes() == before and not (tmp_path / "a" / RESCORED_NAME).exists()
    with pytest.raises(SystemExit) as exit_:
        main(["rescore", str(second)])
    assert exit_.value.code == 2 and "line 2" in capsys.readouterr().err


def test_the_command_prints_each_move_with_its_rule(tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    old = _as_before(_trial(DUMP, 5))
    write_jsonl_gz(tmp_path / "trials.jsonl.gz", [old.model_dump_json()])
    with pytest.raises(SystemExit) as exit_:
        main(["rescore", str(tmp_path)])
    out = capsys.readouterr().out
    assert exit_.value.code in (0, None)
    assert "1 trials, 1 moved" in out and "IR-1" in out
    assert "success -> dumped (rule: dumped answers (issue #59)" in out
