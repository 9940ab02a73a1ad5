"""Loopback stand-ins for a model server (stdlib ``http.server`` on 127.0.0.1, in a thread).

``ReferenceServer`` answers each task's reference solution as ReAct replies on two wires:
OpenAI's (``GET /v1/models``, ``POST /v1/chat/completions``) and Ollama's (``GET /api/tags``,
``POST /api/show``, ``POST /api/chat`` without streaming, in the shape of the recorded
replies in ``tests/models/fixtures/ollama/``; no durations, as the fake does no work to
time). With ``die_after=N`` it stops listening after its N-th chat answer, as a server
that crashes mid-run does. Models in ``gone`` are listed but their chats are answered 404,
as by a server whose model was removed mid-run. ``shows`` gives a tag's ``/api/show``
body; every tag asked for is kept in ``shown``. Each model's chats span a window (its first
request's arrival to its last answer); :meth:`ReferenceServer.most_models_at_once` counts
the windows that overlap.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from slmbench.agents.tasks import load_suite
from slmbench.agents.tasks.reference import reference_replies


class ReferenceServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, models: tuple[str, ...] = ("ref",), *, die_after: int | None = None,
                 loading: int = 0, port: int = 0,
                 handler: type[BaseHTTPRequestHandler] | None = None,
                 gone: tuple[str, ...] = (),
                 shows: dict[str, dict[str, Any]] | None = None) -> None:
        super().__init__(("127.0.0.1", port), handler or _Handler)
        self.models, self.die_after, self.loading = (*models, *gone), die_after, loading
        self.gone, self.shows = gone, shows or {}
        self.shown: list[str] = []
        self.windows: dict[str, tuple[float, float]] = {}
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

    def count_chat(self, model: str, arrived: float) -> bool:
        """Count one chat answer (of ``model``, whose request arrived at ``arrived``, a
        ``time.monotonic()``; called before the answer is sent, so a request the answer
        causes arrives later); True when it is the last before the server dies."""
        with self.lock:
            self.chats += 1
            first = self.windows.get(model, (arrived, arrived))[0]
            self.windows[model] = (min(first, arrived), time.monotonic())
            return self.die_after is not None and self.chats == self.die_after

    def most_models_at_once(self) -> int:
        """The most models whose chat windows overlap at one moment (0 before any chat)."""
        with self.lock:
            edges = sorted(e for start, end in self.windows.values()
                           for e in ((start, 1), (end, -1)))
        most = live = 0
        for _, step in edges:  # at a tie an end (-1) sorts before a start (+1)
            live += step
            most = max(most, live)
        return most

    def show(self, model: str) -> dict[str, Any] | None:
        """``/api/show``'s body for ``model`` (None: a tag the server does not have)."""
        with self.lock:
            self.shown.append(model)
        if model in self.shows:
            return self.shows[model]
        if model not in self.models or model in self.gone:
            return None
        return {"modelfile": f"FROM {model}\n", "parameters": "", "template": "{{ .Prompt }}",
                "details": {"format": "gguf", "family": "reference"},
                "capabilities": ["completion", "tools"], "model_info": {}}


def chat_completion(model: str, text: str, completion_tokens: int) -> dict[str, Any]:
    """An OpenAI chat-completion answer of ``text`` (10 prompt tokens)."""
    return {
        "id": "chatcmpl-test", "object": "chat.completion", "created": 0, "model": model,
        "choices": [{"index": 0, "finish_reason": "stop",
                     "message": {"role": "assistant", "content": text}}],
        "usage": {"prompt_tokens": 10, "completion_tokens": completion_tokens,
                  "total_tokens": 10 + completion_tokens},
    }


def ollama_chat(model: str, text: str, prompt_tokens: int,
                completion_tokens: int) -> dict[str, Any]:
    """An Ollama ``/api/chat`` answer of ``text`` (not streamed)."""
    return {"model": model, "created_at": "2026-01-01T00:00:00Z",
            "message": {"role": "assistant", "content": text}, "done_reason": "stop",
            "done": True, "prompt_eval_count": prompt_tokens, "eval_count": completion_tokens}


def _openai_reply(model: str, text: str, messages: list[dict[str, Any]]) -> dict[str, Any]:
    return chat_completion(model, text, completion_tokens=5)


def _ollama_reply(model: str, text: str, messages: list[dict[str, Any]]) -> dict[str, Any]:
    # about four characters a token, as English prose: inside the backend's context check
    chars = sum(len(str(m.get("content") or "")) for m in messages)
    return ollama_chat(model, text, prompt_tokens=max(1, chars // 4), completion_tokens=5)


def _openai_missing(model: str) -> dict[str, Any]:
    return {"error": {"message": f"The model `{model}` does not exist.", "code": 404}}


def _ollama_missing(model: str) -> dict[str, Any]:
    return {"error": f'model "{model}" not found, try pulling it first'}


# a chat route's answer and its body for a model the server does not have
_CHAT_ROUTES = {"/v1/chat/completions": (_openai_reply, _openai_missing),
                "/api/chat": (_ollama_reply, _ollama_missing)}


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
        arrived = time.monotonic()
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        model = body["model"]
        if self.path == "/api/show":
            shown = self.server.show(model)
            if shown is None:
                self._send(404, _ollama_missing(model))
            else:
                self._send(200, shown)
            return
        if self.path not in _CHAT_ROUTES:
            self._send(404, {"error": {"message": "not found"}})
            return
        reply, missing = _CHAT_ROUTES[self.path]
        if model in self.server.gone:
            self._send(404, missing(model))
            return
        answer = reply(model, self.server.reply_for(body["messages"]), body["messages"])
        dies = self.server.count_chat(model, arrived)
        self._send(200, answer)
        if dies:
            threading.Thread(target=self.server.stop, daemon=True).start()

    def _send(self, status: int, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
