"""``slmbench quantize --executor ray`` on a local Ray cluster (``ray.init(num_cpus=2)``) with
a scripted torch model: the same stored readings, RTN reports and paired comparisons as the
local executor (issue #20)."""

# ruff: noqa: E402  (imports that need an extra come after its importorskip)
from __future__ import annotations

import json
import sqlite3
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from extras import need

ray = need("ray", "ray")
need("torch", "hf")

import test_quantize
from test_quantize import TinyTorchModel, approval_home  # noqa: F401  (a fixture)

from slmbench.microtasks import tasks
from slmbench.microtasks.diagnostics.precisions import RTN_PRECISIONS, RtnReport
from slmbench.microtasks.diagnostics.quantize import precisions_on, rtn_quantize_, run_quantize
from slmbench.microtasks.store import ReadingStore
from slmbench.models.base import Model
from slmbench.models.ray import NAMESPACE

pytestmark = pytest.mark.slow

SOURCE = "/models/m.gguf"
LEVELS = ["fp32", "rtn4", "rtn4-sym"]


@pytest.fixture(scope="module")
def cluster() -> Iterator[None]:
    """A local Ray instance for the whole module; the test models pickled by value."""
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, namespace=NAMESPACE)
    for module in (sys.modules[__name__], test_quantize):
        ray.cloudpickle.register_pickle_by_value(module)
    yield
    ray.shutdown()


def load(source: str, level: str) -> tuple[Model, RtnReport | None]:
    """What ``load_precision`` does, on the tiny torch model: RTN levels rounded on load."""
    model = TinyTorchModel(f"fake:{level}")
    report = (rtn_quantize_(model.model, symmetric=level.endswith("-sym"))
              if level in RTN_PRECISIONS else None)
    return model, report


TIMINGS = ("seconds", "score_seconds")  # a raw reading's timings


def rows(db: Path) -> list[tuple[Any, ...]]:
    """A store's readings in key order, without their timing; and its notes (RTN reports)."""
    with sqlite3.connect(db) as conn:
        found = conn.execute("SELECT * FROM readings ORDER BY 1, 2, 3, 4, 5").fetchall()
        notes = conn.execute("SELECT * FROM meta WHERE key LIKE 'note:%' ORDER BY 1").fetchall()
    return [(*r[:5], {k: v for k, v in json.loads(r[5]).items() if k not in TIMINGS})
            for r in found] + notes


def quantize(db: Path, ray_cluster: Any = None) -> Any:
    with ReadingStore(db) as store:
        return run_quantize(SOURCE, LEVELS, [tasks.get("approval")], limit=None, loader=load,
                            store=store,
                            ray=ray_cluster)


def test_quantize_on_ray_stores_what_the_local_executor_stores(
        cluster: None, approval_home: Path, tmp_path: Path) -> None:  # noqa: F811
    local = quantize(tmp_path / "local.sqlite")
    with precisions_on("ray", SOURCE, LEVELS, replicas=2, threads=1, load=load) as on_ray:
        assert on_ray is not None
        got = quantize(tmp_path / "ray.sqlite", on_ray)
        assert set(on_ray.models) == {f"{SOURCE}#{level}" for level in LEVELS}
        assert all(not m.actors for m in on_ray.models.values())  # each level's replicas ended
    assert got.read_counts.read_now == local.read_counts.read_now == 12 * len(LEVELS)
    assert rows(tmp_path / "ray.sqlite") == rows(tmp_path / "local.sqlite")
    assert got.readings == local.readings
    assert got.cells == local.cells and got.comparisons == local.comparisons
    assert got.rtn == local.rtn and set(got.rtn) == {"rtn4", "rtn4-sym"}  # measured in actors
    assert set(got.load_seconds) == set(LEVELS)
    with precisions_on("ray", SOURCE, LEVELS, threads=1, load=load) as on_ray:
        again = quantize(tmp_path / "ray.sqlite", on_ray)  # all stored: no level is loaded
        assert not on_ray.models
    assert (again.read_counts.from_store, again.read_counts.read_now) == (12 * len(LEVELS), 0)
    assert again.rtn == local.rtn  # from the store's notes

