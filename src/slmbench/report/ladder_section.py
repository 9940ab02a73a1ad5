"""The difficulty ladder's section of a page (issue #61): per configuration, the success rate
at each level it ran with its task-level interval and design, and the highest level it holds
(the highest level whose success lower bound reaches ``summary.HOLDS_AT``). Everything is read
from ``AnalysisSummary.ladder``: no number is computed here, and a summary without a ladder
(no trial of a generated level) has no section."""

from __future__ import annotations

from slmbench.agents.summary import HOLDS_AT, AnalysisSummary, LevelLadder
from slmbench.report.funnel_section import with_design
from slmbench.report.study_facts import short, table

__all__ = ["ANCHOR", "held_line", "ladder_section"]

ANCHOR = "difficulty-ladder-the-highest-level-held"  # the section's heading, as an anchor
HEAD = ["level", "successes / trials", "tasks (families)", "of a generated form",
        "success % [95% CI] (design)", "held"]


def _bar() -> str:
    return f"success lower bound ≥ {HOLDS_AT:.0%}"


def held_line(lad: LevelLadder) -> str:
    """``Highest level held (success lower bound ≥ 50%): level 2``; where none is held, the
    level closest to it (the highest lower bound) with its rate."""
    if lad.held is not None:
        return f"Highest level held ({_bar()}): level {lad.held}"
    text = f"Highest level held ({_bar()}): none: no level's lower bound reaches {HOLDS_AT:.0%}"
    closest = max(lad.levels, key=lambda r: (r.rate.low or 0.0, -r.level), default=None)
    if closest is None:
        return text
    return (f"{text} (level {closest.level}: {closest.rate.formatted(unit='%')}, {closest.tasks} "
            f"task{'s' if closest.tasks != 1 else ''})")


def _ladder_table(lad: LevelLadder) -> list[str]:
    rows = [[str(r.level), f"{r.successes} / {r.trials}", f"{r.tasks} ({', '.join(r.families)})",
             str(r.generated), with_design(r.rate), "yes" if r.holds else "no"] for r in lad.levels]
    return [f"**{short(lad.model)}**: {held_line(lad)}; levels run: "
            f"{', '.join(map(str, lad.levels_run))}.", "", *table(HEAD, rows)]


def ladder_section(s: AnalysisSummary, figure: str | None = None) -> list[str]:
    """The ladder section of a page (``figure``: the ladder figure's path relative to the
    page, shown where given); nothing when the summary has no ladder."""
    if not s.ladder:
        return []
    lines = ["### Difficulty ladder: the highest level held", "",
             "Success at each level of the difficulty ladder (docs/tasks.md, \"Levels\"), over "
             "the capability trials the accuracy counts: a family's base instance at its base "
             "level, its generated forms at theirs. Only the configurations that ran a "
             "generated level are shown, and no other figure of this page counts a generated "
             "level's trial. Each level's rate is task-level over the families at that level "
             "(a family's instances and repeats one task), with its design as above. A "
             f"configuration *holds* a level where the rate's {_bar()}; its highest level held "
             "is the highest such level.", ""]
    for lad in s.ladder:
        lines += _ladder_table(lad)
    if figure:
        lines += [f"![difficulty ladder]({figure})", ""]
    return lines
