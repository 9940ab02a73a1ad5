"""The local executor needs no Ray (issue #20): with ``ray`` not importable, ``slmbench run``
and the Part B commands run on the local executor, and ``--executor ray`` stops before
anything is written, saying how to install the extra."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).parents[1]
WITHOUT_RAY = """
import sys

class Absent:  # `import ray` raises ModuleNotFoundError, as when the extra is not installed
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] == "ray":
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

sys.meta_path.insert(0, Absent())
from slmbench.cli.main import main

main(sys.argv[1:])
"""


def slmbench(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``slmbench ARGS`` in a fresh interpreter where ``ray`` cannot be imported."""
    return subprocess.run([sys.executable, "-c", WITHOUT_RAY, *args], capture_output=True,
                          text=True, cwd=cwd, timeout=600)


def test_the_local_executor_runs_without_ray_and_executor_ray_names_the_extra(
        tmp_path: Path) -> None:
    run = ("run", "--model", "scripted:echo", "--task", "IR-1", "--temperature", "0.0",
           "--repeats", "1")
    done = slmbench(*run, "--out", str(tmp_path / "run"), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "complete:" in done.stdout and (tmp_path / "run" / "run.sqlite").is_file()

    script = tmp_path / "deny.json"
    script.write_text(json.dumps({"default": "deny", "logprobs": {"deny": -0.1, "*": -3.0}}))
    elig = ("eligibility", "--task-file", str(ROOT / "examples" / "my-tools.yaml"),
            "-m", f"scripted:{script}", "--limit", "2")
    done = slmbench(*elig, "--out", str(tmp_path / "elig"), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "elig" / "eligibility.json").is_file()

    for argv, out in ((run, "run-ray"), (elig, "elig-ray")):
        done = slmbench(*argv, "--executor", "ray", "--out", str(tmp_path / out), cwd=tmp_path)
        assert done.returncode == 2, done.stdout + done.stderr
        assert "executor ray needs the ray package" in done.stderr
        assert 'pip install -e ".[ray]"' in done.stderr and "Traceback" not in done.stderr
        assert not (tmp_path / out).exists()  # nothing written
