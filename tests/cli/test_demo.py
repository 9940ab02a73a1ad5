"""``slmbench demo`` runs the main job end to end and ends by printing the HTML report."""

from __future__ import annotations

import json
import re
import sqlite3
import sys
from contextlib import closing
from pathlib import Path

import pytest
from clirun import CliRunner

from slmbench.agents.runner.config import DEMO_MODEL, demo_dir
from slmbench.agents.store import RunStore
from slmbench.microtasks.diagnostics.routes import RoutingTable
from slmbench.microtasks.matrix import MatrixRun
from slmbench.microtasks.store import ReadingStore
from slmbench.report.demo_page import NEXT_COMMAND

sys.path.insert(0, str(Path(__file__).parents[1] / "microtasks"))
from seq_fakes import write_approval, write_tools


@pytest.fixture
def part_b_data(home: Path) -> Path:
    """The demo slice's two micro-task datasets in the throw-away cache."""
    data = home / "datasets"
    data.mkdir(parents=True)
    write_approval(data)
    write_tools(data, 70)
    return data


def _page_path(stdout: str) -> Path:
    return Path(stdout.strip().splitlines()[-1])


def test_demo_runs_both_halves_and_ends_with_one_report_of_both(
        cli: CliRunner, part_b_data: Path, tmp_path: Path) -> None:
    out = tmp_path / "demo"
    result = cli("demo", "--model", "scripted:silent", "--out", str(out))
    assert result.code == 0, result.err
    page = _page_path(result.out)
    assert page == out / "demo-report.md" and page.is_file()
    text = page.read_text(encoding="utf-8")
    html = out / "report" / "report.html"
    assert "scripted:silent" in html.read_text(encoding="utf-8")
    assert "(report/report.html)" in text and "(part-b/routes.json)" in text
    assert "## Part A: agent reliability\n\n19 trials." in text
    # the page opens with what a newcomer acts on: what the model did, the routes, what next
    short = text[text.index("## In short"):text.index("## Part A")]
    # it leads with the funnel: a silent model never acts, so it breaks at the first stage
    lead = short.split("\n")[2]
    assert lead.startswith("- **Where the model breaks:** it breaks at *acts*: 0.0 [")
    assert "right tool 0.0 [" in lead and "(#stage-funnel-where-the-agent-breaks)" in lead
    assert "### Stage funnel: where the agent breaks" in text
    assert "0 of 8 capability tasks solved in 19 trials" in short
    assert "the commonest failure: 19 of 19 trials" in short
    assert "approval → baseline (" in short and "tools → baseline (" in short
    assert NEXT_COMMAND in short
    assert "## Part B: micro-task eligibility" in text
    assert "## What to deploy per micro-task" in text
    # the Part B slice: two micro-tasks x p0, read up to the cap of 60, then the verdict;
    # an empty reply decides nothing, so the baselines are deployed
    assert "scripted:silent · approval · p0: reading up to 60 items" in result.out
    assert "scripted:silent · tools · p0: reading up to 60 items" in result.out
    assert "approval: deploy the baseline" in result.out
    assert "tools: deploy the baseline" in result.out
    assert "| approval | baseline |" in text and "| tools | baseline |" in text
    routes = RoutingTable.load(out / "part-b" / "routes.json")
    assert {r.task: r.deploy for r in routes.routes} == {"approval": "baseline",
                                                         "tools": "baseline"}
    with ReadingStore(out / "part-b" / "readings.sqlite") as store:
        assert store.count("scripted:silent") > 0
    # one answer on every item read, but at most 60 items cannot show a cell constant (that
    # takes over a hundred): each is judged like any other cell, and none is eligible
    run = MatrixRun.model_validate_json((out / "part-b" / "eligibility.json").read_text())
    assert run.cells and not any(c.constant or c.eligible for c in run.cells)
    assert all(c.n_items <= 60 and c.constant_p is not None for c in run.cells)
    summary = json.loads((out / "analysis_summary.json").read_text())
    # every quick task once, plus every fault and one rewording of each kind (not the other
    # six), and the consistency task three times (its min_repeats): the seed's four figures,
    # but one task per dimension is below the 3 tasks a measured dimension needs, so each is
    # not measurable and the demo has no composite
    assert summary["n_trials"] == 19
    with RunStore(out) as store:
        robustness = sorted(t.key.variant for t in store.trials() if t.key.task == "RR-1")
    assert robustness == ["base", "para1", "paraphrase"]
    [dims] = summary["dimensions"]
    assert dims["seed"]["consistency"]["estimate"] == 0.0
    assert set(dims["not_measurable"]) == {"consistency", "robustness", "fault_tolerance",
                                           "safety"}
    assert dims["dimensions"] == {} and dims["composite"] is None
    assert "not measurable" in text
    with RunStore(out) as store:
        outcomes = {t.outcome for t in store.trials()}
    assert outcomes == {"format_failure"}  # an empty reply never passes for an answer


