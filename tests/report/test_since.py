"""A study page's verdicts (``verdicts.json``) and the "What changed since" section that
compares an earlier page's with this one's."""

from __future__ import annotations

from synthetic_run import make_trials

from slmbench.agents.analysis import analyze
from slmbench.report.since import page_verdicts, since_section
from slmbench.report.study_facts import PageVerdicts, Stated, StudyFacts


def _facts(models: dict[str, tuple[float, float]], name: str) -> StudyFacts:
    trials = make_trials(models, temperatures=(0.3, 1.0), reliability=False)
    return StudyFacts(name=name, study_file="f", command="c", created="t", versions={},
                      model_hashes={}, summary=analyze(trials, params={m: s for m, (s, _)
                                                                       in models.items()}))


def test_a_page_states_each_claim_pair_and_temperature_effect_with_its_basis() -> None:
    v = page_verdicts(_facts({"ollama:strong-3b": (3.0, 0.9), "ollama:weak-1b": (1.0, 0.1)},
                             "v1"))
    assert v.name == "v1" and len(v.claims) == 8
    pair = v.pairs["strong-3b vs weak-1b"]
    assert pair.verdict == "strong-3b ahead" and pair.basis is not None
    assert pair.basis.startswith("16 tasks, ") and pair.basis.endswith(", T 0.3, 1")
    assert set(v.temperature) == {"strong-3b, T 0.3 vs 1", "weak-1b, T 0.3 vs 1"}
    assert PageVerdicts.model_validate_json(v.model_dump_json()) == v


def _stated(**verdicts: str) -> dict[str, Stated]:
    return {k.replace("_", " "): Stated(verdict=x, basis="31 tasks") for k, x in verdicts.items()}


def test_the_section_lists_what_moved_or_only_one_page_states_and_counts_the_rest() -> None:
    before = PageVerdicts(name="Study v2", claims=_stated(A="holds", B="cannot tell"),
                          pairs=_stated(x_vs_y="x ahead"), temperature={},
                          cells=_stated(c1="eligible", c2="ineligible"))
    now = before.model_copy(update={
        "name": "Study v3", "claims": _stated(A="holds", B="does not hold"),
        "pairs": _stated(x_vs_y="not shown"), "cells": _stated(c1="eligible", c3="undecided")})
    lines = since_section(before, now, link="reference-study.md")
    text = "\n".join(lines)
    assert lines[0] == "## What changed since Study v2" and "(reference-study.md)" in text
    assert "| seed claim | B | cannot tell (31 tasks) | does not hold (31 tasks) |" in text
    claim = since_section(before, now.model_copy(update={"claims": {
        "A": Stated(verdict="does not hold")}}), link="p.md")
    assert "| seed claim | A | holds (31 tasks) | does not hold |" in claim
    assert "| Part A pair | x vs y | x ahead (31 tasks) | not shown (31 tasks) |" in text
    assert "| Part B cell | c2 | ineligible (31 tasks) | not stated |" in text
    assert "| Part B cell | c3 | not stated | undecided (31 tasks) |" in text
    assert "| seed claim | A |" not in text and "| Part B cell | c1 |" not in text
    assert lines[-2] == ("Unchanged: 1 seed claim, 0 Part A pairs, 0 temperature effects, "
                         "1 Part B cell.")
    same = "\n".join(since_section(before, before, link="p.md"))
    assert "No verdict moved." in same and "| kind |" not in same


def _floors(copies: int) -> StudyFacts:
    """Two models that fail every trial, on the synthetic tasks each copied ``copies`` times
    (16 capability tasks a copy)."""
    from slmbench.agents.records import Outcome, Score

    base = make_trials({"ollama:floor-a": (1.0, 0.0), "ollama:floor-b": (2.0, 0.0)},
                       temperatures=(0.7,), repeats=1, reliability=False)
    failed = [t.model_copy(update={"outcome": Outcome.WRONG_ANSWER, "task_id": f"{t.task_id}-{k}",
                                   "score": Score(value=0.0, passed=False, reason="no")})
              for t in base for k in range(copies)]
    return StudyFacts(name="n", study_file="f", command="c", created="t", versions={},
                      model_hashes={}, summary=analyze(failed))


def test_a_pair_no_task_separates_is_within_ten_points_only_on_enough_tasks() -> None:
    from slmbench.report.findings import findings
    from slmbench.report.parta import part_a_section

    wide = _floors(2)  # 32 tasks, none differs: (0.9)^32 < 0.05, the exact bound decides
    assert wide.summary is not None
    [pair] = wide.summary.pairwise
    assert not pair.differs and pair.equivalent
    assert pair.equivalence is not None and pair.equivalence.p_value < 0.05
    assert page_verdicts(wide).pairs["floor-a vs floor-b"].verdict == "within ±10 points"
    said = " ".join(findings(wide))
    assert "1 shown within ±10 points (TOST" in said and "0 of 32 tasks ahead" in said
    row = next(x for x in part_a_section(wide.summary) if x.startswith("| floor-a | floor-b"))
    assert row.endswith("| yes (p 0.034, Holm 0.034) |")  # the page's one TOST
    narrow = _floors(1)  # 16 tasks: the same floors cannot be shown within the margin
    assert narrow.summary is not None
    [pair] = narrow.summary.pairwise
    assert not pair.equivalent
    assert page_verdicts(narrow).pairs["floor-a vs floor-b"].verdict == "not shown"
    row = next(x for x in part_a_section(narrow.summary) if x.startswith("| floor-a | floor-b"))
    assert "| not shown (p 0.185, Holm 0.185) |" in row
