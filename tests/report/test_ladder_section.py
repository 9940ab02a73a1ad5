"""The difficulty ladder where a user reads it (issue #61, "Pages"): the study and demo pages'
section, the figure beside the others and in the HTML report; none of it for a run without
generated levels, whose pages stay as they were."""

from __future__ import annotations

from pathlib import Path

import pytest

from slmbench.agents.analysis import analyze
from slmbench.agents.records import Outcome, Trial
from slmbench.agents.summary import AnalysisSummary
from slmbench.agents.tasks import load_tasks
from slmbench.agents.tasks.families import levels
from slmbench.agents.tasks.families.levels import Form, Ladder
from slmbench.microtasks.matrix import MatrixRun
from slmbench.microtasks.recommend import Recommendation
from slmbench.report.demo_page import render_demo_page
from slmbench.report.figures import empty_figures, write_figures
from slmbench.report.html import render_html
from slmbench.report.ladder_figure import level_ladder
from slmbench.report.ladder_section import held_line, ladder_section
from slmbench.report.study_facts import StudyFacts
from slmbench.report.study_page import render_study_page

TASKS = load_tasks()
FAMILIES = ["IR-1", "IR-2", "IR-3", "DA-1", "DA-2", "DA-3", "DA-4", "SC-1", "SC-2", "SC-3",
            "CM-1", "CM-2"]
THREE = Ladder(base=1, forms={2: Form(template={}), 3: Form(template={})})
MODEL = "scripted:a"
HEADING = "### Difficulty ladder: the highest level held"


def _trial(task: str, ok: bool, *, level: str = "base", instance: int = 0,
           model: str = MODEL) -> Trial:
    return Trial(model=model, task_id=task, suite="capability", level=level, instance=instance,
                 seed=instance, outcome=Outcome.SUCCESS if ok else Outcome.WRONG_ANSWER,
                 final_answer="x")


@pytest.fixture(scope="module")
def runs() -> tuple[list[Trial], list[Trial]]:
    """The base trials of a run, and the same with levels 2 (every family passes) and 3 (none
    does) of made-up ladders over its families, whose base is level 1."""
    patch = pytest.MonkeyPatch()
    patch.setattr(levels, "LADDERS", {f: THREE for f in FAMILIES})
    base = [_trial(f, i % 4 != 0, instance=k) for i, f in enumerate(FAMILIES) for k in range(2)]
    stepped = [_trial(f, n == 2, level=str(n), instance=k) for n in (2, 3) for f in FAMILIES
               for k in range(2)]
    yield base, [*base, *stepped]
    patch.undo()


@pytest.fixture(scope="module")
def summaries(runs: tuple[list[Trial], list[Trial]]
              ) -> tuple[AnalysisSummary, AnalysisSummary]:
    base, mixed = runs
    return analyze(base, tasks=TASKS), analyze(mixed, tasks=TASKS)


def test_no_level_trials_no_section_no_figure(
        summaries: tuple[AnalysisSummary, AnalysisSummary], tmp_path: Path) -> None:
    plain, _ = summaries
    assert plain.ladder == []
    assert ladder_section(plain, "assets/figures/level_ladder.png") == []
    assert level_ladder(plain) is None
    written = write_figures(plain, tmp_path)
    assert "level_ladder" not in written and not list(tmp_path.glob("level_ladder.*"))
    assert "level_ladder" not in empty_figures(plain)  # never named as left out


def test_the_section_names_the_highest_level_held(
        summaries: tuple[AnalysisSummary, AnalysisSummary]) -> None:
    _, mixed = summaries
    (lad,) = mixed.ladder
    assert lad.held == 2
    text = "\n".join(ladder_section(mixed, "assets/figures/level_ladder.png"))
    assert text.startswith(HEADING)
    assert "**a**: Highest level held (success lower bound ≥ 50%): level 2; levels run: " \
           "1, 2, 3." in text
    assert "| level | successes / trials | tasks (families) |" in text
    three = next(r for r in lad.levels if r.level == 3)
    assert three is not None
    assert "| 3 | 0 / 24 | 12 (" in text and f"| {three.rate.formatted()} (12×2" in text
    assert "![difficulty ladder](assets/figures/level_ladder.png)" in text


def test_none_held_names_the_level_closest_to_it(
        summaries: tuple[AnalysisSummary, AnalysisSummary]) -> None:
    _, mixed = summaries
    (lad,) = mixed.ladder
    one = next(r for r in lad.levels if r.level == 1)
    assert one is not None
    none = lad.model_copy(update={"held": None, "levels": [one]})
    assert held_line(none) == (
        "Highest level held (success lower bound ≥ 50%): none: no level's lower bound reaches "
        f"50% (level 1: {one.rate.formatted(unit='%')}, 12 tasks)")


