"""A run that cannot start says why in one line and a hint, exits 2, and writes nothing.

Every command that makes a run folder or a readings store checks first what would stop it
before its first trial or reading: a missing script, an unknown or unpulled registry model, a
missing model file or directory, a bad spec option, a missing optional extra, a dataset not
built. Each case leaves ``tmp_path`` exactly as it was: no run folder, no store, no report.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest
from clirun import CliResult, CliRunner

EXAMPLE = Path(__file__).parents[2] / "examples" / "my-tools.yaml"


def _files(root: Path) -> set[Path]:
    return {p.relative_to(root) for p in root.rglob("*")}


def _refused(result: CliResult, message: str, hint: str) -> None:
    """Exit 2, one error line naming ``message`` and one hint line naming ``hint``."""
    assert result.code == 2, result.out + result.err
    lines = result.err.strip().splitlines()
    assert len(lines) == 2, result.err
    assert lines[0].startswith("error: ") and message in lines[0], result.err
    assert lines[1].startswith("what to do: ") and hint in lines[1], result.err
    assert "Traceback" not in result.out + result.err


@pytest.fixture
def fake_gguf(tmp_path: Path) -> Path:
    """A file named like a GGUF model (its contents are never read by a preflight)."""
    path = tmp_path / "inputs" / "model.gguf"
    path.parent.mkdir()
    path.write_bytes(b"GGUF")
    return path


# (spec, what the error line says, what the hint says)
UNRUNNABLE = [
    ("scripted:{tmp}/no-such-script.json", "script file", "scripted:echo"),
    ("scripted:echo?delay=abc", "option delay='abc'", "?delay=0"),
    ("scripted:echo?speed=2", "unknown option(s) speed", "known options: delay"),
    ("llamacpp:no-such-model", "no model named 'no-such-model' in the registry",
     "`slmbench models`"),
    ("llamacpp:qwen2.5-coder-0.5b", "model qwen2.5-coder-0.5b is not in the cache",
     "slmbench pull qwen2.5-coder-0.5b"),
    ("llamacpp:{tmp}/missing.gguf", "GGUF file", "check the path"),
    ("llamacpp:{gguf}?n_ctx=lots", "option n_ctx='lots'", "?n_ctx=4096"),
    ("openai:m@http://127.0.0.1:9/v1?timeout=soon", "option timeout='soon'", "?timeout=120"),
    ("ollama:qwen2.5:7b@http://127.0.0.1:9?num_ctx=0", "option num_ctx='0'", "?num_ctx="),
    ("nosuch:thing", "unknown model backend 'nosuch'", "use one of"),
]


@pytest.mark.parametrize(("spec", "message", "hint"), UNRUNNABLE)
def test_run_refuses_an_unrunnable_model_before_its_run_folder(
        cli: CliRunner, home: Path, tmp_path: Path, fake_gguf: Path,
        spec: str, message: str, hint: str) -> None:
    spec = spec.format(tmp=tmp_path, gguf=fake_gguf)
    before = _files(tmp_path)
    result = cli("run", "-m", spec, "-s", "quick", "--out", str(tmp_path / "run"))
    _refused(result, message, hint)
    assert _files(tmp_path) == before


@pytest.mark.parametrize("command", ["run", "demo"])
def test_a_missing_script_leaves_no_folder_for_demo_either(
        cli: CliRunner, home: Path, tmp_path: Path, command: str) -> None:
    before = _files(tmp_path)
    argv = (["run", "-m", f"scripted:{tmp_path}/none.yaml", "-s", "quick"] if command == "run"
            else ["demo", "-m", f"scripted:{tmp_path}/none.yaml"])
    _refused(cli(*argv, "--out", str(tmp_path / "out")), "script file", "scripted:echo")
    assert _files(tmp_path) == before


def test_the_hf_backend_without_its_extra_is_refused_with_the_extra_named(
        cli: CliRunner, home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    model = tmp_path / "inputs" / "hf-model"
    model.mkdir(parents=True)
    (model / "config.json").write_text("{}", encoding="utf-8")
    monkeypatch.delitem(sys.modules, "slmbench.models.hf", raising=False)
    for module in ("torch", "transformers"):  # as if installed without the hf extra
        monkeypatch.setitem(sys.modules, module, None)
    before = _files(tmp_path)
    result = cli("run", "-m", f"hf:{model}", "-s", "quick", "--out", str(tmp_path / "run"))
    _refused(result, "the hf backend cannot load", "pip install 'slmbench[hf]'")
    assert _files(tmp_path) == before


def test_the_llamacpp_backend_without_its_extra_is_refused_with_the_extra_named(
        cli: CliRunner, home: Path, tmp_path: Path, fake_gguf: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "llama_cpp", None)  # as if llama-cpp-python were absent
    before = _files(tmp_path)
    result = cli("run", "-m", f"llamacpp:{fake_gguf}", "-s", "quick",
                 "--out", str(tmp_path / "run"))
    _refused(result, "the llamacpp backend cannot load", "pip install 'slmbench[embedded]'")
    assert _files(tmp_path) == before


@pytest.mark.parametrize(("target", "message", "hint"), [
    ("{tmp}/no-such-dir", "no model directory or file at", "give a local model directory"),
    ("{tmp}/inputs", "has no config.json", "?gguf_file="),
    ("{tmp}/inputs?dtype=int3", "option dtype='int3'", "?dtype=auto"),
    ("{tmp}/inputs?download=yes", "option download='yes'", "?download=0"),
    ("someone/not-cached-model", "is not in the local Hugging Face cache", "?download=1"),
])
def test_an_hf_model_that_is_not_there_is_refused_before_the_run_folder(
        cli: CliRunner, home: Path, tmp_path: Path, fake_gguf: Path,
        monkeypatch: pytest.MonkeyPatch, target: str, message: str, hint: str) -> None:
    pytest.importorskip("transformers", reason="needs the hf extra: pip install -e '.[hf]'")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "inputs" / "hub"))
    before = _files(tmp_path)
    result = cli("run", "-m", f"hf:{target.format(tmp=tmp_path)}", "-s", "quick",
                 "--out", str(tmp_path / "run"))
    _refused(result, message, hint)
    assert _files(tmp_path) == before


def test_the_ray_executor_without_ray_is_refused_before_the_run_folder(
        cli: CliRunner, home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # as if the ray extra were not installed
    before = _files(tmp_path)
    result = cli("run", "-m", "scripted:echo", "-s", "quick", "--executor", "ray",
                 "--out", str(tmp_path / "run"))
    _refused(result, "executor ray needs the ray package", ".[ray]")
    assert _files(tmp_path) == before


@pytest.fixture
def my_tools(tmp_path: Path) -> Path:
    """The shipped example micro-task (items beside it), so no dataset needs building."""
    (tmp_path / "inputs").mkdir(exist_ok=True)
    for name in ("my-tools.yaml", "my-tools.jsonl"):
        shutil.copy(EXAMPLE.parent / name, tmp_path / "inputs" / name)
    yield tmp_path / "inputs" / "my-tools.yaml"
    from slmbench.microtasks import tasks as registry

    registry.unregister("my-tools")


@pytest.mark.parametrize("command", ["eligibility", "diagnose"])
def test_part_b_readings_refuse_an_unrunnable_model_before_the_store(
        cli: CliRunner, home: Path, tmp_path: Path, fake_gguf: Path, my_tools: Path,
        command: str) -> None:
    before = _files(tmp_path)
    argv = [command, "-m", f"scripted:{tmp_path}/none.json", "--out", str(tmp_path / "out")]
    if command == "eligibility":
        argv += ["--task-file", str(my_tools)]
    else:  # diagnose reads a registered task: the example, registered by a first command
        from slmbench.microtasks import tasks as registry
        from slmbench.microtasks.taskfile import load_task_file

        registry.register(load_task_file(my_tools), replace=True)
        argv += ["-t", "my-tools"]
    _refused(cli(*argv), "script file", "scripted:echo")
    assert _files(tmp_path) == before


@pytest.mark.parametrize("command", ["eligibility", "diagnose"])
def test_part_b_readings_refuse_a_dataset_not_built_before_the_store(
        cli: CliRunner, home: Path, tmp_path: Path, command: str) -> None:
    before = _files(tmp_path)
    result = cli(command, "-m", "scripted:echo", "-t", "approval", "--out",
                 str(tmp_path / "out"))
    _refused(result, "the approval dataset is not built", "slmbench data prepare --only approval")
    assert _files(tmp_path) == before


def test_quantize_refuses_a_missing_model_before_the_store(
        cli: CliRunner, home: Path, tmp_path: Path, my_tools: Path) -> None:
    pytest.importorskip("transformers", reason="needs the hf extra: pip install -e '.[hf]'")
    from slmbench.microtasks import tasks as registry
    from slmbench.microtasks.taskfile import load_task_file

    registry.register(load_task_file(my_tools), replace=True)
    before = _files(tmp_path)
    result = cli("quantize", "-m", str(tmp_path / "no-model"), "-t", "my-tools",
                 "--out", str(tmp_path / "out"))
    _refused(result, "no model directory or file at", "give a local model directory")
    assert _files(tmp_path) == before


def _study(tmp_path: Path, blocks: str) -> Path:
    path = tmp_path / "inputs" / "study.toml"
    path.write_text(f'name = "s"\nout = "{tmp_path}/study-out"\n{blocks}', encoding="utf-8")
    return path


@pytest.mark.parametrize("blocks", [
    # the second Part A block cannot run: the first one must not have started either
    '[[part_a]]\nmodels = ["scripted:echo"]\nsuites = ["quick"]\n'
    '[[part_a]]\nmodels = ["scripted:{tmp}/none.json"]\nsuites = ["quick"]\n',
    # Part B's model cannot run: Part A (which runs first) must not have started
    '[[part_a]]\nmodels = ["scripted:echo"]\nsuites = ["quick"]\n'
    '[part_b]\nmodels = ["scripted:{tmp}/none.json"]\ntasks = ["approval"]\n',
], ids=["second-part-a-block", "part-b-after-part-a"])
def test_a_study_checks_every_block_before_running_any(
        cli: CliRunner, home: Path, tmp_path: Path, fake_gguf: Path, blocks: str) -> None:
    study = _study(tmp_path, blocks.replace("{tmp}", str(tmp_path)))
    before = _files(tmp_path)
    _refused(cli("study", str(study)), "script file", "scripted:echo")
    assert _files(tmp_path) == before


def test_a_study_whose_part_b_dataset_is_not_built_runs_nothing(
        cli: CliRunner, home: Path, tmp_path: Path, fake_gguf: Path) -> None:
    study = _study(tmp_path, '[[part_a]]\nmodels = ["scripted:echo"]\nsuites = ["quick"]\n'
                             '[part_b]\nmodels = ["scripted:echo"]\ntasks = ["approval"]\n')
    before = _files(tmp_path)
    _refused(cli("study", str(study)), "the approval dataset is not built",
             "slmbench data prepare")
    assert _files(tmp_path) == before
