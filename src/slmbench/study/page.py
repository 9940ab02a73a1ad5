"""The study's page: everything stored gathered (:mod:`~slmbench.study.gather`) into
:class:`~slmbench.report.study_facts.StudyFacts` and rendered, with the exports, figures, HTML
report and verdicts beside it; and whether a page may be written at all
(:func:`page_blocker`)."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path

from slmbench.agents.humaneval import summaries
from slmbench.agents.rescoring import read_rescored
from slmbench.core.paths import shown_path
from slmbench.report.readme import checked_entry, write_entry
from slmbench.report.since import VERDICTS_NAME, page_verdicts
from slmbench.report.study_facts import StudyFacts, group_costs
from slmbench.report.study_page import readme_block, relative, render_study_page
from slmbench.study.export import export_humaneval
from slmbench.study.gather import (
    Gathered,
    block_times,
    collect_cascades,
    collect_part_a,
    collect_part_b,
    design,
    part_b_recommendation,
)
from slmbench.study.plan import size_plan
from slmbench.study.provenance import model_hashes, versions
from slmbench.study.spec import HUMANEVAL_EXPORT, Study, all_models, assets_dir
from slmbench.study.verdicts import previous_verdicts, rule_moves


def page_blocker(study: Study, study_file: Path) -> str | None:
    """Why the study's page must not be written now, or None. A page (and the exports beside
    it) at the study's ``page`` that another study file made is replaced only by a complete
    study: a partial page never takes the place of another study's finished one."""
    assert study.page is not None
    if not study.page.is_file():
        return None
    made = re.search(r"^From the study file `([^`]+)`", study.page.read_text(encoding="utf-8"),
                     re.MULTILINE)
    if made is None or made.group(1) == shown_path(study_file, published=True) or (
            Path(made.group(1)).resolve() == study_file.resolve()):
        return None
    if not (left := [r for r in size_plan(study) if r.remaining]):
        return None
    blocks = ", ".join(dict.fromkeys(r.block for r in left))
    return (f"{shown_path(study.page)} is the page of {made.group(1)}, and this study is not "
            f"complete ({blocks} still to run); its page replaces that one once it is")


def write_page(study: Study, *, study_file: Path, command: str,
               readme: Path | None = None) -> Path:
    """Gather everything stored and write the study's Markdown page; returns its path.

    With ``readme``, also replace the study's generated entry in that file (between the lines
    of :func:`~slmbench.report.study_page.readme_markers`); ConfigError, before anything is
    written, if it lacks them."""
    assert study.page is not None
    text = "" if readme is None else checked_entry(readme, study.page)
    previous = previous_verdicts(study)  # refused before anything is written
    facts = Gathered()
    planned = collect_part_a(study, facts)
    readings = collect_part_b(study, facts)
    cascades = collect_cascades(study, facts)
    shown_file = shown_path(study_file, published=True)
    recommendation = part_b_recommendation(study, facts.matrices, cascades,
                                           command=f"slmbench recommend {shown_file}")
    found = [d for d in study.humaneval if d.is_dir()]
    for d in study.humaneval:
        if not d.is_dir():
            facts.incomplete.append(
                f"HumanEval: run directory {shown_path(d, published=True)} does not exist")
    if found:
        export_humaneval(found, assets_dir(study) / HUMANEVAL_EXPORT)
        facts.exports.append(relative(assets_dir(study) / HUMANEVAL_EXPORT, study.page.parent))
    page = StudyFacts(
        design=design(study), cuts=study.cuts, notes=study.notes,
        block_times=block_times(study),
        name=study.name, study_file=shown_file,
        command=command,
        created=datetime.now(UTC).isoformat(timespec="seconds"), versions=versions(),
        model_hashes=model_hashes(all_models(study)), humaneval=summaries(found),
        costs=group_costs(facts.trials, planned, readings), incomplete=facts.incomplete,
        exports=facts.exports, summary=facts.summary, trials=facts.trials,
        figures=facts.figures, html_report=facts.html_report, matrices=facts.matrices,
        verdict_changes=facts.verdict_changes, cascades=cascades, recommendation=recommendation,
        previous=previous, previous_link=(
            relative(study.previous, study.page.parent) if study.previous else None),
        rescored=read_rescored(assets_dir(study)) if study.part_a else None)
    if study.part_a:
        page = page.model_copy(update={"rule_moves": rule_moves(assets_dir(study),
                                                                page_verdicts(page))})
    study.page.parent.mkdir(parents=True, exist_ok=True)
    study.page.write_text(render_study_page(page), encoding="utf-8")
    assets_dir(study).mkdir(parents=True, exist_ok=True)
    (assets_dir(study) / VERDICTS_NAME).write_text(
        page_verdicts(page).model_dump_json(indent=1) + "\n", encoding="utf-8")
    if readme is not None:
        write_entry(readme, text, study.page, command,
                    lambda where, again: readme_block(page, page=where, command=again))
    return study.page
