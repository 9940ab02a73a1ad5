"""Loopback stand-ins for a model server (stdlib ``http.server`` on 127.0.0.1, in a thread).

``ReferenceServer`` answers the OpenAI routes (``GET /v1/models``, ``POST
/v1/chat/completions``) with each task's reference solution as ReAct replies, and the
Ollama model list (``GET /api/tags``). With ``die_after=N`` it stops listening after
its N-th chat answer, as a server that crashes mid-run does. Models in ``gone`` are listed
but their chats are answered 404, as by a server whose model was removed mid-run.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from slmbench.agents.tasks import load_suite
from slmbench.agents.tasks.reference import reference_replies


class ReferenceServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, models: tuple[str, ...] = ("ref",), *, die_after: int | None = None,
                 loading: int = 0, port: int = 0,
                 handler: type[BaseHTTPRequestHandler] | None = None,
                 gone: tuple[str, ...] = ()) -> None:
        super().__init__(("127.0.0.1", port), handler or _Handler)
        self.models, self.die_after, self.loading = (*models, *gone), die_after, loading
        self.gone = gone
        tasks = load_suite("capability")
        self.replies = {t.instruction: reference_replies(t) for t in tasks}
        self.lock = threading.Lock()
        self.chats = 0
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def start(self) -> ReferenceServer:
        self._thread = threading.Thread(target=self.serve_forever,
                                        kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop listening: new connections are refused from now on."""
        self.shutdown()
        self.server_close()

    def reply_for(self, messages: list[dict[str, Any]]) -> str:
        first_user = next(m["content"] for m in messages if m["role"] == "user")
        replies = next(r for instr, r in self.replies.items() if instr in first_user)
        turn = sum(1 for m in messages if m["role"] == "assistant")
        return replies[min(turn, len(replies) - 1)]

    def count_chat(self) -> bool:
        """Count one chat answer; True when it is the last before the server dies."""
        with self.lock:
            self.chats += 1
            return self.die_after is not None and self.chats == self.die_after


def chat_completion(model: str, text: str, completion_tokens: int) -> dict[str, Any]:
    """An OpenAI chat-completion answer of ``text`` (10 prompt tokens)."""
    return {
        "id": "chatcmpl-test", "object": "chat.completion", "created": 0, "model": model,
        "choices": [{"index": 0, "finish_reason": "stop",
                     "message": {"role": "assistant", "content": text}}],
        "usage": {"prompt_tokens": 10, "completion_tokens": completion_tokens,
                  "total_tokens": 10 + completion_tokens},
    }


class _Handler(BaseHTTPRequestHandler):
    server: ReferenceServer

    def log_message(self, format: str, *args: Any) -> None:
        return None

    def do_GET(self) -> None:
        if self.server.loading > 0:
            self.server.loading -= 1
            self._send(503, {"error": {"message": "Loading model", "code": 503}})
        elif self.path == "/v1/models":
            self._send(200, {"object": "list",
                             "data": [{"id": m, "object": "model"} for m in self.server.models]})
        elif self.path == "/api/tags":
            self._send(200, {"models": [{"name": m, "model": m} for m in self.server.models]})
        else:
            self._send(404, {"error": "not found"})

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if self.path != "/v1/chat/completions":
            self._send(404, {"error": {"message": "not found"}})
            return
        if body["model"] in self.server.gone:
            self._send(404, {"error": {"message": f"The model `{body['model']}` does not "
                                                  "exist.", "code": 404}})
            return
        self._send(200, chat_completion(body["model"], self.server.reply_for(body["messages"]),
                                        completion_tokens=5))
        if self.server.count_chat():
            threading.Thread(target=self.server.stop, daemon=True).start()

    def _send(self, status: int, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
