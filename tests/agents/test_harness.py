"""Issue #15: the harness is never the reason a model fails.

The sandbox missing is an environment error (never a wrong answer), the code tool
shows a last expression's value, the toolset is recorded, the harness
fingerprint stops a resume across harness changes, forensics say how a trial
failed, and two settings (react vs native) compare trial by trial.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from slmbench.agents import harness
from slmbench.agents.comparison import compare_runs, compare_trials
from slmbench.agents.evaluator import run_trial
from slmbench.agents.forensics import breakdown, diagnose
from slmbench.agents.records import TRIAL_SCHEMA_VERSION, Action, Outcome, Step, Trial
from slmbench.agents.runner.config import build_experiment
from slmbench.agents.runner.executor import execute
from slmbench.agents.store import DB_NAME, RunStore
from slmbench.agents.tasks import load_tasks
from slmbench.agents.tools.code import repl_source
from slmbench.agents.tools.sandbox import SandboxUnavailable
from slmbench.agents.tools.toolbox import TOOL_NAMES, WorldToolbox
from slmbench.agents.world import World
from slmbench.agents.world.generate import GENERATOR_VERSION
from slmbench.core.errors import ConfigError
from slmbench.models.records import CandidateScore, Completion, Message, ToolCall
from slmbench.models.scripted import ScriptedModel

TASKS = load_tasks()
CD1_CALL = ('{"name": "code_interpreter", "arguments": '
            '{"code": "sum([i**2 for i in range(1, 51)])"}}')


def _say(*replies: str) -> ScriptedModel:
    return ScriptedModel(list(replies), spec="scripted:test")


@pytest.fixture
def no_bwrap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """bubblewrap hidden from PATH (everything else the process needs stays reachable)."""
    empty = tmp_path / "bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))


# -- the sandbox missing is never the model's failure ------------------------------------------

def test_without_bwrap_a_code_trial_is_an_environment_error_not_a_wrong_answer(
        no_bwrap: None) -> None:
    trial = run_trial(_say(CD1_CALL, "Final Answer: 42925"), TASKS["CD-1"])
    assert trial.outcome == Outcome.ENVIRONMENT_ERROR
    assert "bubblewrap" in (trial.error or "")
    assert trial.final_answer is None and trial.score is None
    assert trial.forensics is not None and trial.forensics.cause == "environment_error"


def test_the_same_trial_with_the_sandbox_succeeds_from_the_last_expression() -> None:
    trial = run_trial(_say(CD1_CALL, "Final Answer: 42925"), TASKS["CD-1"])
    assert trial.steps[0].observation == '{"stdout": "42925\\n"}'
    assert trial.outcome == Outcome.SUCCESS


def test_run_stops_before_the_run_folder_exists_without_bwrap(no_bwrap: None,
                                                              tmp_path: Path) -> None:
    exp = build_experiment({"models": ["scripted:echo"], "tasks": ["CD-1", "IR-1"],
                            "temperatures": [0.0], "repeats": 1})
    with pytest.raises(SandboxUnavailable) as err:
        execute(exp, run_dir=tmp_path / "run")
    assert "CD-1" in str(err.value) and "--skip-code-tasks" in (err.value.hint or "")
    assert not (tmp_path / "run").exists()
    skipped = exp.model_copy(update={"skip_code_tasks": True})
    summary = execute(skipped, run_dir=tmp_path / "run")
    assert summary.planned == 1 and summary.complete  # IR-1 only


def test_analysis_counts_environment_errors_apart_from_every_rate(no_bwrap: None,
                                                                  tmp_path: Path) -> None:
    from slmbench.agents.analysis import analyze

    env = run_trial(_say(CD1_CALL), TASKS["CD-1"])
    ok = run_trial(_say("Final Answer: 1"), TASKS["DA-1"])
    summary = analyze([env, ok])
    assert summary.n_trials == 1
    assert summary.not_the_models == {"scripted:test": {"environment_error": 1}}
    assert summary.failures[0].trials == 1


# -- the code tool ----------------------------------------------------------------------------

@pytest.mark.parametrize(
    ("code", "stdout"),
    [
        ("19 * 31", "589\n"),
        ("x = 6\nx * 7", "42\n"),
        ("print('a')\n'b'", "a\n'b'\n"),  # the value's repr, as a notebook shows it
        ("print('only')", "only\n"),  # a None value shows nothing more
        ("x = 1", ""),
        ("\n    total = 0\n    for i in range(4):\n        total += i\n    total\n", "6\n"),
        ("a = 2; a ** 3", "8\n"),
    ],
)
def test_code_tool_shows_the_last_expression_like_a_notebook(code: str, stdout: str) -> None:
    box = WorldToolbox(World.create(0), ["code_interpreter"])
    result = box.call("code_interpreter", {"code": code})
    assert result.ok, result.observation
    assert result.observation == '{"stdout": ' + __import__("json").dumps(stdout) + "}"


def test_repl_source_keeps_line_numbers_and_leaves_broken_code_to_the_sandbox() -> None:
    assert repl_source("x = 1\n1/0").splitlines()[0] == "x = 1"
    assert repl_source("  def f(:\n  pass") == "def f(:\npass\n"


# -- toolset ----------------------------------------------------------------------------------

def test_toolset_all_offers_the_ten_tools_and_is_recorded() -> None:
    trial = run_trial(_say("Final Answer: 1"), TASKS["DA-1"], toolset="all")
    assert trial.toolset == "all"
    assert all(f"- {name}:" in trial.messages[0].content for name in TOOL_NAMES)
    own = run_trial(_say("Final Answer: 1"), TASKS["DA-1"])
    assert own.toolset == "task" and "- email:" not in own.messages[0].content
    assert own.harness != trial.harness


def test_toolset_in_the_experiment_file(tmp_path: Path) -> None:
    from slmbench.agents.runner.config import load_experiment

    path = tmp_path / "exp.toml"
    path.write_text('models = ["scripted:echo"]\nsuites = ["quick"]\ntoolset = "all"\n')
    assert load_experiment(path).toolset == "all"
    path.write_text('models = ["scripted:echo"]\nsuites = ["quick"]\ntoolset = "some"\n')
    with pytest.raises(ConfigError, match="toolset"):
        load_experiment(path)


# -- harness fingerprint ----------------------------------------------------------------------

def test_each_record_and_the_run_carry_the_harness_fingerprint(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch
                                                               ) -> None:
    exp = build_experiment({"models": ["scripted:echo"], "tasks": ["IR-1", "DA-1"],
                            "temperatures": [0.0], "repeats": 1})
    execute(exp, run_dir=tmp_path / "run")
    with RunStore(tmp_path / "run") as store:
        meta = store.get_meta("harness_fingerprint")
        generator = store.get_meta("generator")
        records = [Trial.model_validate(t.record) for t in store.trials()]
    assert meta == harness.fingerprint([TASKS["IR-1"], TASKS["DA-1"]])
    assert generator == GENERATOR_VERSION  # the binders that drew its instances
    assert {r.schema_version for r in records} == {TRIAL_SCHEMA_VERSION} == {5}
    assert {r.task_id: r.question and r.question.scorer for r in records} == {
        t: TASKS[t].scorer.model_dump(mode="json") for t in ("IR-1", "DA-1")}
    assert {r.harness for r in records} == {harness.fingerprint([TASKS["IR-1"]]),
                                            harness.fingerprint([TASKS["DA-1"]])}
    execute(exp, run_dir=tmp_path / "run")  # the same harness resumes

    monkeypatch.setattr(harness, "PARSER_VERSION", harness.PARSER_VERSION + 1)
    with pytest.raises(ConfigError) as err:
        execute(exp, run_dir=tmp_path / "run")
    assert "\n" not in str(err.value) and "harness" in str(err.value)
    assert "new --out" in (err.value.hint or "")


def test_the_fingerprint_covers_prompts_tools_tasks_and_toolset(
        monkeypatch: pytest.MonkeyPatch) -> None:
    base = harness.fingerprint([TASKS["IR-1"]])
    assert harness.fingerprint([TASKS["IR-1"]], prompts="legacy") != base
    assert harness.fingerprint([TASKS["IR-1"]], toolset="all") != base
    assert harness.fingerprint([TASKS["DA-1"]]) != base
    assert harness.fingerprint([TASKS["IR-1"]], scaffold="native") != base
    edited = TASKS["IR-1"].model_copy(update={"instruction": "Who runs the company?"})
    assert harness.fingerprint([edited]) != base
    monkeypatch.setattr(harness, "TOOL_VERSION", harness.TOOL_VERSION + 1)
    assert harness.fingerprint([TASKS["IR-1"]]) != base
    tools_bumped = harness.fingerprint([TASKS["IR-1"]])
    monkeypatch.setattr(harness, "LOOP_VERSION", harness.LOOP_VERSION + 1)
    assert harness.fingerprint([TASKS["IR-1"]]) != tools_bumped
    loop_bumped = harness.fingerprint([TASKS["IR-1"]])
    # what a seed draws (issue #39): a drawn instance is pinned by its family and this version
    from slmbench.agents.world import generate

    assert generate.GENERATOR_VERSION == harness.GENERATOR_VERSION == 2
    monkeypatch.setattr(harness, "GENERATOR_VERSION", harness.GENERATOR_VERSION + 1)
    generator_bumped = harness.fingerprint([TASKS["IR-1"]])
    assert generator_bumped != loop_bumped
    # ... and the family template its instances are filled from (families/*.yaml)
    template = harness.template_of(TASKS["IR-1"])
    assert template is not None
    edited = {**template, "instruction": "Who heads {{department}}? Be brief."}
    monkeypatch.setattr(harness, "template_of", lambda task: edited)
    assert harness.fingerprint([TASKS["IR-1"]]) != generator_bumped


def test_a_store_of_trials_from_before_fingerprints_is_not_resumed(tmp_path: Path) -> None:
    exp = build_experiment({"models": ["scripted:echo"], "tasks": ["IR-1"],
                            "temperatures": [0.0], "repeats": 1})
    execute(exp, run_dir=tmp_path / "run")
    with RunStore(tmp_path / "run") as store:
        store._conn.execute("DELETE FROM meta WHERE key = 'harness_fingerprint'")
    assert (tmp_path / "run" / DB_NAME).is_file()
    with pytest.raises(ConfigError, match="before fingerprints"):
        execute(exp, run_dir=tmp_path / "run")


# -- forensics --------------------------------------------------------------------------------

def _trial(outcome: Outcome, steps: Sequence[Step], answer: str | None = None) -> Trial:
    return Trial(model="m", task_id="DA-1", suite="capability", outcome=outcome,
                 final_answer=answer, steps=list(steps))


def _step(i: int, action: Action, observation: str | None = None,
          ok: bool | None = None) -> Step:
    return Step(index=i, raw_response="", action=action, observation=observation, tool_ok=ok)


CALL = Action(kind="tool", name="query_table", arguments={}, format="json")
FINAL = Action(kind="final", answer="42", format="final")


@pytest.mark.parametrize(
    ("trial", "cause", "labels"),
    [
        (_trial(Outcome.FORMAT_FAILURE, [
            _step(0, Action(kind="invalid", error="no tool call or final answer found; x")),
            _step(1, Action(kind="invalid", error="no tool call or final answer found; x"))]),
         "no_call", ["no_call"]),
        (_trial(Outcome.FORMAT_FAILURE, [
            _step(0, Action(kind="invalid", error="the JSON object is malformed; x")),
            _step(1, Action(kind="invalid", error="the JSON object is malformed; x"))]),
         "unparseable", ["unparseable"]),
        (_trial(Outcome.WRONG_ANSWER, [
            _step(0, CALL.model_copy(update={"name": "calculator"}),
                  "error: unknown tool 'calculator'; available tools: query_table", False),
            _step(1, FINAL)], "42"),
         "answered_after_error", ["unknown_tool", "answered_after_error"]),
        (_trial(Outcome.WRONG_ANSWER, [
            _step(0, CALL, "error: invalid arguments for query_table: table: Field required",
                  False),
            _step(1, CALL, '{"rows": []}', True), _step(2, FINAL)], "42"),
         "invalid_arguments", ["invalid_arguments"]),
        (_trial(Outcome.REFUSED, [
            _step(0, CALL, "error: tool 'query_table' timed out after 30 s", False),
            _step(1, FINAL)], "I'm sorry, but I can't help with that."),
         "gave_up_after_error", ["gave_up_after_error"]),
        (_trial(Outcome.REFUSED, [_step(0, FINAL)], "I'm sorry, but I can't help with that."),
         "refused", ["refused"]),
        (_trial(Outcome.WRONG_ANSWER, [_step(0, FINAL)], "42"),
         "answered_without_result", ["answered_without_result"]),
        (_trial(Outcome.WRONG_ANSWER, [_step(0, CALL, '{"rows": []}', True), _step(1, FINAL)],
                "42"), "wrong_from_result", []),
        (_trial(Outcome.LOOP, [
            _step(0, CALL, '{"rows": []}', True),
            _step(1, CALL, "Observation: you already called query_table with exactly these "
                           "arguments; its result is above and it was not run again."),
            _step(2, CALL)]), "repeated_call", ["repeated_call"]),
        (_trial(Outcome.SUCCESS, [_step(0, CALL, '{"rows": []}', True), _step(1, FINAL)], "42"),
         None, []),
    ],
)
def test_forensics_name_the_cause(trial: Trial, cause: str | None, labels: list[str]) -> None:
    found = diagnose(trial, ["query_table"])
    assert found.cause == cause
    assert found.labels == labels


def test_wrong_tool_needs_the_task_tools() -> None:
    trial = _trial(Outcome.WRONG_ANSWER, [
        _step(0, CALL.model_copy(update={"name": "email"}), '{"messages": []}', True),
        _step(1, FINAL)], "42")
    assert diagnose(trial, ["query_table"]).cause == "wrong_tool"
    assert diagnose(trial, None).cause == "wrong_from_result"


def test_strict_grammar_counts_tolerant_readings_as_unreadable() -> None:
    alias = CALL.model_copy(update={"format": "fenced_json+alias"})
    twice = _trial(Outcome.WRONG_ANSWER, [_step(0, alias, "{}", True), _step(1, alias, "{}", True),
                                          _step(2, FINAL)], "42")
    once = _trial(Outcome.WRONG_ANSWER, [_step(0, alias, "{}", True), _step(1, FINAL)], "42")
    assert diagnose(twice).strict_format_failure and not diagnose(once).strict_format_failure
    counted = breakdown("m", [twice, once])
    assert (counted.format_failure.estimate, counted.strict_format_failure.estimate) == (0.0, 0.5)
    assert counted.tolerant_steps == 3 and counted.steps == 5


def test_run_trial_stores_the_forensics() -> None:
    trial = run_trial(_say("I do not know.", "Still thinking."), TASKS["DA-1"])
    assert trial.outcome == Outcome.FORMAT_FAILURE
    assert trial.forensics is not None and trial.forensics.cause == "no_call"
    assert trial.forensics.steps == [["no_call"], ["no_call"]]


# -- react vs native, paired ------------------------------------------------------------------

class BothScaffolds:
    """A scripted backend with native tool calls: one query_table call, then an answer."""

    supports_logprobs = False
    supports_native_tools = True

    def __init__(self, spec: str = "scripted:native") -> None:
        self.spec = spec

    def generate(self, messages: Sequence[Message | dict[str, Any]], *, temperature: float = 0.0,
                 seed: int = 0, max_tokens: int = 256, stop: Sequence[str] | None = None,
                 tools: Sequence[dict[str, Any]] | None = None,
                 stop_at: Any = None) -> Completion:
        called = any((m.role if isinstance(m, Message) else m["role"]) == "tool"
                     or "Observation:" in (m.content if isinstance(m, Message) else m["content"])
                     for m in messages[2:])
        args = {"table": "sales", "aggregate": "sum", "aggregate_column": "amount"}
        if tools is None:  # react: always a hallucinated tool, so the two scaffolds differ
            text, calls = '{"name": "sql", "arguments": {}}', ()
        elif called:
            text, calls = "Final Answer: 84674", ()
        else:
            text, calls = "", (ToolCall(name="query_table", arguments=args, id="c1"),)
        return Completion(text=text, prompt_tokens=10, completion_tokens=5, latency_s=0.0,
                          finish_reason="tool_calls" if calls else "stop", model=self.spec,
                          tool_calls=calls)

    def score(self, messages: Sequence[Message | dict[str, Any]],
              candidates: Sequence[str]) -> list[CandidateScore]:
        raise NotImplementedError

    def close(self) -> None:
        return None


def test_react_and_native_runs_compare_trial_by_trial(tmp_path: Path) -> None:
    grid = {"models": ["scripted:native"], "tasks": ["DA-1", "IR-1"], "temperatures": [0.0],
            "repeats": 1, "cache": "off"}
    for scaffold in ("react", "native"):
        execute(build_experiment({**grid, "scaffold": scaffold}), run_dir=tmp_path / scaffold,
                model_loader=lambda spec: BothScaffolds(spec))  # type: ignore[arg-type,return-value]
    result = compare_runs(tmp_path / "native", tmp_path / "react", label_a="native",
                          label_b="react")
    assert (result.pairs, result.excluded, result.unpaired) == (2, 0, 0)
    assert result.success_a.estimate == 0.5 and result.success_b.estimate == 0.0  # DA-1 only
    assert result.difference.estimate == 0.5 and result.by_task is not None
    assert (result.by_task.tasks, result.by_task.a_ahead, result.by_task.b_ahead) == (2, 1, 0)
    react = [Trial.model_validate(t.record) for t in RunStore(tmp_path / "react").trials()]
    assert {t.scaffold for t in react} == {"react"}
    assert {t.outcome for t in react} == {Outcome.LOOP}
    assert all(t.forensics and "unknown_tool" in t.forensics.labels for t in react)


def test_pairs_with_an_error_that_is_not_the_models_are_dropped() -> None:
    ok = _trial(Outcome.SUCCESS, [])
    env = ok.model_copy(update={"outcome": Outcome.ENVIRONMENT_ERROR})
    other = ok.model_copy(update={"task_id": "IR-1", "outcome": Outcome.WRONG_ANSWER})
    result = compare_trials([ok, other], [env, other])
    assert (result.pairs, result.excluded) == (1, 1)
    assert result.success_a.n == 1


def test_the_per_model_report_rates_only_trials_that_are_the_models(tmp_path: Path) -> None:
    from slmbench.agents.runner.model_reports import RunnerStats, build_model_report

    ok = _trial(Outcome.SUCCESS, [])
    down = ok.model_copy(update={"task_id": "IR-1", "outcome": Outcome.BACKEND_ERROR})
    env = ok.model_copy(update={"task_id": "CD-1", "outcome": Outcome.ENVIRONMENT_ERROR})
    report = build_model_report([ok, down, env], model="m", run_dir=tmp_path, experiment=None,
                                fingerprint="x", planned=3, runner=RunnerStats(), tasks=TASKS)
    assert report.success is not None and (report.success.estimate, report.success.n) == (1, 1)
    assert report.outcomes == {"success": 1, "backend_error": 1, "environment_error": 1}
    assert {t.task_id: t.success for t in report.tasks}["CD-1"] is None


def test_a_loop_on_a_failing_call_is_blamed_on_what_kept_failing() -> None:
    bad = "error: invalid arguments for query_table: table: Field required"
    trial = _trial(Outcome.LOOP, [_step(i, CALL, bad, False) for i in range(3)])
    assert diagnose(trial, ["query_table"]).cause == "invalid_arguments"
