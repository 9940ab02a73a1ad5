"""The Ollama backend, against recorded ``/api/chat`` responses.

No Ollama server is installable here, so each test replays a JSON answer from
``fixtures/ollama/`` (shaped like a real ``/api/chat`` reply) through an httpx
mock transport and checks both the request we send and what we make of the reply.
"""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

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
from slmbench.models.ollama import OllamaModel
from slmbench.models.records import Message, ServerTimings, ToolCall

FIXTURES = Path(__file__).parent / "fixtures" / "ollama"
FRANCE = [Message(role="user", content="What is the capital of France?")]
HOST = "http://127.0.0.1:11434"


def replay(name: str, status: int = 200, show: str = "show_qwen3.json",
           **kwargs: Any) -> tuple[OllamaModel, list[httpx.Request]]:
    """A model whose server answers ``/api/show`` with ``show`` and every chat request with
    one recorded response; ``seen`` holds the chat requests."""
    seen: list[httpx.Request] = []
    body = json.loads((FIXTURES / name).read_text())
    shown = json.loads((FIXTURES / show).read_text())

    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/api/show":
            return httpx.Response(200, json=shown)
        seen.append(request)
        return httpx.Response(status, json=body)

    model = OllamaModel("qwen2.5:0.5b", HOST, transport=httpx.MockTransport(handler), **kwargs)
    return model, seen


def test_plain_answer() -> None:
    model, seen = replay("chat_answer.json")
    assert isinstance(model, Model) and not model.supports_logprobs
    out = model.generate(FRANCE, temperature=0.7, seed=11, max_tokens=64, stop=["\n\n"])
    assert out.text == "The capital of France is Paris."
    assert (out.prompt_tokens, out.completion_tokens) == (36, 8)
    assert out.finish_reason == "stop" and out.tool_calls == ()
    request = seen[0]
    assert request.url == httpx.URL(f"{HOST}/api/chat")
    body = json.loads(request.content)
    assert body["model"] == "qwen2.5:0.5b" and body["stream"] is False
    assert body["messages"] == [{"role": "user", "content": "What is the capital of France?"}]
    # pinned decoding: the Modelfile's sampling settings never apply; its stops come first
    assert body["options"] == {"temperature": 0.7, "seed": 11, "num_predict": 64,
                               "num_ctx": 8192, "top_k": 40, "top_p": 0.95, "min_p": 0.05,
                               "repeat_penalty": 1.0,
                               "stop": ["<|im_start|>", "<|im_end|>", "\n\n"]}
    assert "think" not in body  # think=auto sends nothing
    # the server's own durations beside the wall time; latency_s is its total
    assert out.timings == ServerTimings(prompt_s=0.118237, eval_s=0.271109,
                                        total_s=0.412873209, load_s=0.021457917)
    assert out.latency_s == pytest.approx(0.412873209) and out.wall_s is not None


def test_length_finish() -> None:
    model, _ = replay("chat_length.json")
    out = model.generate(FRANCE, max_tokens=3)
    assert out.finish_reason == "length" and out.completion_tokens == 3


def test_thinking_with_empty_content_is_kept_as_reasoning() -> None:
    model, _ = replay("chat_thinking_empty.json")
    out = model.generate(FRANCE, max_tokens=64)
    assert out.text == "" and out.finish_reason == "length"
    assert out.reasoning.startswith("Okay, the user asks for the capital of France.")


@pytest.mark.parametrize(("think", "sent", "num_predict"),
                         [("off", False, 64), ("on", True, 64 + 500)])
def test_think_option_reaches_the_server(think: str, sent: bool, num_predict: int) -> None:
    loaded = load_model(f"ollama:qwen3:4b@{HOST}?think={think}&think_tokens=500")
    assert isinstance(loaded, OllamaModel)
    model, seen = replay("chat_thinking.json", thinking=loaded.thinking)
    out = model.generate(FRANCE, max_tokens=64)
    body = json.loads(seen[0].content)
    assert body["think"] is sent and body["options"]["num_predict"] == num_predict
    assert out.text == "Final Answer: Paris" and "lookup" in out.reasoning
    assert model.settings["think"] == think


def test_settings_record_the_window_the_tag_was_trained_for_once_the_server_showed_it() -> None:
    model, _ = replay("chat_answer.json", num_ctx=2048)
    assert model.settings["num_ctx"] == 2048
    assert "n_ctx_train" not in model.settings  # nothing asked of the server yet
    model.generate(FRANCE)
    # the recorded qwen3 tag's model_info: "qwen3.context_length": 40960
    assert model.settings["n_ctx_train"] == 40960
    plain, _ = replay("chat_answer.json", show="show_llama2.json")
    plain.generate(FRANCE)
    assert plain.settings["n_ctx_train"] == json.loads(
        (FIXTURES / "show_llama2.json").read_text())["model_info"]["llama.context_length"]


