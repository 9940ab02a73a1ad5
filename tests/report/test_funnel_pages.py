"""The stage funnel where a user reads verdicts (issue #61): the study page's section, the
demo page's "In short", and an HTML report of one model with no empty figure."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest
from chromium import chromium

from slmbench.agents.analysis import analyze
from slmbench.agents.evaluator import run_trial
from slmbench.agents.records import Trial
from slmbench.agents.summary import AnalysisSummary
from slmbench.agents.tasks import load_tasks
from slmbench.microtasks.recommend import Recommendation
from slmbench.models.scripted import ScriptedModel
from slmbench.report.demo_page import in_short
from slmbench.report.figures import empty_figures, nothing_to_show, write_figures
from slmbench.report.funnel_section import funnel_section
from slmbench.report.html import render_html
from slmbench.report.plotting import not_enough_data

TASKS = load_tasks()
FAMILIES = ("DA-1", "DA-2", "DA-3", "DA-4", "IR-1", "IR-2")
PROSE = "I am thinking about it."
WRONG = "scripted:wrong-tool"  # calls a tool no family here needs, then talks
RIGHT = "scripted:right-tool"  # calls the family's tool with no arguments, then talks


def _runs(model: str) -> list[Trial]:
    out = []
    for family in FAMILIES:
        task = TASKS[family]
        tool = "code_interpreter" if model == WRONG else task.reference.actions[0].tool
        replies = [json.dumps({"name": tool, "arguments": {}}), PROSE, PROSE]
        for repeat in range(2):
            trial = run_trial(ScriptedModel(replies, spec=model), task, toolset="all")
            out.append(trial.model_copy(update={"repeat": repeat}))
    return out


@pytest.fixture(scope="module")
def one() -> tuple[AnalysisSummary, list[Trial]]:
    trials = _runs(WRONG)
    return analyze(trials), trials


@pytest.fixture(scope="module")
def two() -> AnalysisSummary:
    return analyze(_runs(WRONG) + _runs(RIGHT))


def test_the_study_section_has_a_table_per_configuration_and_the_floor_pairs(
        two: AnalysisSummary) -> None:
    text = "\n".join(funnel_section(two, "assets/figures/stage_funnel.png"))
    assert text.startswith("### Stage funnel: where the agent breaks")
    assert "**wrong-tool**: it breaks at *right tool*" in text  # names without backend
    assert "**right-tool**: it breaks at *valid call*" in text
    assert text.count("| stage | passed / trials |") == 2
    wrong = next(f for f in two.funnel if f.model == WRONG)
    right_tool = wrong.stage("right_tool")
    assert right_tool is not None and right_tool.passed == 0 and right_tool.trials == 12
    assert "| right tool | 0 / 12 | 0 | 0.0 [" in text  # marginal rate with its design
    assert "![stage funnel](assets/figures/stage_funnel.png)" in text
    assert "#### Stage comparisons" in text and "p (Holm, the funnel's)" in text
    # neither side is correct on 3 tasks: the pair is read here, stage by stage
    assert "- right-tool vs wrong-tool: " in text


def test_no_funnel_no_section(two: AnalysisSummary) -> None:
    assert funnel_section(two.model_copy(update={"funnel": []})) == []


def test_the_demo_in_short_leads_with_the_stage_where_the_model_breaks(
        one: tuple[AnalysisSummary, list[Trial]]) -> None:
    summary, trials = one
    lines = in_short(trials=trials, rec=Recommendation(tasks=[]), summary=summary)
    assert lines[0].startswith("- **Where the model breaks:** it breaks at *right tool*")
    assert "acts 100.0 [" in lines[0] and "right tool 0.0 [" in lines[0]
    assert "capability tasks solved" in lines[1]


def test_a_not_enough_data_panel_is_told_from_a_drawn_figure(
        one: tuple[AnalysisSummary, list[Trial]]) -> None:
    assert nothing_to_show(not_enough_data("A title", "the run used one temperature")) == (
        "the run used one temperature")
    empty = empty_figures(one[0])
    assert "accuracy_vs_temperature" in empty and "stage_funnel" not in empty



def test_the_one_model_html_report_has_no_empty_figure(
        one: tuple[AnalysisSummary, list[Trial]], tmp_path: Path) -> None:
    summary, trials = one
    pngs = {n: png for n, (_, png) in write_figures(summary, tmp_path / "figures").items()}
    page = tmp_path / "report.html"
    page.write_text(render_html(summary, trials, pngs), encoding="utf-8")
    empty = empty_figures(summary)
    profile = tmp_path / "profile"
    profile.mkdir()
    shot = tmp_path / "shot.png"
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
             f"--user-data-dir={profile}", "--window-size=1280,1600"]
    dom = subprocess.run([chromium(), *flags, "--dump-dom", page.resolve().as_uri()],
                         capture_output=True, text=True, timeout=180, check=True).stdout
    subprocess.run([chromium(), *flags, f"--screenshot={shot}", page.resolve().as_uri()],
                   capture_output=True, text=True, timeout=180, check=True)
    shown = re.findall(r'<figure id="fig-([a-z_]+)"', dom)
    assert shown[0] == "stage_funnel"  # the funnel leads
    assert shown and not set(shown) & set(empty)  # no figure without data is drawn
    assert set(shown) | set(empty) == set(pngs)
    left_out = dom.split('id="figures-left-out"')[1].split("</p>")[0]
    assert all(name in left_out for name in empty) and "one temperature" in left_out
    assert shot.stat().st_size > 10_000  # the screenshot rendered
