"""GPTQ and AWQ run outside the project's environment: the command a user runs is wired.

``make quant-venvs`` builds the two venvs, ``scripts/quantize_external.py`` quantizes in
them, and ``slmbench quantize --gguf hf:DIR`` reads the result; refusing ``--precision gptq``
names that route. The quantization itself needs auto-round / llmcompressor and a real model,
so here only what runs without them: the script's interface and its calibration text.
"""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from slmbench.core.errors import ConfigError

ROOT = Path(__file__).resolve().parents[3]
SCRIPT = ROOT / "scripts" / "quantize_external.py"


def _script():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("quantize_external", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_makefile_builds_both_venvs_with_the_pins_that_install_on_the_cpu() -> None:
    make = (ROOT / "Makefile").read_text(encoding="utf-8")
    target = re.search(r"^quant-venvs:\n((?:\t.*\n)+)", make, re.M)
    assert target is not None
    assert "auto-round==0.16.1" in make and "llmcompressor==0.14.0.1" in make
    assert make.count("torch==2.13.0") >= 2  # the project's torch pin in both
    recipe = target.group(1)
    assert "$(AUTOROUND_VENV)/bin/pip install" in recipe
    assert "$(LLMC_VENV)/bin/pip install" in recipe


def test_the_script_offers_every_method_and_imports_no_quantizer_to_start() -> None:
    res = subprocess.run([sys.executable, str(SCRIPT), "--help"], capture_output=True,
                         text=True, check=False, timeout=60)
    assert res.returncode == 0, res.stderr
    assert "{awq,signround,gptq}" in res.stdout and "--gguf" in res.stdout


def test_calibration_text_comes_from_the_fit_split_only(tmp_path: Path) -> None:
    rows = [{"id": f"a{k}", "split": "fit" if k % 2 else "eval", "command": f"cmd-{k}"}
            for k in range(40)]
    (tmp_path / "approval.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    texts = _script().calibration(tmp_path, 4, 16)
    assert len(texts) == 4 and all(len(t) >= 5 * 16 for t in texts)
    words = {w for t in texts for w in t.split("\n")}
    assert words and all(int(w.split("-")[1]) % 2 == 1 for w in words)  # never an eval item


def test_refusing_gptq_and_awq_names_the_route_that_runs_them() -> None:
    from slmbench.microtasks.diagnostics.precisions import NOT_AVAILABLE, parse_precisions

    for method in ("gptq", "awq"):
        assert f"scripts/quantize_external.py --method {method}" in NOT_AVAILABLE[method]
        assert f"--gguf hf:OUT/{method}-qdq" in NOT_AVAILABLE[method]
        assert "make quant-venvs" in NOT_AVAILABLE[method]
        with pytest.raises(ConfigError, match=f"{method} is not available here"):
            parse_precisions(f"fp32,{method}")
    assert "torch>=2.14.1" in NOT_AVAILABLE["gptq"]
    assert "transformers>=5.15,<=5.17" in NOT_AVAILABLE["gptq"]
