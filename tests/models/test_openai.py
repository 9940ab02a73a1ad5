"""The OpenAI-compatible backend against a real llama.cpp server on loopback.

The contract tests run against ``python -m llama_cpp.server`` serving the
SmolLM2 GGUF; error mapping and native tool calls are tested by replaying
OpenAI-shaped answers through an httpx mock transport.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

import httpx
import pytest

from slmbench.core.errors import (
    BackendError,
    ContextOverflowError,
    LogprobsUnsupportedError,
    ModelSpecError,
)
from slmbench.models import Model, load_model
from slmbench.models.faults import ConfigurationFault
from slmbench.models.openai import OpenAIModel
from slmbench.models.records import Message, ServerTimings, ToolCall
from slmbench.models.thinking import Thinking

if TYPE_CHECKING:
    from slmbench.models.llamacpp import LlamaCppModel

FRANCE = [Message(role="user", content="What is the capital of France?")]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="session")
def server_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A llama.cpp OpenAI-compatible server for SmolLM2 on a free loopback port."""
    port = _free_port()
    from slmbench.models.catalog import resolve_target

    gguf = resolve_target("smollm2-135m")
    log_path = tmp_path_factory.mktemp("server") / "server.log"
    log = log_path.open("w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "llama_cpp.server", "--model", str(gguf), "--host", "127.0.0.1",
         "--port", str(port), "--n_threads", "2", "--n_ctx", "2048", "--verbose", "False"],
        stdout=log, stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}/v1"
    try:
        for _ in range(240):  # up to about 60 s
            if proc.poll() is not None:
                pytest.fail(f"llama_cpp.server exited: {log_path.read_text()[-2000:]}")
            try:
                if httpx.get(f"{url}/models", timeout=1.0).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            time.sleep(0.25)
        else:
            pytest.fail("llama_cpp.server did not become ready")
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


@pytest.fixture(scope="session")
def served(server_url: str) -> Iterator[OpenAIModel]:
    model = load_model(f"openai:smollm2@{server_url}")
    assert isinstance(model, OpenAIModel)
    yield model
    model.close()


@pytest.mark.embedded
class TestAgainstLlamaCppServer:
    def test_is_a_model_with_native_tools(self, served: OpenAIModel) -> None:
        assert isinstance(served, Model)
        assert served.supports_native_tools and not served.supports_logprobs

    def test_greedy_is_deterministic(self, served: OpenAIModel) -> None:
        a = served.generate(FRANCE, max_tokens=16)
        b = served.generate(FRANCE, max_tokens=16)
        assert a.text and a.text == b.text

    def test_server_honours_the_seed(self, served: OpenAIModel) -> None:
        a = served.generate(FRANCE, temperature=0.9, seed=1, max_tokens=16)
        b = served.generate(FRANCE, temperature=0.9, seed=1, max_tokens=16)
        c = served.generate(FRANCE, temperature=0.9, seed=2, max_tokens=16)
        assert a.text == b.text != c.text

    def test_usage_and_length(self, served: OpenAIModel, smollm: LlamaCppModel) -> None:
        out = served.generate(FRANCE, max_tokens=3)
        assert out.finish_reason == "length"
        assert out.completion_tokens == 3
        # The server renders the same GGUF chat template as the embedded backend.
        assert out.prompt_tokens == smollm.generate(FRANCE, max_tokens=1).prompt_tokens
        assert out.model == served.spec and out.latency_s > 0

    def test_stop_sequence(self, served: OpenAIModel) -> None:
        full = served.generate(FRANCE, max_tokens=16)
        assert "," in full.text
        cut = served.generate(FRANCE, max_tokens=16, stop=[","])
        assert cut.finish_reason == "stop"
        assert cut.text == full.text.split(",")[0]

    def test_unknown_route_is_a_permanent_error(self, server_url: str) -> None:
        model = OpenAIModel("smollm2", server_url.removesuffix("/v1") + "/nowhere")
        with pytest.raises(BackendError) as err:
            model.generate(FRANCE, max_tokens=2)
        assert not err.value.transient and "404" in str(err.value)

    def test_score_is_refused(self, served: OpenAIModel) -> None:
        with pytest.raises(LogprobsUnsupportedError, match="log-probabilities"):
            served.score(FRANCE, ["Paris", "Banana"])


def test_unreachable_server_is_transient_and_names_the_url() -> None:
    url = f"http://127.0.0.1:{_free_port()}/v1"
    model = load_model(f"openai:anything@{url}")
    with pytest.raises(BackendError) as err:
        model.generate(FRANCE, max_tokens=2)
    assert err.value.transient
    assert url in str(err.value) and "start the server" in err.value.hint


def _replaying(reply: Callable[[dict], httpx.Response]) -> tuple[OpenAIModel, list[dict]]:
    seen: list[dict] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(json.loads(request.content))
        return reply(seen[-1])

    client = httpx.Client(transport=httpx.MockTransport(handler))
    return OpenAIModel("m", "http://127.0.0.1:9/v1", http_client=client), seen


def _chat(message: dict, finish: str) -> httpx.Response:
    return httpx.Response(200, json={
        "id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "m",
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": 42, "completion_tokens": 7, "total_tokens": 49},
    })


