"""The ``llamaserver:`` backend: a llama-server slmbench starts, talks to and always stops.

The embedded tests need ``make llama-server`` (``make test`` builds it) and run under the
model lock; the others check the spec and the preflight without starting anything.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
import tomllib
from pathlib import Path

import httpx
import pytest

from slmbench.core.errors import ModelNotFoundError, ModelSpecError
from slmbench.models import llamaserver
from slmbench.models.catalog import load_registry
from slmbench.models.factory import load_model
from slmbench.models.llamaserver import PINNED_LLAMA_CPP_PYTHON, LlamaServerModel
from slmbench.models.readiness import check_ready
from slmbench.models.records import Message, ToolCall
from slmbench.models.spec import parse_spec

ROOT = Path(__file__).resolve().parents[2]
SMOL = "llamaserver:smollm2-135m?slots=2&n_ctx=2048"
# Qwen 0.5B takes about a second to load here: long enough to watch the server say so
QWEN = "llamaserver:qwen2.5-coder-0.5b?slots=1&n_ctx=2048"


def test_the_server_is_built_from_the_same_pin_as_the_embedded_backend() -> None:
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"]["embedded"]
    assert f"llama-cpp-python[server]=={PINNED_LLAMA_CPP_PYTHON}" in extras
    # ... and with the same compiler flags, which the binary's name says (BUILD_TAG)
    make = (ROOT / "Makefile").read_text()
    assert f"BUILD_TAG := {llamaserver.BUILD_TAG}\n" in make
    assert llamaserver.server_binary().name.endswith(f"-{llamaserver.BUILD_TAG}")
    assert make.count("-DCMAKE_CXX_FLAGS='$(GGML_FLAGS)'") == 2  # the wheel and the server


def test_the_embedded_backend_was_built_without_the_amx_kernels_that_crash_it() -> None:
    """The pinned ggml's AMX matmul dies with a general protection fault on AMX CPUs; the
    Makefile compiles both builds without it, whatever CPU builds them."""
    import llama_cpp

    lib = Path(llama_cpp.__file__).parent / "lib" / "libggml-cpu.so"
    assert b"ggml_backend_amx_mul_mat" not in lib.read_bytes()


def test_unknown_options_and_a_missing_binary_are_refused_before_anything_starts(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ModelSpecError, match="slot"):
        check_ready("llamaserver:smollm2-135m?slot=8")
    monkeypatch.setenv("SLMBENCH_HOME", str(tmp_path))
    with pytest.raises(ModelNotFoundError) as err:
        check_ready("llamaserver:smollm2-135m")
    assert "make llama-server" in err.value.hint


def _servers_of(pid: int) -> list[int]:
    """Running (not zombie) processes whose parent is ``pid`` and that are llama-servers."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        comm, rest = stat[stat.index("(") + 1:stat.rindex(")")], stat[stat.rindex(")") + 2:]
        state, ppid = rest.split()[:2]
        if comm.startswith("llama-server") and int(ppid) == pid and state != "Z":
            found.append(int(entry.name))
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.embedded
def test_a_real_generate_and_the_server_stops_on_close() -> None:
    model = load_model(SMOL)
    assert isinstance(model, LlamaServerModel)
    pid = model.pid
    assert pid is not None and _alive(pid)
    # each slot's window and the one the server says the model was trained for, recorded in
    # every trial: an overflow in 2048 tokens is ours, not SmolLM2's (trained for 8192)
    assert model.settings["n_ctx"] == 2048 and model.settings["slots"] == 2
    assert model.settings["n_ctx_train"] == load_registry().get("smollm2-135m").context == 8192
    out = model.generate([{"role": "user", "content": "Say hello."}], max_tokens=8)
    assert out.text.strip() and out.completion_tokens > 0 and out.prompt_tokens > 0
    again = model.generate([{"role": "user", "content": "Say hello."}], max_tokens=8)
    assert again.text == out.text  # greedy
    # the server's own timings, beside the request's wall time (which also holds HTTP)
    assert out.timings is not None and out.timings.eval_s > 0 and out.wall_s is not None
    assert out.latency_s == out.timings.model_s <= out.wall_s
    model.close()
    assert not _alive(pid)


