"""The committed drift page is what ``benchmarks/chunking_drift.py render`` makes of the committed
measurements, and the tests' tolerances stay above every figure it measured."""

from __future__ import annotations

import json
import runpy
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = runpy.run_path(str(ROOT / "benchmarks" / "chunking_drift.py"))


def _runs() -> dict[str, dict]:
    files = sorted((ROOT / "benchmarks" / "results").glob("chunking_drift-*.json"),
                   key=lambda p: (p.stem != "chunking_drift-native", p.stem))
    return {json.loads(p.read_text())["build"]: json.loads(p.read_text()) for p in files}


def test_the_page_is_generated_from_the_committed_measurements() -> None:
    runs = _runs()
    assert {"native", "portable"} <= set(runs), "both builds are measured"
    page = (ROOT / "docs" / "results" / "chunking-drift.md").read_text(encoding="utf-8")
    assert page == SCRIPT["render_text"](runs), "regenerate: benchmarks/chunking_drift.py render"


def test_the_chunking_bounds_exceed_every_measured_drift() -> None:
    """The bounds in test_llamacpp.py are above the largest drift between chunkings on every
    build measured, so the test is not tuned to one machine's figures."""
    source = (ROOT / "tests" / "models" / "test_llamacpp.py").read_text(encoding="utf-8")
    bounds = {name: float(line.split("=")[1].split("#")[0])
              for line in source.splitlines()
              for name in ("FIRST_TOKEN_TOLERANCE", "SUM_TOLERANCE")
              if line.startswith(f"{name} =")}
    max_diff = SCRIPT["_max_diff"]
    for run in _runs().values():
        for per in run["models"].values():
            for chunking in ("prompt", "tokens"):
                assert max_diff(per[chunking], per["messages"], "first") < bounds[
                    "FIRST_TOKEN_TOLERANCE"]
                assert max_diff(per[chunking], per["messages"], "sum") < bounds["SUM_TOLERANCE"]
