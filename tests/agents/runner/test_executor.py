"""The executor: runs exactly the missing trials, retries, stores failures, writes reports."""

from __future__ import annotations

import json
import sqlite3
import threading
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from runner_fakes import CountingLoader, FlakyModel, uncaught_trial

from slmbench.agents.runner.config import build_experiment
from slmbench.agents.runner.executor import execute
from slmbench.agents.runner.model_reports import ModelReport
from slmbench.agents.runner.plan import build_plan
from slmbench.agents.runner.progress import PlainProgress
from slmbench.agents.store import RunStore
from slmbench.core.errors import ConfigError
from slmbench.core.stats import TASK_LEVEL_METHOD
from slmbench.models.scripted import ScriptedModel


def experiment(**fields: Any):
    base = {"models": ["scripted:a", "scripted:b"], "suites": ["alpha"],
            "temperatures": [0.0, 0.7], "repeats": 2, "retry": {"base_s": 0.0}}
    return build_experiment({**base, **fields})


def quiet() -> PlainProgress:
    from io import StringIO

    from rich.console import Console
    return PlainProgress(Console(file=StringIO(), width=200))


def test_run_stores_exactly_the_planned_grid_and_writes_reports(tmp_path: Path, fakes) -> None:
    exp = experiment()
    loader = CountingLoader()
    summary = execute(exp, run_dir=tmp_path, model_loader=loader, progress=quiet(), **fakes)
    plan = build_plan(exp, load_suite=fakes["load_suite"], variants=fakes["variants"])
    assert summary.planned == len(plan.trials) == 2 * 4 * 2 * 2
    assert summary.complete and summary.stored == summary.run_now == summary.planned
    with RunStore(tmp_path) as store:
        assert store.keys() == plan.keys()
        assert store.count() == len(plan.trials)
        assert store.get_meta("experiment")["models"] == ["scripted:a", "scripted:b"]
        assert store.get_meta("planned") == {"scripted:a": 16, "scripted:b": 16}
        stats = store.get_meta("runner_stats")
    assert stats["scripted:a"]["trials_run"] == 16
    assert stats["scripted:a"]["model_calls"] == 32  # two calls per trial, none cached twice
    lines = (tmp_path / "trials.jsonl").read_text().splitlines()
    assert len(lines) == 32
    report = ModelReport.model_validate_json(Path(summary.reports["scripted:a"]).read_text())
    assert report.planned == report.stored == 16 and report.complete
    assert report.success is not None and report.success.estimate == 1.0
    assert report.success.n == 16 and report.success.method == TASK_LEVEL_METHOD
    assert report.success.tasks == len(report.tasks)  # task-level, with its design
    assert report.success.low is not None and report.success.low < 1.0 == report.success.high
    assert set(report.by_temperature) == {"0", "0.7"}
    assert set(report.by_variant) == {"base", "fault-timeout"}
    assert [t.task_id for t in report.tasks] == ["A-1", "A-2", "A-3"]
    assert report.tasks[2].n == 8  # 2 variants x 2 temperatures x 2 repeats
    assert Path(summary.reports["scripted:a"]).name == "scripted_a.json"


def test_rerun_runs_nothing_and_a_partial_run_is_completed(tmp_path: Path, fakes) -> None:
    exp = experiment()
    execute(exp, run_dir=tmp_path, model_loader=CountingLoader(), progress=quiet(), **fakes)
    again = CountingLoader()
    assert execute(exp, run_dir=tmp_path, model_loader=again, progress=quiet(),
                   **fakes).run_now == 0
    assert again.models == {}  # nothing left to run: no model is even loaded
    # drop five stored trials (as if the run had been killed before them): only they run again
    with sqlite3.connect(tmp_path / "run.sqlite") as db:
        db.execute("DELETE FROM trials WHERE rowid IN (SELECT rowid FROM trials LIMIT 5)")
    summary = execute(exp, run_dir=tmp_path, model_loader=CountingLoader(), progress=quiet(),
                      **fakes)
    assert summary.run_now == 5 and summary.complete
    with RunStore(tmp_path) as store:
        assert store.count() == summary.planned == len(store.keys())


def test_cache_hits_skip_the_model_when_a_lost_trial_is_rerun(tmp_path: Path, fakes) -> None:
    exp = experiment(models=["scripted:a"], temperatures=[0.0])
    execute(exp, run_dir=tmp_path, model_loader=CountingLoader(), progress=quiet(), **fakes)
    with sqlite3.connect(tmp_path / "run.sqlite") as db:  # trials lost, responses cached
        db.execute("DELETE FROM trials")
    loader = CountingLoader(reply="a different reply")
    summary = execute(exp, run_dir=tmp_path, model_loader=loader, progress=quiet(), **fakes)
    assert summary.run_now == 8
    assert loader.models["scripted:a"].calls == 0
    assert summary.models[0].cache_hits == 16
    assert summary.models[0].successes == 8  # the cached 'ok' replies, not the new model's


