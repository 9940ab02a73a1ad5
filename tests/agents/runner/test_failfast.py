"""Fail fast: an absent server or model stops a run before it writes anything; a server that
dies mid-run has its model stopped while the other models finish."""

from __future__ import annotations

import subprocess
import threading
from pathlib import Path

import pytest
from fake_servers import ReferenceServer

import forked_cli
from slmbench.agents.runner.config import build_experiment
from slmbench.agents.runner.executor import STOP_AFTER, execute
from slmbench.agents.runner.progress import PlainProgress
from slmbench.agents.store import RunStore
from slmbench.core.errors import BackendError, ModelNotFoundError
from slmbench.models import readiness
from slmbench.models.llamaserver import free_port
from slmbench.models.readiness import check_ready

TASKS = ["IR-1", "SC-4", "MR-1", "DA-1"]


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    """``slmbench run ARGS`` in a process of its own (forked: no import each time; see
    tests/forked_cli.py)."""
    return forked_cli.run(["run", *args], timeout=120)


@pytest.fixture
def no_waiting(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any wait inside the preflight fails the test: refusals must not be waited for."""
    def refuse(seconds: float) -> None:
        raise AssertionError(f"the preflight waited {seconds} s")
    monkeypatch.setattr(readiness.time, "sleep", refuse)


@pytest.mark.parametrize("spec, start", [
    ("ollama:no-such-model@http://127.0.0.1:{port}", "ollama serve"),
    ("openai:no-such-model@http://127.0.0.1:{port}/v1", "start the server"),
])
def test_an_absent_server_exits_2_with_one_line_and_no_run_folder(
        tmp_path: Path, spec: str, start: str) -> None:
    out = tmp_path / "run"
    url_spec = spec.format(port=free_port())
    result = run_cli("-m", url_spec, "--task", "IR-1", "--out", str(out))
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 2 and lines[0].startswith("error: no ")
    assert url_spec.split("@")[1].split("?")[0] in lines[0] and "connection refused" in lines[0]
    assert lines[1].startswith("what to do:") and start in lines[1]
    assert not out.exists()


@pytest.mark.parametrize("spec", ["ollama:gone:1b@{url}", "openai:gone@{url}/v1"])
def test_refused_connections_are_not_waited_for(spec: str, no_waiting: None) -> None:
    with pytest.raises(BackendError, match="connection refused"):
        check_ready(spec.format(url=f"http://127.0.0.1:{free_port()}"))


@pytest.mark.parametrize("spec, hint", [("ollama:qwen3:4b@{url}", "ollama pull qwen3:4b"),
                                        ("openai:qwen3@{url}/v1", "load qwen3")])
def test_a_server_without_the_model_names_what_to_pull(tmp_path: Path, spec: str,
                                                       hint: str) -> None:
    server = ReferenceServer(models=("other:1b",)).start()
    try:
        with pytest.raises(ModelNotFoundError) as err:
            check_ready(spec.format(url=server.url))
        assert hint in err.value.hint and server.url in str(err.value)
        check_ready(spec.format(url=server.url).replace("qwen3:4b", "other:1b")
                    .replace("qwen3@", "other:1b@"))  # a served model passes
    finally:
        server.stop()


def test_a_loading_server_is_waited_for() -> None:
    server = ReferenceServer(loading=3).start()  # three 503s, then the model list
    try:
        check_ready(f"openai:ref@{server.url}/v1")
        assert server.loading == 0
    finally:
        server.stop()


def test_wait_ready_waits_for_a_server_that_starts_late() -> None:
    port = free_port()
    late: list[ReferenceServer] = []
    timer = threading.Timer(1.0, lambda: late.append(ReferenceServer(port=port).start()))
    timer.start()
    try:
        check_ready(f"openai:ref@http://127.0.0.1:{port}/v1", wait_ready_s=30)
        assert late  # it returned only once the server was up
    finally:
        timer.join()
        for server in late:
            server.stop()


def test_a_server_that_dies_mid_run_stops_its_model_and_the_others_finish(
        tmp_path: Path) -> None:
    dying = ReferenceServer(die_after=6).start()
    healthy = ReferenceServer().start()
    doomed, fine = f"openai:ref@{dying.url}/v1", f"openai:ref@{healthy.url}/v1"
    exp = build_experiment({
        "models": [doomed, fine], "suites": ["capability"], "tasks": TASKS,
        "temperatures": [0.3, 0.7], "repeats": 2, "concurrency": {doomed: 1, fine: 2},
        "retry": {"attempts": 2, "base_s": 0.0, "cap_s": 0.0}})
    from io import StringIO

    from rich.console import Console
    try:
        summary = execute(exp, run_dir=tmp_path / "run",
                          progress=PlainProgress(Console(file=StringIO(), width=300)))
    finally:
        healthy.stop()
    by_model = {m.model: m for m in summary.models}
    assert not summary.complete
    assert by_model[fine].stored == by_model[fine].planned == 16
    assert by_model[fine].successes == 16 and by_model[fine].stopped is None
    stopped = by_model[doomed]
    assert stopped.stopped is not None and "cannot reach" in stopped.stopped
    assert stopped.stored < stopped.planned
    with RunStore(tmp_path / "run") as store:
        outcomes = [t.outcome for t in sorted(store.trials(doomed), key=lambda t: t.created_at)]
    assert outcomes[-STOP_AFTER:] == ["backend_error"] * STOP_AFTER
    assert outcomes.count("backend_error") == STOP_AFTER  # stopped at once, nothing more tried