def test_demo_resumes_in_the_same_directory(
        cli: CliRunner, part_b_data: Path, tmp_path: Path) -> None:
    out = tmp_path / "demo"
    assert cli("demo", "-m", "scripted:echo", "--out", str(out), "-t", "IR-1").code == 0
    with RunStore(out) as store:
        first = store.count()
    with ReadingStore(out / "part-b" / "readings.sqlite") as readings:
        read = readings.count()
    again = cli("demo", "-m", "scripted:echo", "--out", str(out), "-t", "IR-1")
    assert again.code == 0
    assert "0 run now" in again.out
    with RunStore(out) as store:
        assert store.count() == first == 1
    with ReadingStore(out / "part-b" / "readings.sqlite") as readings:
        assert readings.count() == read > 0


def test_demo_prints_the_time_elapsed_and_an_estimate_before_each_phase(
        cli: CliRunner, part_b_data: Path, tmp_path: Path) -> None:
    out = tmp_path / "demo"
    args = ("demo", "-m", "scripted:echo", "--out", str(out), "-t", "IR-1", "--repeats", "2")
    first = cli(*args)
    assert first.code == 0, first.err
    lines = [line for line in first.out.splitlines() if " elapsed · " in line]
    assert [re.sub(r"^\d+:\d\d:\d\d elapsed · ([^:]+): .*", r"\1", line) for line in lines] == [
        "Part A grid", "Part A report", "Part B slice", "page"]
    # nothing stored, and no measured figure for a scripted model: said so, no number made up
    assert "Part A grid: 2 trials planned, 0 stored; no estimate: no trial of scripted:echo " \
           "stored yet" in lines[0]
    assert "Part B slice: at most 120 readings planned, 0 stored; no estimate" in lines[2]
    # each line comes before its phase's own output
    text = first.out
    order = ["Part A grid: ", "run: 2 trials planned", "Part A report: ", "HTML report: ",
             "Part B slice: ", "scripted:echo · approval · p0: reading up to 60 items",
             "page: ", "Report (Part A and Part B):"]
    assert [text.index(s) for s in order] == sorted(text.index(s) for s in order)
    # an interrupted demo lost one trial: the rerun sizes it from the trial this run stored
    with closing(sqlite3.connect(out / "run.sqlite")) as conn, conn:
        conn.execute("DELETE FROM trials WHERE repeat = 1")
    again = cli(*args)
    assert again.code == 0, again.err
    assert re.search(r"Part A grid: 2 trials planned, 1 stored; about \d+:\d\d:\d\d of model "
                     r"time \(1 x \d+\.\d\d s a trial: the mean of the 1 trial this run "
                     r"stored\)", again.out)
    assert re.search(r"Part B slice: at most 120 readings planned, \d+ stored; nothing left to "
                     r"read", again.out)  # every cell was decided from the stored readings


def test_demo_dir_is_stable_per_model() -> None:
    assert demo_dir("llamacpp:qwen2.5-coder-0.5b") == Path("runs/demo-llamacpp_qwen2.5-coder-0.5b")
    assert demo_dir("openai:m@http://127.0.0.1:8/v1") != demo_dir("openai:n@http://127.0.0.1:8/v1")


def test_unpulled_model_is_one_line_with_a_hint(
        cli: CliRunner, home: Path, tmp_path: Path) -> None:
    # `home` is an empty model cache: the registry knows the model but it is not pulled
    result = cli("demo", "-m", "llamacpp:smollm2-135m", "--out", str(tmp_path / "d"))
    assert result.code == 2
    assert "slmbench pull smollm2-135m" in result.err
    assert "Traceback" not in result.err


@pytest.mark.embedded
def test_demo_on_the_embedded_model(cli: CliRunner, tmp_path: Path) -> None:
    """The real thing on one task: Qwen2.5-Coder-0.5B through llama.cpp, report included."""
    out = tmp_path / "demo"
    result = cli("demo", "--out", str(out), "-t", "IR-1")
    assert result.code == 0, result.err
    assert _page_path(result.out).is_file()
    with RunStore(out) as store:
        (trial,) = list(store.trials())
    assert trial.key.model == DEMO_MODEL == "llamacpp:qwen2.5-coder-0.5b?n_ctx=32768"
    assert trial.record["steps"], "the model was asked at least once"


def test_demo_without_bubblewrap_stops_before_starting_or_skips_code_tasks(
        cli: CliRunner, part_b_data: Path, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    monkeypatch.setenv("PATH", str(bin_dir))  # bubblewrap hidden
    out = tmp_path / "demo"
    stopped = cli("demo", "--model", "scripted:echo", "--out", str(out))
    assert stopped.code == 2
    assert "bubblewrap" in stopped.err and "--skip-code-tasks" in stopped.err
    assert "Traceback" not in stopped.err
    assert not out.exists()  # no run folder
    skipped = cli("demo", "--model", "scripted:echo", "--out", str(out), "--skip-code-tasks")
    assert skipped.code == 0, skipped.err
    with RunStore(out) as store:
        tasks = {t.key.task for t in store.trials()}
    assert tasks and not any(t.startswith("CD-") for t in tasks)
