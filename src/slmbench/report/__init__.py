"""Figures, LaTeX tables and the HTML report of a run (``slmbench report RUN``).

:func:`build_report` has the run analysed afresh (so the report never shows a stale
summary) and ``analysis_summary.json`` written beside the run store by
:func:`slmbench.agents.analysis.analyze_and_write`, then draws
``report/figures/*.{pdf,png}``, ``report/tables/*.tex`` and ``report/report.html`` (one
self-contained file) from that summary.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from slmbench.agents.analysis import analyze_and_write
from slmbench.agents.configurations import configurations
from slmbench.agents.loading import load_trials
from slmbench.agents.records import Trial
from slmbench.agents.summary_file import SUMMARY_NAME
from slmbench.core.paths import shown_path
from slmbench.report.figures import FIGURES, write_figures
from slmbench.report.html import write_html
from slmbench.report.latex import write_tables

__all__ = ["FIGURES", "ReportFiles", "build_report", "report_trials"]


class ReportFiles(BaseModel):
    """Where ``build_report`` wrote everything."""

    model_config = ConfigDict(frozen=True)

    summary: Path
    html: Path
    figures: dict[str, tuple[Path, Path]]  # name -> (pdf, png)
    tables: dict[str, Path]


def build_report(run_dir: str | Path, out_dir: str | Path | None = None, *,
                 params: Mapping[str, float] | None = None) -> ReportFiles:
    """Analyse ``run_dir`` and write the summary, figures, tables and HTML report."""
    run = Path(run_dir)
    return report_trials(load_trials(run), out_dir if out_dir is not None else run / "report",
                         summary_path=run / SUMMARY_NAME, run_dir=run, params=params)


def report_trials(trials: Sequence[Trial], out_dir: str | Path, *, summary_path: str | Path,
                  run_dir: str | Path = "", params: Mapping[str, float] | None = None
                  ) -> ReportFiles:
    """The same report for any set of trials (e.g. the union of a study's run directories)."""
    out = Path(out_dir)
    # the report names its run relative to the working folder: no path of this machine on it
    shown = shown_path(run_dir, published=True) if run_dir else ""
    trials = configurations(trials)  # one name per row, in the summary and the trial table
    summary = analyze_and_write(trials, summary_path, run_dir=shown, params=params)
    figures = write_figures(summary, out / "figures")
    tables = write_tables(summary, out / "tables")
    html = write_html(summary, trials, {n: png for n, (_, png) in figures.items()},
                      out / "report.html")
    return ReportFiles(summary=Path(summary_path), html=html, figures=figures, tables=tables)
