"""A run against a flaky OpenAI-compatible loopback server completes: retries counted, no loss.

The server (stdlib ``http.server`` on 127.0.0.1, in a thread) plays each
task's reference solution as canned ReAct replies. Of its first
``FAULT_WINDOW`` requests, two in three fail: an HTTP 500 or a connection
dropped without an answer. Then it is healthy. Every fault must become one
counted retry, and every trial must still end stored and successful.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from fake_servers import chat_completion
from typer.testing import CliRunner

from slmbench.agents.store import RunStore
from slmbench.agents.tasks import load_suite
from slmbench.agents.tasks.reference import reference_replies
from slmbench.cli.main import app

TASKS = ("IR-1", "SC-4", "MR-1", "DA-1")
FAULT_WINDOW = 24  # requests 1..24: n % 3 == 1 -> HTTP 500, n % 3 == 2 -> dropped connection
FAULTS = sum(1 for n in range(1, FAULT_WINDOW + 1) if n % 3 != 0)


class FlakyReActServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), Handler)
        tasks = {t.id: t for t in load_suite("capability")}
        self.replies = {tasks[i].instruction: reference_replies(tasks[i]) for i in TASKS}
        self.lock = threading.Lock()
        self.requests = 0
        self.faults: dict[str, int] = {"500": 0, "drop": 0}

    def next_fault(self) -> str | None:
        with self.lock:
            self.requests += 1
            n = self.requests
            fault = None if n > FAULT_WINDOW or n % 3 == 0 else ("500" if n % 3 == 1 else "drop")
            if fault:
                self.faults[fault] += 1
        return fault

    def reply_for(self, messages: list[dict[str, Any]]) -> str:
        first_user = next(m["content"] for m in messages if m["role"] == "user")
        replies = next(r for instr, r in self.replies.items() if instr in first_user)
        turn = sum(1 for m in messages if m["role"] == "assistant")
        return replies[min(turn, len(replies) - 1)]


class Handler(BaseHTTPRequestHandler):
    server: FlakyReActServer

    def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
        return None

    def do_GET(self) -> None:  # the run's preflight lists the models; no fault injected
        self._send(200, {"object": "list", "data": [{"id": "ref", "object": "model"}]})

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        fault = self.server.next_fault()
        if fault == "drop":  # close the socket without a single byte of answer
            self.close_connection = True
            return
        if fault == "500" or self.path != "/v1/chat/completions":
            self._send(500 if fault else 404, {"error": {"message": "injected fault"}})
            return
        text = self.server.reply_for(body["messages"])
        self._send(200, chat_completion(body["model"], text, completion_tokens=len(text.split())))

    def _send(self, status: int, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@pytest.fixture
def server() -> Iterator[FlakyReActServer]:
    srv = FlakyReActServer()
    thread = threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.05},
                              daemon=True)
    thread.start()
    yield srv
    srv.shutdown()
    srv.server_close()
    thread.join(timeout=10)


def test_run_through_a_flaky_server_completes_with_every_fault_retried(
        tmp_path: Path, server: FlakyReActServer) -> None:
    spec = f"openai:ref@http://127.0.0.1:{server.server_address[1]}/v1?timeout=30"
    experiment = tmp_path / "exp.toml"
    experiment.write_text(f"""
models = ["{spec}"]
suites = ["capability"]
tasks = {json.dumps(list(TASKS))}
temperatures = [0.3, 0.7]
repeats = 2
out = "{tmp_path / 'run'}"

[concurrency]
"{spec}" = 3

[retry]
attempts = {FAULTS + 1}  # more than all faults together: no trial can run out
base_s = 0.01
cap_s = 0.05
""", encoding="utf-8")
    result = CliRunner().invoke(app, ["run", str(experiment)])
    assert result.exit_code == 0, result.output
    planned = len(TASKS) * 2 * 2
    assert f"complete: {planned}/{planned} trials stored" in result.output
    assert server.faults["500"] > 0 and server.faults["drop"] > 0
    assert server.requests > FAULT_WINDOW  # the fault window was passed through
    with RunStore(tmp_path / "run") as store:
        rows = list(store.trials())
        stats = store.get_meta("runner_stats")[spec]
    assert len(rows) == len({r.key for r in rows}) == planned
    assert [r.outcome for r in rows] == ["success"] * planned
    assert stats["retries"] == FAULTS  # each 500 and each dropped connection: one retry
    assert stats["backend_errors"] == 0
    assert stats["model_calls"] == server.requests - FAULTS
