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
    assert ("| seed claim | B | cannot tell (31 tasks) | does not hold (31 tasks) | data or "
            "design |") in text
    claim = since_section(before, now.model_copy(update={"claims": {
        "A": Stated(verdict="does not hold")}}), link="p.md")
    assert "| seed claim | A | holds (31 tasks) | does not hold | data or design |" in claim
    assert ("| Part A pair | x vs y | x ahead (31 tasks) | not shown (31 tasks) | data or "
            "design |") in text
    assert "| Part B cell | c2 | ineligible (31 tasks) | not stated | data or design |" in text
    assert "| Part B cell | c3 | not stated | undecided (31 tasks) | data or design |" in text
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


def test_two_floors_are_not_comparable_on_success_however_many_tasks() -> None:
    """Issue #60: two floors are "within ±10 points" by the exact bound once there are tasks
    enough (32 here: 0.9^32 < 0.05), however differently they fail; the pair states no
    equivalence, on the page, in its summary and in verdicts.json, at any number of tasks."""
    from slmbench.report.findings import findings
    from slmbench.report.parta import part_a_section

    for copies in (1, 2):
        floors = _floors(copies)
        assert floors.summary is not None
        [pair] = floors.summary.pairwise
        assert pair.at_floor and not pair.differs and not pair.equivalent
        assert page_verdicts(floors).pairs["floor-a vs floor-b"].verdict == (
            "both at the floor: not comparable on success")
        said = " ".join(findings(floors))
        assert "shown within ±10 points" not in said
        assert "1 both at the floor: not comparable on success" in said
        row = next(x for x in part_a_section(floors.summary)
                   if x.startswith("| floor-a | floor-b"))
        assert row.endswith("| both at the floor: not comparable on success (solve 0 and 0 "
                            "tasks) |")
    wide = _floors(2)
    assert wide.summary is not None
    [pair] = wide.summary.pairwise
    assert pair.equivalence is not None and pair.equivalence.p_value < 0.05  # the bound's
    assert pair.equivalence_p_holm is None  # not one of the page's TOSTs


def test_a_move_under_a_new_rule_version_reads_rule() -> None:
    """A page records the rule version of each kind of verdict; a verdict that moved
    between pages judged by two versions of its kind's rule gives "rule" as its reason."""
    from slmbench.report.since import RULES

    floors = page_verdicts(_floors(2))
    assert floors.rules == RULES and RULES["pairs"] >= 2 and RULES["claims"] >= 2
    older = floors.model_copy(update={"rules": {}, "pairs": {
        "floor-a vs floor-b": Stated(verdict="within ±10 points", basis="32 tasks")}})
    text = "\n".join(since_section(older, floors, link="p.md"))
    assert (f"| Part A pair | floor-a vs floor-b | within ±10 points (32 tasks) | both at the "
            "floor: not comparable on success (32 tasks, 32 cells, T 0.7) | rule (v1 → "
            f"v{RULES['pairs']}) |") in text
    same = older.model_copy(update={"rules": RULES})
    assert "| data or design |" in "\n".join(since_section(same, floors, link="p.md"))
