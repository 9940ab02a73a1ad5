"""The demo's Part B slice: read until decided up to a cap, then the routing verdict."""

from __future__ import annotations

from pathlib import Path

from seq_fakes import Oracle, write_approval

from slmbench.microtasks import tasks as registry
from slmbench.microtasks.demo import demo_slice
from slmbench.microtasks.diagnostics.routes import RoutingTable
from slmbench.microtasks.matrix import MatrixRun

APPROVAL = registry.get("approval")


def test_the_slice_reads_at_most_the_cap_and_prints_the_verdict(tmp_path: Path) -> None:
    golds = write_approval(tmp_path)
    model = Oracle(golds, spec="scripted:right")
    got = demo_slice("scripted:right", out=tmp_path / "b", tasks=[APPROVAL], cap=100,
                     source=tmp_path, loader=lambda _s: model)
    cell = next(c for c in got.run.cells if c.reading == "generation")
    assert cell.n_split == 100 and cell.n_items < 100 and cell.verdict == "eligible"
    assert model.reads == cell.n_items
    assert got.lines[0].startswith("Part B: approval under p0, read until decided")
    assert got.lines[1].startswith("approval: deploy model scripted:right (p0, generation)")
    assert got.lines[-1] == f"routing table: {got.routes_path}"
    assert RoutingTable.load(got.routes_path).route("approval").deploy == "model"
    assert MatrixRun.model_validate_json(got.matrix_path.read_text()).cells == got.run.cells
    # a rerun reads nothing new
    again = Oracle(golds, spec="scripted:right")
    demo_slice("scripted:right", out=tmp_path / "b", tasks=[APPROVAL], cap=100,
               source=tmp_path, loader=lambda _s: again)
    assert again.reads == 0


def test_a_model_no_better_than_the_rules_gets_the_baseline(tmp_path: Path) -> None:
    golds = write_approval(tmp_path)
    got = demo_slice("scripted:wrong", out=tmp_path / "b", tasks=[APPROVAL], cap=60,
                     source=tmp_path,
                     loader=lambda s: Oracle(golds, wrong=True, spec=s))
    assert got.lines[1].startswith("approval: deploy the baseline")
