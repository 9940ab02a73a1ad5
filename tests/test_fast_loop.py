"""The README's fast loop, ``pytest -m "not embedded"``, collects without the heavy extras.

A fresh ``pip install -e ".[test]"`` has no llama-cpp-python, torch, transformers or ray. The
suite is collected in a subprocess where importing any of them fails: collection must end
without an error, and each module that needs one is skipped with a reason naming its extra.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).parents[1]
HEAVY = ("llama_cpp", "torch", "transformers", "ray", "auto_round", "llmcompressor")
COLLECT = f"""
import sys

class Absent:  # `import name` raises ModuleNotFoundError, as when it is not installed
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {HEAVY!r}:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
        return None

sys.meta_path.insert(0, Absent())  # (not None in sys.modules: scipy probes sys.modules)
import pytest
sys.exit(pytest.main(["--collect-only", "-q", "-rs", "-p", "no:cacheprovider",
                      "-m", "not embedded", {str(ROOT / "tests")!r}]))
"""


def test_the_fast_loop_collects_with_the_test_extra_alone() -> None:
    done = subprocess.run([sys.executable, "-c", COLLECT], capture_output=True, text=True,
                          cwd=ROOT, timeout=900)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert " error" not in done.stdout.strip().splitlines()[-1], done.stdout[-3000:]
    skipped = [line for line in done.stdout.splitlines() if line.startswith("SKIPPED")]
    assert skipped, "the modules that need an extra are skipped, not silently absent"
    for line in skipped:
        assert "needs the" in line and "extra" in line, line
