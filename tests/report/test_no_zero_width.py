"""No interval on a generated Part A page collapses to a point at small n.

A model that fails everything and one that passes everything, on few trials
(one temperature, 3 repeats): every bracket the study page and the LaTeX tables
print must have a lower bound below its upper bound.
"""

from __future__ import annotations

import re

from synthetic_run import make_trials

from slmbench.agents.analysis import analyze
from slmbench.agents.records import Outcome
from slmbench.report.latex import TABLES
from slmbench.report.study_facts import StudyFacts
from slmbench.report.study_page import render_study_page

BRACKET = re.compile(r"\[(-?\d+(?:\.\d+)?), (-?\d+(?:\.\d+)?)\]")


def _extreme_run() -> list:
    trials = make_trials({"ollama:never-1b": (1.0, 0.5), "ollama:always-3b": (3.0, 0.5)},
                         temperatures=(0.7,))
    out = []
    for t in trials:
        ok = t.model == "ollama:always-3b"
        out.append(t.model_copy(update={
            "outcome": Outcome.SUCCESS if ok else Outcome.WRONG_ANSWER,
            "faults_injected": 1 if t.fault_plan else 0}))
    return out


def test_no_interval_on_the_page_or_tables_is_zero_width() -> None:
    trials = _extreme_run()
    summary = analyze(trials, params={"ollama:never-1b": 1.0, "ollama:always-3b": 3.0})
    assert all(g.accuracy.n < 30 for g in summary.groups)  # the small-n case this is about
    page = render_study_page(StudyFacts(name="n", study_file="f", command="c", created="t",
                                        versions={}, model_hashes={}, summary=summary,
                                        trials=trials))
    texts = [page, *(fn(summary) for fn in TABLES.values())]
    brackets = [(lo, hi) for text in texts for lo, hi in BRACKET.findall(text)]
    assert len(brackets) > 20  # accuracy, groups, dimensions, composite, pairwise, ...
    collapsed = [b for b in brackets if float(b[0]) >= float(b[1])]
    assert not collapsed, collapsed
    assert "0.000 [0.000, " in page and "1.000 [" in page  # both extremes are on it
