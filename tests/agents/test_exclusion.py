"""A context we set too small is ours, never the model's (DEVELOPERS.md, rules for a verdict).

An agent trial that outgrows the window ends ``context_overflow``. It counts as the model's
failure only where the window was the model's own (set at or past the one it was trained
for); below it, or where nobody can tell, it is counted apart and no rate sees it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from slmbench.agents.analysis import analyze
from slmbench.agents.comparison import compare_trials
from slmbench.agents.evaluator import run_trial
from slmbench.agents.exclusion import BELOW_TRAINED, UNATTRIBUTED, excluded_as, rated
from slmbench.agents.records import Outcome, Trial
from slmbench.agents.runner.model_reports import RunnerStats, build_model_report
from slmbench.agents.runner.retry import RetryingModel, RetryPolicy
from slmbench.agents.tasks import load_tasks
from slmbench.models.base import trained_context
from slmbench.models.catalog import load_registry
from slmbench.models.ollama import OllamaModel
from slmbench.models.scripted import ScriptedModel
from slmbench.report.parta import failures

TASKS = load_tasks()


def _trial(model: str, outcome: Outcome, **settings: Any) -> Trial:
    return Trial(model=model, task_id="DA-1", suite="capability", outcome=outcome,
                 settings=settings)


def test_an_overflow_below_the_trained_window_is_the_settings_not_the_models() -> None:
    recorded = _trial("llamacpp:/models/x.gguf", Outcome.CONTEXT_OVERFLOW,
                      n_ctx=4096, n_ctx_train=32768)
    assert excluded_as(recorded) == BELOW_TRAINED
    at_its_own = _trial("llamacpp:/models/x.gguf", Outcome.CONTEXT_OVERFLOW,
                        n_ctx=32768, n_ctx_train=32768)
    assert excluded_as(at_its_own) is None
    assert rated([recorded, at_its_own]) == [at_its_own]


def test_a_trial_stored_before_the_backend_recorded_its_window_reads_the_registry() -> None:
    # v2's and v3's first sittings: settings hold n_ctx alone
    assert load_registry().get("qwen2.5-coder-0.5b").context == 32768
    assert load_registry().get("smollm2-135m").context == 8192
    assert excluded_as(_trial("llamacpp:qwen2.5-coder-0.5b", Outcome.CONTEXT_OVERFLOW,
                              n_ctx=4096)) == BELOW_TRAINED
    assert excluded_as(_trial("llamacpp:smollm2-135m?n_ctx=8192", Outcome.CONTEXT_OVERFLOW,
                              n_ctx=8192)) is None
    # an Ollama trial records num_ctx; its tag's window is not in the registry
    assert excluded_as(_trial("ollama:llama3.2:1b", Outcome.CONTEXT_OVERFLOW,
                              num_ctx=2048)) == UNATTRIBUTED
    assert excluded_as(_trial("openai:some-model@http://h:1/v1",
                              Outcome.CONTEXT_OVERFLOW)) == UNATTRIBUTED


@pytest.mark.parametrize("outcome", [Outcome.BACKEND_ERROR, Outcome.ENVIRONMENT_ERROR])
def test_backend_and_environment_errors_keep_their_own_label(outcome: Outcome) -> None:
    assert excluded_as(_trial("scripted:x", outcome)) == outcome.value


@pytest.mark.parametrize("outcome", [o for o in Outcome if o not in (
    Outcome.BACKEND_ERROR, Outcome.ENVIRONMENT_ERROR, Outcome.CONTEXT_OVERFLOW)])
def test_every_other_outcome_is_the_models(outcome: Outcome) -> None:
    assert excluded_as(_trial("llamacpp:qwen2.5-coder-0.5b", outcome, n_ctx=4096)) is None


def _overflowed(trial: Trial) -> Trial:
    return trial.model_copy(update={
        "outcome": Outcome.CONTEXT_OVERFLOW, "score": None, "final_answer": None,
        "settings": {"n_ctx": 4096, "n_ctx_train": 32768},
        "error": "context window exhausted: 4813 tokens do not fit its context of 4096"})


def test_the_analysis_counts_it_apart_and_no_rate_sees_it() -> None:
    model = ScriptedModel(["Final Answer: 1"], spec="scripted:test")
    ok = run_trial(model, TASKS["DA-1"])
    lost = _overflowed(run_trial(model, TASKS["DA-2"]))
    summary = analyze([ok, lost])
    assert summary.n_trials == 1
    assert summary.not_the_models == {"scripted:test": {BELOW_TRAINED: 1}}
    assert summary.failures[0].trials == 1
    # the same trial at the model's own window is a failure that the rates count
    own = lost.model_copy(update={"settings": {"n_ctx": 32768, "n_ctx_train": 32768}})
    assert analyze([ok, own]).n_trials == 2


def test_the_page_bounds_the_accuracy_had_the_excluded_trials_counted_either_way() -> None:
    # excluding them is not ignorable, so the summary and the page say how far it could move
    below = {"n_ctx": 4096, "n_ctx_train": 32768}
    trials = [_trial("scripted:test", Outcome.SUCCESS, **below),
              _trial("scripted:test", Outcome.CONTEXT_OVERFLOW, **below).model_copy(
                  update={"task_id": "DA-2"}),
              _trial("scripted:test", Outcome.WRONG_ANSWER, **below).model_copy(
                  update={"task_id": "DA-3"})]
    summary = analyze(trials)
    (bounds,) = summary.exclusion_bounds
    assert (bounds.model, bounds.excluded) == ("scripted:test", 1)
    reported = summary.accuracy_of("scripted:test")
    assert reported is not None and reported.accuracy.estimate == pytest.approx(1 / 2)
    assert bounds.as_failures.estimate == pytest.approx(1 / 3)
    assert bounds.as_successes.estimate == pytest.approx(2 / 3)
    assert bounds.as_failures.tasks == bounds.as_successes.tasks == 3
    line = next(x for x in failures(summary, trials) if x.startswith("Had they counted"))
    assert "test, 1 trial(s): 50.0 [" in line
    assert "33.3 [" in line and "all failures" in line and "66.7 [" in line
    # nothing counted apart: no bounds, no line
    kept = [trials[0], trials[2]]
    assert analyze(kept).exclusion_bounds == []
    assert not any(x.startswith("Had they counted") for x in failures(analyze(kept), kept))


def test_a_paired_comparison_drops_the_pair_it_ends() -> None:
    # one model under two harness settings, trial by trial
    model = ScriptedModel(["Final Answer: 1"], spec="scripted:test")
    left = [run_trial(model, TASKS[t]) for t in ("DA-1", "DA-2")]
    right = [left[0], _overflowed(left[1])]
    comparison = compare_trials(left, right)
    assert (comparison.pairs, comparison.excluded) == (1, 1)


def test_the_run_report_rates_only_the_models_trials(tmp_path: Any) -> None:
    model = ScriptedModel(["Final Answer: 1"], spec="scripted:test")
    lost = _overflowed(run_trial(model, TASKS["DA-1"]))
    report = build_model_report([lost], model="scripted:test", run_dir=tmp_path,
                                experiment=None, fingerprint="f", planned=1,
                                runner=RunnerStats(), tasks=TASKS)
    row = report.tasks[0]
    assert row.n == 1 and row.success is None and row.outcomes == {"context_overflow": 1}


OLLAMA = Path(__file__).parents[1] / "models" / "fixtures" / "ollama"


def _ollama(num_ctx: int) -> OllamaModel:
    """A qwen3 tag (trained for 40,960 tokens) whose server answers the first request in
    prose, then fills the window (1,026 prompt tokens evaluated) on every later one."""
    shown = json.loads((OLLAMA / "show_qwen3.json").read_text())
    replies = [json.loads((OLLAMA / name).read_text())
               for name in ("chat_answer.json", "chat_prompt_cut.json")]
    replies[0]["prompt_eval_count"] = 1000  # the task's first prompt, whole in 1,024 tokens
    chats: list[int] = []

    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/api/show":
            return httpx.Response(200, json=shown)
        chats.append(1)
        return httpx.Response(200, json=replies[min(len(chats), 2) - 1])

    return OllamaModel("qwen3:4b", "http://127.0.0.1:11434", num_ctx=num_ctx,
                       transport=httpx.MockTransport(handler))


def test_an_ollama_trial_records_both_windows_through_the_runner_so_its_overflow_is_told(
        ) -> None:
    # the runner's wrapper shows the backend's settings as they are when the trial ends
    wrapped = RetryingModel(_ollama(num_ctx=1024), RetryPolicy(attempts=1), seed=0)
    trial = run_trial(wrapped, TASKS["IR-1"])
    assert trial.outcome == Outcome.CONTEXT_OVERFLOW, trial.error
    assert (trial.settings["num_ctx"], trial.settings["n_ctx_train"]) == (1024, 40960)
    assert excluded_as(trial) == BELOW_TRAINED


def test_trained_context_reads_the_architectures_length_or_says_it_does_not_know() -> None:
    assert trained_context({"general.architecture": "qwen2",
                            "qwen2.context_length": "32768"}) == 32768
    assert trained_context({"general.architecture": "llama"}) is None
    assert trained_context({"llama.context_length": "8192"}) is None  # no architecture
    assert trained_context({"general.architecture": "llama",
                            "llama.context_length": "lots"}) is None


@pytest.mark.embedded
def test_the_backend_records_the_window_the_gguf_states_and_the_registry_agrees(
        smollm: Any) -> None:
    assert smollm.settings["n_ctx"] == 4096
    assert smollm.settings["n_ctx_train"] == 8192
    assert load_registry().get("smollm2-135m").context == smollm.settings["n_ctx_train"]
