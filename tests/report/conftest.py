"""Reports built once per session from synthetic runs (a full one and a sparse one)."""

from __future__ import annotations

from pathlib import Path

import pytest
from synthetic_run import MODELS, PARAMS, make_run, make_trials

from slmbench.report import ReportFiles, build_report


@pytest.fixture(scope="session")
def full_report(tmp_path_factory: pytest.TempPathFactory) -> ReportFiles:
    """Four models, three temperatures, three repeats, both suites, known sizes."""
    run = make_run(tmp_path_factory.mktemp("full") / "run")
    return build_report(run, params=PARAMS)


@pytest.fixture(scope="session")
def sparse_report(tmp_path_factory: pytest.TempPathFactory) -> ReportFiles:
    """Two models, one temperature, one repeat, no reliability suite, no known size."""
    two = {m: MODELS[m] for m in list(MODELS)[:2]}
    run = make_run(tmp_path_factory.mktemp("sparse") / "run",
                   make_trials(two, temperatures=(0.7,), repeats=1, reliability=False))
    return build_report(run, Path(run) / "out")
