"""The one fault table: what the backends raise, what docs/servers.md prints, what the
preflight waits for, and that a native-scaffold run of a model without tools stops first."""

from __future__ import annotations

from pathlib import Path

import pytest

from slmbench.core.errors import BackendError, ConfigError, ContextOverflowError
from slmbench.models.faults import (
    FAULTS,
    ConfigurationFault,
    classify,
    fault_error,
    table_markdown,
)
from slmbench.models.readiness import check_native_tools

DOCS = Path(__file__).parents[2] / "docs" / "servers.md"


def test_docs_print_the_table_the_code_uses() -> None:
    assert table_markdown() in DOCS.read_text(encoding="utf-8")


@pytest.mark.parametrize(("status", "message", "name", "kind"), [
    (503, '{"error": {"message": "Loading model", "code": 503}}', "loading", "transient"),
    (500, "llama runner process has terminated: signal: killed", "server_error", "transient"),
    (500, "llama runner process has terminated: cudaMalloc failed: out of memory",
     "out_of_memory", "configuration"),
    (500, "model requires more system memory (12.4 GiB) than is available (7.1 GiB)",
     "out_of_memory", "configuration"),
    (400, "registry.ollama.ai/library/gemma2:2b does not support tools", "no_tool_support",
     "configuration"),
    (404, 'model "qwen9:1b" not found, try pulling it first', "model_not_found",
     "configuration"),
    (429, "slow down", "rate_limited", "transient"),
    (401, "bad key", "bad_request", "configuration"),
    (None, "connection refused", "unreachable", "transient"),
])
def test_rows(status: int | None, message: str, name: str, kind: str) -> None:
    fault = classify(status, message)
    assert (fault.name, fault.kind) == (name, kind)
    error = fault_error("the server at http://x", status, message)
    assert error.transient is (kind == "transient")
    assert isinstance(error, ConfigurationFault) is (kind == "configuration")
    assert name in str(error) and "\n" not in str(error) and error.hint


def test_context_rows_are_overflow() -> None:
    error = fault_error("s", 400, "This model's maximum context length is 4096 tokens")
    assert isinstance(error, ContextOverflowError) and isinstance(error, BackendError)


def test_every_row_is_reachable() -> None:
    assert len({f.name for f in FAULTS}) == len(FAULTS)


@pytest.mark.parametrize("spec", ["ollama:phi3.5:3.8b@http://127.0.0.1:1",
                                  "ollama:gemma2:9b", "llamacpp:smollm2-135m"])
def test_native_runs_of_models_without_tools_stop_at_the_preflight(spec: str) -> None:
    with pytest.raises(ConfigError, match="no native tool calling") as err:
        check_native_tools(spec)
    assert "--scaffold react" in err.value.hint


def test_a_model_with_tools_passes_the_native_check() -> None:
    check_native_tools("ollama:qwen2.5:7b@http://127.0.0.1:1")
    check_native_tools("openai:anything@http://127.0.0.1:1/v1")