def test_native_tool_calls_round_trip() -> None:
    model, seen = _replaying(lambda _: _chat({
        "role": "assistant", "content": None,
        "tool_calls": [
            {"id": "c1", "type": "function",
             "function": {"name": "calculator", "arguments": '{"expression": "2+2"}'}},
            {"id": "c2", "type": "function",
             "function": {"name": "web_search", "arguments": "{not json"}},
        ]}, "tool_calls"))
    history = [
        Message(role="user", content="2+2?"),
        Message(role="assistant", content="",
                tool_calls=(ToolCall(name="calculator", arguments={"expression": "1+1"},
                                     id="c0"),)),
        Message(role="tool", content="2", tool_call_id="c0", name="calculator"),
    ]
    tools = [{"type": "function", "function": {"name": "calculator", "parameters": {}}}]
    out = model.generate(history, tools=tools, temperature=0.3, seed=7, max_tokens=50,
                         stop=["Observation:"])
    assert out.finish_reason == "tool_calls" and out.text == ""
    assert out.tool_calls == (
        ToolCall(name="calculator", arguments={"expression": "2+2"}, id="c1"),
        ToolCall(name="web_search", arguments={"_unparsed": "{not json"}, id="c2"),
    )
    assert (out.prompt_tokens, out.completion_tokens) == (42, 7)
    body = seen[0]
    assert body["tools"] == tools and body["stop"] == ["Observation:"]
    assert (body["temperature"], body["seed"], body["max_tokens"]) == (0.3, 7, 50)
    assert body["messages"][1]["tool_calls"][0]["function"] == {
        "name": "calculator", "arguments": '{"expression": "1+1"}'}
    assert body["messages"][2] == {"role": "tool", "content": "2", "tool_call_id": "c0"}


@pytest.mark.parametrize(("status", "transient"), [(429, True), (500, True), (503, True),
                                                   (400, False), (401, False), (404, False)])
def test_http_errors_map_to_backend_errors(status: int, transient: bool) -> None:
    model, seen = _replaying(lambda _: httpx.Response(status, json={"error": {"message": "no"}}))
    with pytest.raises(BackendError) as err:
        model.generate(FRANCE)
    assert err.value.transient is transient
    assert str(status) in str(err.value)
    assert len(seen) == 1  # the client itself never retries


@pytest.mark.parametrize("spec", ["openai:@http://127.0.0.1:1/v1", "openai:m?timeout=-1",
                                  "openai:m?temperature=1"])
def test_bad_specs(spec: str) -> None:
    with pytest.raises(ModelSpecError):
        load_model(spec)


def test_base_url_defaults_to_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:5555/v1")
    assert OpenAIModel("m").base_url == "http://127.0.0.1:5555/v1"
    monkeypatch.delenv("OPENAI_BASE_URL")
    assert OpenAIModel("m").base_url == "http://127.0.0.1:8000/v1"


def test_decoding_is_pinned_on_the_wire_and_think_off_reaches_the_template() -> None:
    model, seen = _replaying(lambda _: _chat({"role": "assistant", "content": "Paris"}, "stop"))
    model.thinking = Thinking("off")
    model.generate(FRANCE, temperature=0.0, seed=3, max_tokens=20)
    body = seen[0]
    assert (body["temperature"], body["top_p"], body["seed"], body["max_tokens"]) == (
        0.0, 0.95, 3, 20)
    assert (body["top_k"], body["min_p"], body["repetition_penalty"], body["repeat_penalty"]) == (
        40, 0.05, 1.0, 1.0)
    assert body["chat_template_kwargs"] == {"enable_thinking": False}
    assert "extra_fields" in model.settings and model.settings["think"] == "off"


def test_llama_servers_timings_are_the_latency_and_the_wall_time_is_kept() -> None:
    def reply(_: dict) -> httpx.Response:
        answer = _chat({"role": "assistant", "content": "Paris"}, "stop")
        body = {**json.loads(answer.content), "timings": {
            "prompt_n": 12, "prompt_ms": 40.5, "predicted_n": 2, "predicted_ms": 19.5}}
        return httpx.Response(200, json=body)

    out = _replaying(reply)[0].generate(FRANCE)
    assert out.timings == ServerTimings(prompt_s=0.0405, eval_s=0.0195)
    assert out.latency_s == pytest.approx(0.06) and out.wall_s is not None
    plain = _replaying(lambda _: _chat({"role": "assistant", "content": "Paris"}, "stop"))[0]
    out = plain.generate(FRANCE)  # a server that reports no timings: the wall time
    assert out.timings is None and out.latency_s == out.wall_s


def test_think_on_raises_the_cap_and_keeps_the_servers_reasoning() -> None:
    model, seen = _replaying(lambda _: _chat(
        {"role": "assistant", "content": "", "reasoning_content": "Paris, surely; but"},
        "length"))
    model.thinking = Thinking("on", 1000)
    out = model.generate(FRANCE, max_tokens=20)
    assert seen[0]["max_tokens"] == 1020
    assert seen[0]["chat_template_kwargs"] == {"enable_thinking": True}
    assert out.finish_reason == "length" and out.text == ""
    assert out.reasoning == "Paris, surely; but"


@pytest.mark.parametrize(("status", "message", "error", "name"), [
    (400, "This model's maximum context length is 4096 tokens. However, you requested 5000",
     ContextOverflowError, "context_length"),
    (400, "the request exceeds the available context size, try increasing it",
     ContextOverflowError, "context_length"),
    (400, "model qwen does not support tools", ConfigurationFault, "no_tool_support"),
    (404, "The model `qwen3` does not exist.", ConfigurationFault, "model_not_found"),
])
def test_faults_follow_the_table(status: int, message: str, error: type, name: str) -> None:
    model, _ = _replaying(lambda _: httpx.Response(status, json={"error": {"message": message}}))
    with pytest.raises(error) as err:
        model.generate(FRANCE)
    assert not err.value.transient and name in str(err.value)