def test_transient_faults_are_retried_and_counted(tmp_path: Path, fakes) -> None:
    exp = experiment(models=["scripted:a"], temperatures=[0.7])
    flaky = FlakyModel(spec="scripted:a", fail_calls={1, 2, 5, 9})
    summary = execute(exp, run_dir=tmp_path, model_loader=lambda spec: flaky,
                      progress=quiet(), **fakes)
    assert summary.complete and summary.models[0].successes == summary.planned == 8
    assert summary.models[0].retries == 4
    with RunStore(tmp_path) as store:
        assert store.get_meta("runner_stats")["scripted:a"]["retries"] == 4


@pytest.mark.parametrize("trial_fn", ["evaluator catches", "evaluator raises"])
def test_a_backend_that_stays_down_gives_backend_error_trials_and_the_run_goes_on(
        tmp_path: Path, fakes, trial_fn: str) -> None:
    if trial_fn == "evaluator raises":
        fakes = {**fakes, "trial_fn": uncaught_trial}
    exp = experiment(temperatures=[0.7], repeats=1, retry={"attempts": 2, "base_s": 0.0})
    down = FlakyModel(spec="scripted:a", always_fail=True)
    loader = CountingLoader()

    def load(spec: str) -> Any:
        return down if spec == "scripted:a" else loader(spec)

    summary = execute(exp, run_dir=tmp_path, model_loader=load, progress=quiet(), **fakes)
    a, b = summary.models
    assert summary.complete
    assert (a.backend_errors, a.successes, a.retries) == (4, 0, 4)
    assert (b.backend_errors, b.successes) == (0, 4)  # the other model is unaffected
    with RunStore(tmp_path) as store:
        failed = [t for t in store.trials("scripted:a")]
    assert all(t.outcome == "backend_error" for t in failed)
    assert all("gave up after 2 attempts: HTTP 503" in t.record["error"] for t in failed)


def test_a_different_grid_in_the_same_run_dir_is_refused(tmp_path: Path, fakes) -> None:
    execute(experiment(), run_dir=tmp_path, model_loader=CountingLoader(), progress=quiet(),
            **fakes)
    with pytest.raises(ConfigError, match=r"holds a run with repeats=2, not 3") as info:
        execute(experiment(repeats=3), run_dir=tmp_path, model_loader=CountingLoader(),
                progress=quiet(), **fakes)
    assert "slmbench resume" in info.value.hint


def test_a_model_can_be_added_to_a_run(tmp_path: Path, fakes) -> None:
    execute(experiment(models=["scripted:a"]), run_dir=tmp_path, model_loader=CountingLoader(),
            progress=quiet(), **fakes)
    summary = execute(experiment(models=["scripted:b"]), run_dir=tmp_path,
                      model_loader=CountingLoader(), progress=quiet(), **fakes)
    assert summary.run_now == 16
    with RunStore(tmp_path) as store:
        assert store.get_meta("experiment")["models"] == ["scripted:a", "scripted:b"]
        assert store.count() == 32
    assert sorted(p.name for p in (tmp_path / "reports").iterdir()) == [
        "scripted_a.json", "scripted_b.json"]


class ConcurrencyProbe:
    """A server-like model that records how many generate calls overlap."""

    def __init__(self, spec: str, parties: int) -> None:
        self.inner = ScriptedModel(lambda msgs: "ok", spec=spec)
        self.spec = spec
        self.supports_logprobs = self.supports_native_tools = False
        self.barrier = threading.Barrier(parties, timeout=30)
        self.lock = threading.Lock()
        self.active = self.peak = self.calls = 0

    def generate(self, messages: Any, **kw: Any) -> Any:
        with self.lock:
            self.active += 1
            self.calls += 1
            first_wave = self.calls <= self.barrier.parties
            self.peak = max(self.peak, self.active)
        try:
            if first_wave:  # the first `parties` calls only pass once all are in flight
                self.barrier.wait()
            return self.inner.generate(messages, **kw)
        finally:
            with self.lock:
                self.active -= 1

    def close(self) -> None:
        return None


def test_server_models_run_trials_in_parallel_up_to_their_limit(tmp_path: Path, fakes) -> None:
    spec = "openai:m@http://127.0.0.1:9/v1"
    exp = experiment(models=[spec], concurrency={spec: 3}, temperatures=[0.7])
    probe = ConcurrencyProbe(spec, parties=3)
    summary = execute(exp, run_dir=tmp_path, model_loader=lambda s: probe, progress=quiet(),
                      check_servers=False, **fakes)  # the probe stands in for the server
    assert summary.complete
    assert probe.peak == 3  # reached (the barrier needs 3 at once) and never exceeded


