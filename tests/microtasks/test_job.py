"""The one entry of a Part B reading run: check, read through the store, write JSON + page."""

from __future__ import annotations

from pathlib import Path

import pytest
from seq_fakes import Oracle, write_approval

from slmbench.microtasks import tasks as registry
from slmbench.microtasks.job import Interrupted, Job, run_job
from slmbench.microtasks.matrix import MatrixRun, run_matrix
from slmbench.microtasks.spec import DatasetMissingError
from slmbench.microtasks.store import ReadingStore

APPROVAL = registry.get("approval")


def page(run: MatrixRun) -> str:
    return f"{len(run.cells)} cells\n"


def matrix_job(source: Path, model: Oracle) -> Job[MatrixRun]:
    return Job("eligibility", [model.spec], [APPROVAL], lambda store, ray: run_matrix(
        [model.spec], [APPROVAL], ["p0"], limit=8, source=source, store=store, ray=ray,
        loader=lambda _: model), page, source=source)


def test_a_job_reads_through_its_store_and_writes_its_report_and_page(tmp_path: Path) -> None:
    source = tmp_path / "datasets"
    source.mkdir()
    model = Oracle(write_approval(source), spec="scripted:echo")
    done = run_job(matrix_job(source, model), tmp_path / "out")
    assert done.json_path == tmp_path / "out" / "eligibility.json"
    assert MatrixRun.model_validate_json(done.json_path.read_text()) == done.report
    assert done.page_path.read_text() == done.page == f"{len(done.report.cells)} cells\n"
    assert done.store_path == tmp_path / "out" / "readings.sqlite" and model.reads == 8
    again = run_job(matrix_job(source, model), tmp_path / "out")  # all stored: no reading
    assert model.reads == 8 and again.report.read_counts.from_store == 8


def test_a_job_that_cannot_start_writes_nothing(tmp_path: Path) -> None:
    model = Oracle({}, spec="scripted:echo")
    with pytest.raises(DatasetMissingError, match="not built"):
        run_job(matrix_job(tmp_path / "nothing", model), tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_ctrl_c_keeps_the_readings_and_says_how_to_resume(tmp_path: Path) -> None:
    source = tmp_path / "datasets"
    source.mkdir()
    golds = write_approval(source)

    class Stops(Oracle):
        def generate(self, messages, **kw):  # type: ignore[no-untyped-def]
            if self.reads == 3:
                raise KeyboardInterrupt
            return super().generate(messages, **kw)

    with pytest.raises(Interrupted) as stopped:
        run_job(matrix_job(source, Stops(golds, spec="scripted:echo")), tmp_path / "out")
    assert "interrupted: 3 readings kept in" in stopped.value.hint
    with ReadingStore(tmp_path / "out" / "readings.sqlite") as store:
        assert store.count() == 3
    assert not (tmp_path / "out" / "eligibility.json").exists()