def _facts(summary: AnalysisSummary, trials: list[Trial], **more: object) -> StudyFacts:
    return StudyFacts(name="n", study_file="f", command="c", created="t", versions={},
                      model_hashes={}, summary=summary, trials=trials, **more)


def _without_ladder(page: str) -> str:
    """The page with its ladder section (from its heading to the next heading) cut out."""
    page = "".join(line for line in page.splitlines(keepends=True)
                   if not line.startswith("- **The hardest level it can do"))  # In short
    head, found, rest = page.partition(HEADING)
    if not found:
        return page
    tail = rest[rest.index("\n#"):] if "\n#" in rest else ""
    return head + tail.lstrip("\n")


def test_the_study_page_gains_the_section_and_nothing_else(
        runs: tuple[list[Trial], list[Trial]],
        summaries: tuple[AnalysisSummary, AnalysisSummary]) -> None:
    (base, mixed), (plain, laddered) = runs, summaries
    before = render_study_page(_facts(plain, base))
    after = render_study_page(_facts(laddered, mixed))
    assert HEADING not in before and HEADING in after
    assert _without_ladder(after) == before  # the level trials moved no other line
    figured = render_study_page(_facts(laddered, mixed,
                                       figures={"level_ladder": "a/level_ladder.png"}))
    assert "![difficulty ladder](a/level_ladder.png)" in figured


def _demo(summary: AnalysisSummary, trials: list[Trial]) -> str:
    matrix = MatrixRun(command="", created="", models=[], tasks=[], prompts=[], limit=None,
                       seed=0, items={}, baseline_scores={}, cells=[], tau_sweep=[],
                       by_prompt=[], readings=[], notes=[])
    page = render_demo_page(model=MODEL, command="slmbench demo", summary=summary,
                            trials=trials, matrix=matrix, rec=Recommendation(tasks=[]),
                            html="report/report.html", routes="routes.json")
    return "\n".join(line for line in page.splitlines() if not line.startswith("Generated by"))


def test_the_demo_page_gains_the_section_and_nothing_else(
        runs: tuple[list[Trial], list[Trial]],
        summaries: tuple[AnalysisSummary, AnalysisSummary]) -> None:
    (base, mixed), (plain, laddered) = runs, summaries
    before, after = _demo(plain, base), _demo(laddered, mixed)
    assert HEADING not in before and HEADING in after
    assert _without_ladder(after).rstrip() == before.rstrip()


def test_the_figure_is_written_beside_the_others_and_shown_in_the_html(
        runs: tuple[list[Trial], list[Trial]],
        summaries: tuple[AnalysisSummary, AnalysisSummary], tmp_path: Path) -> None:
    (_, mixed), (plain, laddered) = runs, summaries
    fig = level_ladder(laddered)
    assert fig is not None
    (ax,) = fig.axes
    assert [t.get_text() for t in ax.get_xticklabels()] == ["1", "2", "3"]
    assert any("held: level 2" in t.get_text() for t in ax.get_legend().get_texts())
    written = write_figures(laddered, tmp_path / "figures")
    pdf, png = written["level_ladder"]
    assert pdf.is_file() and png.is_file() and png.parent == written["stage_funnel"][1].parent
    html = render_html(laddered, mixed, {n: p for n, (_, p) in written.items()})
    assert 'id="fig-level_ladder"' in html
    assert html.index('id="fig-stage_funnel"') < html.index('id="fig-level_ladder"')
    plain_figs = write_figures(plain, tmp_path / "plain")
    plain_html = render_html(plain, mixed, {n: p for n, (_, p) in
                                                         plain_figs.items()})
    assert "level_ladder" not in plain_html


def test_analyze_prints_the_ladder(runs: tuple[list[Trial], list[Trial]],
                                   tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from slmbench.agents.store import RunStore
    from slmbench.cli.main import app

    with RunStore(tmp_path) as store:
        for t in runs[1]:
            store.put(t.key, t.outcome.value, t)
    res = CliRunner().invoke(app, ["analyze", str(tmp_path)], env={"COLUMNS": "220"})
    assert res.exit_code == 0, res.output
    assert "Difficulty ladder" in res.output and "highest held" in res.output
    assert "level 2" in res.output


def test_the_trial_browser_names_a_generated_level_and_only_then() -> None:
    from slmbench.report.html import trial_row

    base = _trial("IR-1", True)
    level = base.model_copy(update={"level": "2"})
    assert "level" not in trial_row(base)  # a run without levels: the rows as before
    assert trial_row(level)["level"] == "2" and trial_row(level)["task"] == "IR-1"