def test_in_process_models_run_one_trial_at_a_time(tmp_path: Path, fakes) -> None:
    probe = ConcurrencyProbe("scripted:a", parties=1)
    summary = execute(experiment(models=["scripted:a"]), run_dir=tmp_path,
                      model_loader=lambda s: probe, progress=quiet(), **fakes)
    assert summary.complete and probe.peak == 1


class LaneProbe:
    """Models whose generate calls record which models are in flight at once. Each model's
    first call waits, up to ``patience`` seconds, until every other model has a call in
    flight too; ``met`` says whether they all were at once."""

    def __init__(self, specs: tuple[str, ...], patience: float) -> None:
        self.lock = threading.Lock()
        self.active: Counter[str] = Counter()
        self.most_at_once = 0
        self.barrier = threading.Barrier(len(specs), timeout=patience)
        self.met: bool | None = None
        self.waited: set[str] = set()

    def _first_call(self) -> None:
        try:
            self.barrier.wait()
            met = True
        except threading.BrokenBarrierError:  # the others never came while this one waited
            met = False
        with self.lock:
            self.met = met if self.met is None else self.met and met

    def model(self, spec: str) -> Any:
        probe, inner = self, ScriptedModel(lambda msgs: "ok", spec=spec)

        class Model:
            supports_logprobs = supports_native_tools = False

            def generate(self, messages: Any, **kw: Any) -> Any:
                with probe.lock:
                    probe.active[spec] += 1
                    probe.most_at_once = max(probe.most_at_once, len(+probe.active))
                    first = spec not in probe.waited
                    probe.waited.add(spec)
                try:
                    if first:
                        probe._first_call()
                    return inner.generate(messages, **kw)
                finally:
                    with probe.lock:
                        probe.active[spec] -= 1

            def close(self) -> None:
                return None

        Model.spec = spec  # type: ignore[attr-defined]
        return Model()


def test_a_server_slmbench_starts_here_shares_the_local_lane(tmp_path: Path, fakes) -> None:
    """``llamaserver:`` computes on this machine's cores: it never runs beside an in-process
    model (each alone is fast; side by side on 2 cores both crawl). The in-process model's
    first call waits a second for the server's to be in flight too: it never is."""
    server = "llamaserver:qwen2.5-coder-0.5b"
    probe = LaneProbe(("scripted:a", server), patience=1.0)
    exp = experiment(models=["scripted:a", server], concurrency={server: 3})
    summary = execute(exp, run_dir=tmp_path, model_loader=probe.model, progress=quiet(),
                      check_servers=False, **fakes)
    assert summary.complete and probe.met is False and probe.most_at_once == 1


def test_a_server_at_an_address_runs_beside_the_local_lane(tmp_path: Path, fakes) -> None:
    remote = "openai:m@http://127.0.0.1:9/v1"
    probe = LaneProbe(("scripted:a", remote), patience=10.0)
    summary = execute(experiment(models=["scripted:a", remote]), run_dir=tmp_path,
                      model_loader=probe.model, progress=quiet(), check_servers=False, **fakes)
    assert summary.complete and probe.met is True and probe.most_at_once == 2


def test_plain_progress_prints_one_line_per_trial(tmp_path: Path, fakes) -> None:
    from io import StringIO

    from rich.console import Console
    out = StringIO()
    execute(experiment(models=["scripted:a"], temperatures=[0.0], repeats=1),
            run_dir=tmp_path, model_loader=CountingLoader(),
            progress=PlainProgress(Console(file=out, width=300)), **fakes)
    lines = out.getvalue().splitlines()
    assert lines[0] == "run: 4 trials planned, 0 already stored, 4 to run"
    assert lines[-1].startswith("[4/4] scripted:a ")
    assert "-> success | 4/4 ok (100%)" in lines[-1]


def test_reports_are_valid_json_with_the_schema_version(tmp_path: Path, fakes) -> None:
    summary = execute(experiment(models=["scripted:a"]), run_dir=tmp_path,
                      model_loader=CountingLoader(reply="no"), progress=quiet(), **fakes)
    data = json.loads(Path(summary.reports["scripted:a"]).read_text())
    assert data["schema_version"] == 3
    assert data["outcomes"] == {"wrong_answer": 16}
    assert data["success"]["estimate"] == 0.0 and data["success"]["low"] == 0.0
    assert data["success"]["high"] > 0.0  # Wilson: never zero-width at small n
