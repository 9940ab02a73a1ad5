"""Spec strings: parsing, and the error a user gets for each kind of bad spec."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from pydantic import ValidationError

from extras import need
from slmbench.core.errors import ConfigError, ModelNotFoundError, ModelSpecError
from slmbench.models import Message, load_model, parse_spec
from slmbench.models.records import as_messages


def test_parse_spec_splits_backend_target_and_options() -> None:
    spec = parse_spec("ollama:qwen2.5:7b@http://127.0.0.1:11434?num_ctx=8192&timeout=60")
    assert spec.backend == "ollama"
    assert spec.target == "qwen2.5:7b@http://127.0.0.1:11434"
    assert spec.options == {"num_ctx": "8192", "timeout": "60"}
    assert spec.option("num_ctx") == "8192" and spec.option("missing", "d") == "d"
    assert spec.raw == "ollama:qwen2.5:7b@http://127.0.0.1:11434?num_ctx=8192&timeout=60"


@pytest.mark.parametrize(("spec", "message"), [
    ("qwen2.5", "names no backend"),
    ("vllm:qwen", "unknown model backend 'vllm'"),
    ("llamacpp:", "has no target"),
    ("llamacpp:?n_ctx=5", "has no target"),
])
def test_malformed_specs(spec: str, message: str) -> None:
    with pytest.raises(ModelSpecError, match=message) as err:
        parse_spec(spec)
    assert err.value.hint


def test_missing_gguf_path(tmp_path: Path) -> None:
    with pytest.raises(ModelNotFoundError, match="does not exist"):
        load_model(f"llamacpp:{tmp_path / 'nope.gguf'}")


def test_unpulled_registry_model_says_pull_it(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SLMBENCH_HOME", str(tmp_path))
    with pytest.raises(ModelNotFoundError) as err:
        load_model("llamacpp:smollm2-135m")
    assert err.value.hint == "slmbench pull smollm2-135m"


def test_unknown_model_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SLMBENCH_HOME", str(tmp_path))
    with pytest.raises(ModelNotFoundError, match="no-such-model"):
        load_model("llamacpp:no-such-model")


def test_missing_script_file(tmp_path: Path) -> None:
    with pytest.raises(ModelNotFoundError, match="does not exist"):
        load_model(f"scripted:{tmp_path / 'script.yaml'}")


@pytest.mark.parametrize("options", ["n_ctx=abc", "n_ctx=0", "threads=-2", "temperature=0.2"])
def test_bad_llamacpp_options_fail_before_loading(options: str, tmp_path: Path) -> None:
    fake = tmp_path / "m.gguf"
    fake.write_bytes(b"not a gguf")  # never read: the options are checked first
    with pytest.raises(ModelSpecError):
        load_model(f"llamacpp:{fake}?{options}")


def test_a_corrupt_gguf_is_a_clear_error(tmp_path: Path) -> None:
    need("llama_cpp", "embedded")  # the error comes from llama.cpp itself
    fake = tmp_path / "m.gguf"
    fake.write_bytes(b"GGUF but truncated")
    with pytest.raises(ConfigError, match="could not load") as err:
        load_model(f"llamacpp:{fake}")
    assert "re-download" in err.value.hint


def test_missing_optional_dependency_names_the_extra(monkeypatch: pytest.MonkeyPatch,
                                                     tmp_path: Path) -> None:
    monkeypatch.setitem(sys.modules, "llama_cpp", None)  # import llama_cpp now fails
    monkeypatch.delitem(sys.modules, "slmbench.models.llamacpp", raising=False)
    gguf = tmp_path / "m.gguf"
    gguf.write_bytes(b"GGUF")  # the spec resolves; loading it needs the extra
    with pytest.raises(ModelSpecError, match="llamacpp backend cannot load") as err:
        load_model(f"llamacpp:{gguf}")
    assert err.value.hint == "pip install 'slmbench[embedded]'"


def test_as_messages_accepts_dicts_and_messages() -> None:
    msgs = as_messages([{"role": "system", "content": "be brief"},
                        Message(role="user", content="hi")])
    assert [m.role for m in msgs] == ["system", "user"]
    with pytest.raises(ValidationError):
        as_messages([{"role": "wizard", "content": "x"}])


@pytest.mark.parametrize(("spec", "says"), [
    ("scripted:echo?delay=abc", "delay='abc'"),
    ("scripted:echo?delay=-1", "delay='-1'"),
    ("scripted:echo?delay=nan", "delay='nan'"),
    ("scripted:echo?dleay=1", "unknown option(s) dleay"),
    ("openai:m@http://127.0.0.1:9/v1?timeout=inf", "timeout='inf'"),
    ("openai:m@http://127.0.0.1:9/v1?timeout=0", "timeout='0'"),
    ("ollama:qwen2.5:7b?num_ctx=yes", "num_ctx='yes'"),
    ("ollama:qwen2.5:7b?num_ctx=-5", "num_ctx='-5'"),
])
def test_a_bad_option_value_is_a_spec_error_naming_it(spec: str, says: str) -> None:
    with pytest.raises(ModelSpecError) as err:
        load_model(spec)
    assert says in str(err.value) and err.value.hint


def test_option_values_are_read_as_written() -> None:
    assert load_model("scripted:echo?delay=0.25").delay_s == 0.25  # type: ignore[attr-defined]
    assert parse_spec("llamacpp:m?threads=3").int_option("threads", 2) == 3
    assert parse_spec("llamacpp:m").int_option("threads", 2) == 2
