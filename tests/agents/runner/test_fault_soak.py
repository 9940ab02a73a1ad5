"""A run against a loopback OpenAI-compatible server that fails 30% of its calls (issue #21).

The server (stdlib ``http.server`` on 127.0.0.1, in threads) plays each task's reference
solution as canned ReAct replies. A seeded draw makes 30% of its answers one of five faults:
an HTTP 5xx, a reply slower than the client's timeout, a connection dropped without an answer,
a 200 whose JSON body is cut short, and a "slow loris" that sends its headers and then drips
the body one byte at a time for longer than the timeout. The run must complete with every
trial stored once and successful, and every fault counted as one retry. A task the server
always fails is stored as ``backend_error`` naming the cause.
"""

from __future__ import annotations

import json
import random
import time
from collections import Counter
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest
from fake_servers import ReferenceServer
from typer.testing import CliRunner

from slmbench.agents.store import RunStore
from slmbench.agents.tasks import load_suite
from slmbench.cli.main import app
from slmbench.models.faults import classify

pytestmark = pytest.mark.slow

TASKS = ("IR-1", "SC-4", "MR-1", "DA-1", "CM-1")
ALWAYS_FAILS = "DM-1"  # its every call is answered 503
FAULTS = ("5xx", "timeout", "drop", "truncated", "slowloris")
TIMEOUT_S = 1.5  # the client's ?timeout=


class FlakyServer(ReferenceServer):
    """The reference server, answering 30% of its chat calls with a drawn fault."""

    def __init__(self) -> None:
        super().__init__(handler=Handler)
        self.doomed = next(t.instruction for t in load_suite("capability")
                           if t.id == ALWAYS_FAILS)
        self.rng = random.Random(30)
        self.answered = 0
        self.requests = 0
        self.faults: Counter[str] = Counter()

    def draw(self, messages: list[dict[str, Any]]) -> str | None:
        with self.lock:
            self.requests += 1
            first_user = next(m["content"] for m in messages if m["role"] == "user")
            if self.doomed in first_user:
                self.faults["doomed"] += 1
                return "doomed"
            fault = self.rng.choice(FAULTS) if self.rng.random() < 0.30 else None
            if fault:
                self.faults[fault] += 1
            else:
                self.answered += 1
            return fault


class Handler(BaseHTTPRequestHandler):
    server: FlakyServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        return None

    def do_GET(self) -> None:  # the run's preflight lists the models; no fault injected
        self._send(200, json.dumps({"object": "list", "data": [{"id": "ref"}]}).encode())

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        fault = self.server.draw(body["messages"])
        if fault == "drop":
            self.close_connection = True
            return
        if fault in ("5xx", "doomed"):
            self._send(503, json.dumps({"error": {"message": "injected fault"}}).encode())
            return
        text = self.server.reply_for(body["messages"])
        data = json.dumps({
            "id": "chatcmpl-test", "object": "chat.completion", "created": 0,
            "model": body["model"],
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": text}}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 3, "total_tokens": 13},
        }).encode()
        if fault == "timeout":
            time.sleep(TIMEOUT_S * 2)
        if fault == "truncated":  # a 200 whose body stops halfway
            self._send(200, data[: len(data) // 2])
            return
        if fault == "slowloris":  # headers at once, then a byte every TIMEOUT_S / 3
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            try:
                for i in range(len(data)):
                    self.wfile.write(data[i:i + 1])
                    self.wfile.flush()
                    time.sleep(TIMEOUT_S / 3)
            except OSError:  # the client gave up, as it should
                pass
            self.close_connection = True
            return
        self._send(200, data)

    def _send(self, status: int, data: bytes) -> None:
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except OSError:  # the client timed out first
            self.close_connection = True


@pytest.fixture
def server() -> Iterator[FlakyServer]:
    srv = FlakyServer()
    srv.start()
    yield srv
    srv.stop()


def test_a_run_survives_a_server_failing_30_percent_of_calls(tmp_path: Path,
                                                             server: FlakyServer) -> None:
    spec = f"openai:ref@http://127.0.0.1:{server.server_address[1]}/v1?timeout={TIMEOUT_S}"
    experiment = tmp_path / "exp.toml"
    experiment.write_text(f"""
models = ["{spec}"]
suites = ["capability"]
tasks = {json.dumps([*TASKS, ALWAYS_FAILS])}
temperatures = [0.3, 0.7]
repeats = 2
out = "{tmp_path / 'run'}"

[concurrency]
"{spec}" = 4

[retry]
attempts = 12
base_s = 0.01
cap_s = 0.05
""", encoding="utf-8")
    result = CliRunner().invoke(app, ["run", str(experiment)])
    assert result.exit_code == 0, result.output
    planned = (len(TASKS) + 1) * 2 * 2
    assert f"complete: {planned}/{planned} trials stored" in result.output
    assert all(server.faults[f] > 0 for f in FAULTS), server.faults  # every kind was injected
    with RunStore(tmp_path / "run") as store:
        rows = list(store.trials())
        stats = store.get_meta("runner_stats")[spec]
    assert len(rows) == len({r.key for r in rows}) == planned  # none lost, none doubled
    outcomes = {(r.key.task, r.outcome) for r in rows}
    assert outcomes == {*((t, "success") for t in TASKS), (ALWAYS_FAILS, "backend_error")}
    doomed = [r for r in rows if r.key.task == ALWAYS_FAILS]
    assert all("503" in r.record["error"] and "gave up after 12 attempts" in r.record["error"]
               for r in doomed)
    injected = sum(server.faults[f] for f in FAULTS)
    # every request the server saw is an answer a trial used, a counted retry (a loaded
    # machine may also time out on a healthy answer: that is a retry too) or a doomed
    # trial's last attempt
    assert stats["retries"] + stats["model_calls"] + len(doomed) == server.requests
    assert stats["retries"] >= injected + len(doomed) * 11
    assert stats["backend_errors"] == len(doomed)


def test_the_soaks_faults_are_what_the_fault_table_calls_transient() -> None:
    """The soak injects only faults models/faults.py says to retry: were one of them a
    configuration fault, the run would stop the model instead of completing."""
    assert classify(503, '{"error": {"message": "injected fault"}}').kind == "transient"
    for reason in ("connection refused", "timed out", "disconnected"):  # drop, timeout, loris
        assert classify(None, reason).kind == "transient"
