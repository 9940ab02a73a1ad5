"""LaTeX tables: booktabs structure, intervals, escaping of model names."""

from __future__ import annotations

import re

from slmbench.agents.summary_file import read_summary
from slmbench.core.stats import wilson
from slmbench.report import ReportFiles
from slmbench.report.latex import ci, escape, headline_table


def test_tables_are_booktabs_with_one_row_per_model(full_report: ReportFiles) -> None:
    s = read_summary(full_report.summary)
    assert set(full_report.tables) == {"headline", "dimensions", "groups", "pairwise"}
    for path in full_report.tables.values():
        tex = path.read_text()
        assert tex.index(r"\toprule") < tex.index(r"\midrule") < tex.index(r"\bottomrule")
        assert r"\hline" not in tex
        body = tex.split(r"\midrule")[1].split(r"\bottomrule")[0]
        cols = tex.split(r"\begin{tabular}{")[1].split("}")[0]
        for row in filter(None, (r.strip() for r in body.split(r"\\"))):
            assert row.count("&") == len(cols) - 1  # every row fills every column
    head = full_report.tables["headline"].read_text()
    for a in s.accuracy:
        assert escape(a.model) in head
        assert ci(a.accuracy) in head
    assert len(re.findall(r"\\\\\n", head.split(r"\midrule")[1])) == len(s.accuracy)


def test_escaping_and_interval_format(full_report: ReportFiles) -> None:
    assert escape("a_b&c%d#e$f{g}~^\\") == (
        r"a\_b\&c\%d\#e\$f\{g\}\textasciitilde{}\textasciicircum{}\textbackslash{}")
    assert ci(wilson(5, 10)) == "50.0 [23.7, 76.3]"
    assert ci(None) == "--"
    s = read_summary(full_report.summary)
    renamed = s.model_copy(update={"accuracy": [a.model_copy(update={"model": "my_model%1"})
                                                for a in s.accuracy[:1]],
                                   "outcomes": [o.model_copy(update={"model": "my_model%1"})
                                                for o in s.outcomes[:1]],
                                   "vs_best": []})
    assert r"my\_model\%1" in headline_table(renamed)