@pytest.mark.embedded
def test_a_loading_server_answers_503_and_the_backend_waits_until_it_is_ready(
        monkeypatch: pytest.MonkeyPatch) -> None:
    port = llamaserver.free_port()
    monkeypatch.setattr(llamaserver, "free_port", lambda: port)
    seen: list[tuple[int | str, str]] = []  # what the real /health said, change by change
    loaded = threading.Event()

    def watch() -> None:
        while not loaded.is_set():
            try:
                answer = httpx.get(f"http://127.0.0.1:{port}/health", timeout=1.0)
                said: tuple[int | str, str] = (answer.status_code, answer.text)
            except httpx.TransportError:
                said = ("refused", "")
            if not seen or seen[-1] != said:
                seen.append(said)
            time.sleep(0.005)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    try:
        model = load_model(QWEN)  # returns once the model is loaded, or raises
    finally:
        loaded.set()
        watcher.join()
    try:
        codes = [code for code, _ in seen]
        assert 503 in codes, seen  # the server answered while the model was loading...
        assert "Loading model" in seen[codes.index(503)][1]
        assert 200 not in codes[:codes.index(503)]  # ...before it was ever ready
        assert httpx.get(f"http://127.0.0.1:{port}/health").status_code == 200
        out = model.generate([{"role": "user", "content": "Say hello."}], max_tokens=4)
        assert out.completion_tokens > 0  # the backend waited: its first request is answered
    finally:
        model.close()


@pytest.mark.embedded
def test_sigkill_of_a_run_leaves_no_llama_server(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    run = subprocess.Popen(
        [sys.executable, "-m", "slmbench.cli.main", "run", "-m", SMOL, "--task", "IR-1",
         "--temperature", "0.7", "--repeats", "20", "--out", str(tmp_path / "run")],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    try:
        deadline = time.monotonic() + 120
        servers: list[int] = []
        while not servers and time.monotonic() < deadline and run.poll() is None:
            time.sleep(0.2)
            servers = _servers_of(run.pid)
        assert servers, "the run never started its llama-server"
        time.sleep(2.0)  # let it get into the trials
        run.send_signal(signal.SIGKILL)
        run.wait()
        deadline = time.monotonic() + 10
        while any(_alive(p) for p in servers) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not any(_alive(p) for p in servers)
    finally:
        if run.poll() is None:
            run.kill()
        for p in _servers_of(run.pid):
            os.kill(p, signal.SIGKILL)


def test_the_spec_names_the_backend() -> None:
    assert parse_spec(SMOL).backend == "llamaserver"


TOOLS = [{"type": "function", "function": {
    "name": "get_weather", "description": "Current weather for a city",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                   "required": ["city"]}}}]


@pytest.mark.embedded
def test_jinja_renders_tools_and_tool_turns_through_the_gguf_template() -> None:
    """``--jinja``: the server renders OpenAI ``tools``, an assistant ``tool_calls`` turn and a
    ``tool`` result with the GGUF's own template (Qwen's ``<tools>``, ``<tool_call>`` and
    ``<tool_response>`` blocks), and a native request carrying tools is answered.

    Whether the reply comes back as parsed ``tool_calls`` depends on the model writing its
    template's tags; the packaged Qwen2.5-Coder models write bare or fenced JSON instead
    (measured: the module doc), so this test checks the rendering, not the model. (The pinned
    build renders with jinja even without the flag; slmbench passes ``--jinja`` regardless.)"""
    model = load_model(QWEN)
    try:
        history = [
            {"role": "user", "content": "Weather in Oslo?"},
            {"role": "assistant", "content": "", "tool_calls": [{
                "id": "call_0", "type": "function",
                "function": {"name": "get_weather", "arguments": '{"city": "Oslo"}'}}]},
            {"role": "tool", "tool_call_id": "call_0", "content": "ZX-42 degrees"},
        ]
        rendered = model._http.post("/apply-template",
                                    json={"messages": history, "tools": TOOLS}).json()["prompt"]
        assert "<tools>" in rendered and '"name": "get_weather"' in rendered
        assert "<tool_call>" in rendered and '"city": "Oslo"' in rendered
        assert "<tool_response>" in rendered and "ZX-42 degrees" in rendered
        plain = model._http.post("/apply-template", json={"messages": history[:1]}).json()
        assert "<tools>" not in plain["prompt"]  # tools come from the request, not a default
        with_tools = model.generate(history[:1], max_tokens=4, tools=TOOLS)
        without = model.generate(history[:1], max_tokens=4)
        tools_json = model._http.post("/tokenize", json={"content": str(TOOLS)}).json()["tokens"]
        assert with_tools.prompt_tokens - without.prompt_tokens >= len(tools_json) // 2
        steps = [Message(role="user", content="Weather in Oslo?"),  # what run_native sends
                 Message(role="assistant", content="", tool_calls=(
                     ToolCall(name="get_weather", arguments={"city": "Oslo"}, id="call_0"),)),
                 Message(role="tool", content="ZX-42 degrees", tool_call_id="call_0")]
        answered = model.generate(steps, max_tokens=16, tools=TOOLS)  # the native 2nd step
        assert answered.completion_tokens > 0
    finally:
        model.close()
