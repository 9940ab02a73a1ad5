"""Configuration faults stop their model at once, in one line, with no trial stored; passing
faults (a server still loading) are retried: both decided by models/faults.py's table."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import httpx
import pytest
from fake_servers import ReferenceServer
from rich.console import Console

from slmbench.agents.runner.config import build_experiment, load_experiment
from slmbench.agents.runner.executor import execute
from slmbench.agents.runner.progress import PlainProgress
from slmbench.agents.runner.retry import RetryingModel, RetryPolicy
from slmbench.agents.store import RunStore
from slmbench.models.ollama import OllamaModel
from slmbench.models.records import Message

FIXTURES = Path(__file__).parents[2] / "models" / "fixtures" / "ollama"


def test_a_404_stops_the_model_at_once_in_one_line_and_stores_nothing(tmp_path: Path) -> None:
    server = ReferenceServer(gone=("gone",)).start()
    gone, fine = f"openai:gone@{server.url}/v1", f"openai:ref@{server.url}/v1"
    out = StringIO()
    try:
        exp = build_experiment({"models": [gone, fine], "suites": ["capability"],
                                "tasks": ["IR-1", "SC-4"], "temperatures": [0.3],
                                "repeats": 2, "concurrency": {gone: 1, fine: 1}})
        summary = execute(exp, run_dir=tmp_path / "run",
                          progress=PlainProgress(Console(file=out, width=1000)))
    finally:
        server.stop()
    by_model = {m.model: m for m in summary.models}
    stopped = by_model[gone].stopped
    assert stopped is not None and "404" in stopped and "model_not_found" in stopped
    assert by_model[gone].stored == 0  # nothing stored: a resume runs these trials
    assert by_model[fine].stored == by_model[fine].planned == 4
    lines = [x for x in out.getvalue().splitlines() if x.startswith(f"stopped {gone}")]
    assert len(lines) == 1 and "check the model name" in lines[0]
    with RunStore(tmp_path / "run") as store:
        assert list(store.trials(gone)) == []


def test_a_loading_ollama_server_is_retried_until_it_answers() -> None:
    answer = json.loads((FIXTURES / "chat_answer.json").read_text())
    shown = json.loads((FIXTURES / "show_qwen3.json").read_text())
    chats: list[int] = []

    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/api/show":
            return httpx.Response(200, json=shown)
        chats.append(1)
        if len(chats) <= 2:
            return httpx.Response(503, json={"error": "server busy, please try again"})
        return httpx.Response(200, json=answer)

    inner = OllamaModel("qwen2.5:0.5b", "http://127.0.0.1:11434",
                        transport=httpx.MockTransport(handler))
    slept: list[float] = []
    model = RetryingModel(inner, RetryPolicy(), seed=0, sleep=slept.append)
    out = model.generate([Message(role="user", content="What is the capital of France?")])
    assert out.text == "The capital of France is Paris."
    assert model.retries == 2 and len(chats) == 3 and len(slept) == 2


def test_retry_errors_runs_the_stored_backend_errors_again(tmp_path: Path) -> None:
    dying = ReferenceServer(die_after=1).start()  # answers one chat, then refuses connections
    port = dying.server_address[1]
    spec = f"openai:ref@http://127.0.0.1:{port}/v1"
    exp = build_experiment({"models": [spec], "suites": ["capability"], "tasks": ["IR-1", "SC-4"],
                            "temperatures": [0.3], "repeats": 2, "concurrency": {spec: 1},
                            "retry": {"attempts": 1}})
    quiet = PlainProgress(Console(file=StringIO(), width=300))
    execute(exp, run_dir=tmp_path / "run", progress=quiet)
    with RunStore(tmp_path / "run") as store:
        errors = [t for t in store.trials(spec) if t.outcome == "backend_error"]
    assert errors  # the server went away mid-run
    execute(exp, run_dir=tmp_path / "run", progress=quiet, check_servers=False)  # kept
    with RunStore(tmp_path / "run") as store:
        assert sum(t.outcome == "backend_error" for t in store.trials(spec)) == len(errors)
    back = ReferenceServer(port=port).start()
    try:
        summary = execute(exp, run_dir=tmp_path / "run", progress=quiet, retry_errors=True)
    finally:
        back.stop()
    assert summary.complete and summary.models[0].backend_errors == 0
    assert summary.models[0].successes == 4


@pytest.mark.parametrize("parallel", [1, 3])
def test_a_nine_model_ollama_experiment_file_runs_one_model_at_a_time(
        tmp_path: Path, parallel: int) -> None:
    tags = tuple(f"m{i}" for i in range(9))
    server = ReferenceServer(models=tags).start()
    models = ", ".join(f'"ollama:{t}@{server.url}"' for t in tags)
    path = tmp_path / "nine.toml"
    path.write_text(f'models = [{models}]\ntasks = ["IR-1"]\ntemperatures = [0.3]\n'
                    f"repeats = 2\nserver_parallel_models = {parallel}\n")
    try:
        exp = load_experiment(path)
        summary = execute(exp, run_dir=tmp_path / "run",
                          progress=PlainProgress(Console(file=StringIO(), width=300)))
    finally:
        server.stop()
    assert set(server.windows) == set(tags)  # every model answered on /api/chat
    assert 1 <= server.most_models_at_once() <= parallel
    if parallel == 1:
        assert server.most_models_at_once() == 1  # one model at a time on the server
    assert summary.complete and summary.stored == 18
    with RunStore(tmp_path / "run") as store:
        for spec in exp.models:
            assert [t.outcome for t in store.trials(spec)] == ["success", "success"]
