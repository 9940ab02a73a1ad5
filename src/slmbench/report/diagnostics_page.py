"""The threshold-diagnostics page (``slmbench diagnose``'s ``diagnostics.md``) and its tables,
from a :class:`~slmbench.microtasks.diagnostics.diagnose.DiagnosticReport` alone.

Every number is a field of the report's cells: AUC, the default and re-thresholded scores and
the generation score with their 95% intervals, calibration (Brier, ECE) and the selective
prediction curve. Intervals are printed by ``Estimate.formatted``.
"""

from __future__ import annotations

from slmbench.core.stats import Estimate
from slmbench.microtasks.diagnostics.diagnose import DiagnosticReport
from slmbench.report.study_facts import table

__all__ = ["CALIB_COLUMNS", "DIAG_COLUMNS", "calibration_rows", "diagnostic_rows",
           "diagnostics_markdown"]

DIAG_COLUMNS = ("task", "model", "n fit/eval", "AUC [95% CI]", "metric", "τ",
                "default (lp) [CI]", "threshold", "re-thresholded [CI]", "generation [CI]",
                "fmt fail", "majority", "conf − acc", "regime")
CALIB_COLUMNS = ("task", "model", "n", "Brier [95% CI]", "ECE [95% CI]",
                 "acc @10% / 50% / 100% coverage", "τ", "largest coverage beating τ")


def _est(e: Estimate) -> str:
    return e.formatted(percent=False, digits=3, missing="-")


def diagnostic_rows(report: DiagnosticReport) -> list[list[str]]:
    """One row per (task, model) cell: its AUC, default and fitted threshold, regime."""
    rows = []
    for cell, regime in zip(report.cells, report.regimes, strict=True):
        d, t, g = cell.default, cell.tuned, cell.generation
        thr = (f"s > {cell.threshold + 0.0:+.2f}" if cell.threshold is not None else
               ", ".join(f"{k}{v + 0.0:+.2f}" for k, v in cell.offsets.items()))
        rows.append([
            cell.task, cell.model, f"{cell.n_fit}/{cell.n_eval}", _est(cell.auc),
            d.metric, d.tau_text,
            _est(d.score), thr, _est(t.score), "-" if g is None else _est(g.score),
            "-" if cell.format_failure_rate is None else
            f"{cell.format_failure_rate.estimate:.0%}",
            f"{cell.majority_decision} {cell.majority_share:.0%}",
            f"{cell.calibration.gap:+.2f}", regime.regime])
    return rows


def calibration_rows(report: DiagnosticReport) -> list[list[str]]:
    """Calibration and selective prediction of each cell's log-prob reading."""
    rows = []
    for cell in report.cells:
        cal = cell.calibration
        at = {round(p.coverage, 2): p.accuracy for p in cal.curve}
        curve = " / ".join(_est(at[c]) if c in at else "-" for c in (0.1, 0.5, 1.0))
        beats = ("-" if cal.note else "none" if cal.coverage_beating_tau is None
                 else f"{cal.coverage_beating_tau:.0%}")
        rows.append([cell.task, cell.model, str(cell.n_eval),
                     _est(cal.brier) if cal.brier else "-",
                     _est(cal.ece_interval) if cal.ece_interval else f"{cal.ece:.3f}",
                     curve, f"{cell.default.tau:.3f}", beats])
    return rows


def diagnostics_markdown(report: DiagnosticReport) -> str:
    """The page: the command, the threshold table, calibration, then each cell's regime and
    the run's notes."""
    lines = [f"# Threshold diagnostics\n\n`{report.command}` ({report.created})\n",
             *table(DIAG_COLUMNS, diagnostic_rows(report)),
             "## Calibration and selective prediction (log-prob reading)\n",
             *table(CALIB_COLUMNS, calibration_rows(report)), "## Regimes\n"]
    lines += [f"- **{r.task} · {r.model}: {r.regime}** — {r.reason}"
              + (f" (also: {', '.join(r.flags)})" if r.flags else "") for r in report.regimes]
    lines += [f"- note: {n}" for n in report.notes]
    return "\n".join(lines) + "\n"