def test_a_prompt_the_server_cut_is_context_truncated() -> None:
    model, _ = replay("chat_prompt_cut.json", num_ctx=2048)
    long = [Message(role="system", content="tool description " * 1000), *FRANCE]
    with pytest.raises(ContextOverflowError, match="context_truncated") as err:
        model.generate(long)
    assert "1026 prompt tokens of at least 2" in str(err.value) and "num_ctx" in err.value.hint
    assert model.generate(FRANCE).text  # the same count for a short prompt is no cut


def test_oom_and_no_tools_are_configuration_faults() -> None:
    for name, status, what in [("error_oom.json", 500, "out_of_memory"),
                               ("error_no_tools.json", 400, "no_tool_support")]:
        model, _ = replay(name, status=status)
        with pytest.raises(ConfigurationFault) as err:
            model.generate(FRANCE)
        assert not err.value.transient and what in str(err.value)
        assert len(str(err.value).splitlines()) == 1


def test_native_tool_call_and_history() -> None:
    model, seen = replay("chat_tool_call.json")
    tools = [{"type": "function", "function": {
        "name": "calculator", "description": "Evaluate arithmetic.",
        "parameters": {"type": "object", "properties": {"expression": {"type": "string"}},
                       "required": ["expression"]}}}]
    history = [
        Message(role="user", content="What is 17*23? Then add 1."),
        Message(role="assistant", content="",
                tool_calls=(ToolCall(name="calculator", arguments={"expression": "17*23"}),)),
        Message(role="tool", content="391", name="calculator"),
    ]
    out = model.generate(history, tools=tools)
    assert out.finish_reason == "tool_calls" and out.text == ""
    assert out.tool_calls == (ToolCall(name="calculator", arguments={"expression": "17 * 23"}),)
    body = json.loads(seen[0].content)
    assert body["tools"] == tools
    assert body["messages"][1]["tool_calls"] == [
        {"function": {"name": "calculator", "arguments": {"expression": "17*23"}}}]
    assert body["messages"][2] == {"role": "tool", "content": "391", "tool_name": "calculator"}


def test_num_ctx_option_reaches_the_server() -> None:
    model, seen = replay("chat_answer.json", num_ctx=16384)
    model.generate(FRANCE)
    assert json.loads(seen[0].content)["options"]["num_ctx"] == 16384


def test_missing_tag_says_pull_it() -> None:
    model, _ = replay("error_model_not_found.json", status=404)
    with pytest.raises(ConfigurationFault) as err:
        model.generate(FRANCE)
    assert "not found" in str(err.value) and err.value.hint == "ollama pull qwen2.5:0.5b"


@pytest.mark.parametrize(("status", "transient"), [(500, True), (503, True), (429, True),
                                                   (400, False)])
def test_server_errors(status: int, transient: bool) -> None:
    model, _ = replay("error_server.json", status=status)
    with pytest.raises(BackendError) as err:
        model.generate(FRANCE)
    assert err.value.transient is transient
    assert "llama runner process has terminated" in str(err.value)


def test_unreachable_server_is_transient_and_says_start_it() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    model = load_model(f"ollama:qwen2.5:0.5b@http://127.0.0.1:{port}")
    with pytest.raises(BackendError) as err:
        model.generate(FRANCE)
    assert err.value.transient
    assert f"127.0.0.1:{port} is unreachable" in str(err.value)
    assert "ollama serve" in err.value.hint


def test_timeout_is_transient() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        raise httpx.ReadTimeout("timed out", request=request)

    model = OllamaModel("m", HOST, transport=httpx.MockTransport(handler))
    model._stops = []  # the Modelfile's stops are known: the chat request is the one timed out
    with pytest.raises(BackendError, match="did not answer in time") as err:
        model.generate(FRANCE)
    assert err.value.transient


def test_score_is_refused() -> None:
    model, _ = replay("chat_answer.json")
    with pytest.raises(LogprobsUnsupportedError, match="only of tokens it sampled"):
        model.score(FRANCE, ["Paris"])


def test_spec_parsing(monkeypatch: pytest.MonkeyPatch) -> None:
    model = load_model("ollama:qwen2.5:7b@http://127.0.0.1:9999?num_ctx=4096")
    assert isinstance(model, OllamaModel)
    assert (model.tag, model.host, model.num_ctx) == ("qwen2.5:7b", "http://127.0.0.1:9999", 4096)
    monkeypatch.setenv("OLLAMA_HOST", "http://127.0.0.1:12345")
    assert OllamaModel("llama3.2:3b").host == "http://127.0.0.1:12345"
    monkeypatch.delenv("OLLAMA_HOST")
    assert OllamaModel("llama3.2:3b").host == HOST


@pytest.mark.parametrize("spec", ["ollama:@http://127.0.0.1:1", "ollama:m?num_ctx=big",
                                  "ollama:m?timeout=0", "ollama:m?seed=3",
                                  "ollama:m?think=maybe", "ollama:m?think_tokens=0"])
def test_bad_specs(spec: str) -> None:
    with pytest.raises(ModelSpecError):
        load_model(spec)
