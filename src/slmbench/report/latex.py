"""LaTeX tables (booktabs) from an :class:`~slmbench.agents.summary.AnalysisSummary`.

Each function returns a complete ``table`` environment; ``\\usepackage{booktabs}``
is the only package needed. Every rate is printed with its 95% interval.
"""

from __future__ import annotations

from pathlib import Path

from slmbench.agents.dimensions import DIMENSION_INTERVALS
from slmbench.agents.summary import EQUIVALENCE_MARGIN, AnalysisSummary
from slmbench.core.stats import Estimate

_SPECIAL = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#",
            "_": r"\_", "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}",
            "^": r"\textasciicircum{}"}
DIMENSIONS = ("consistency", "robustness", "fault_tolerance", "safety")


def escape(text: str) -> str:
    """Escape LaTeX's special characters in plain text."""
    return "".join(_SPECIAL.get(ch, ch) for ch in text)


def ci(est: Estimate | None, *, percent: bool = True) -> str:
    """``62.0 [48.1, 74.2]``; ``--`` when undefined."""
    return "--" if est is None else est.formatted(percent=percent, missing="--")


def pvalue(p: float) -> str:
    return "$<$0.001" if p < 0.001 else f"{p:.3f}"


def _table(caption: str, label: str, spec: str, header: list[str], rows: list[list[str]]
           ) -> str:
    lines = [r"\begin{table}[t]", r"\centering", r"\small",
             f"\\caption{{{escape(caption)}}}", f"\\label{{{label}}}",
             f"\\begin{{tabular}}{{{spec}}}", r"\toprule",
             " & ".join(header) + r" \\", r"\midrule"]
    lines += [" & ".join(r) + r" \\" for r in rows]
    lines += [r"\bottomrule", r"\end{tabular}", r"\end{table}", ""]
    return "\n".join(lines)


def headline_table(s: AnalysisSummary) -> str:
    """Per model: size, trials, accuracy (task-level) and its design, format failures,
    composite, and the sign test across tasks against the best model (Holm)."""
    outcomes = {o.model: o for o in s.outcomes}
    comp = {d.model: d.composite for d in s.dimensions}
    best = s.best()
    rows = []
    for a in sorted(s.accuracy, key=lambda a: -(a.accuracy.estimate or 0.0)):
        pair = s.pair(best.model, a.model) if best and a.model != best.model else None
        rows.append([
            escape(a.model), f"{a.params_b:g}" if a.params_b else "--", str(a.trials),
            ci(a.accuracy), escape(a.accuracy.design()), ci(outcomes[a.model].format_failure),
            ci(comp.get(a.model), percent=False),
            pvalue(pair.p_holm) if pair else "best" if best and a.model == best.model else "--",
        ])
    header = ["Model", "Params (B)", "Trials", "Accuracy \\% [95\\% CI]", "Design",
              "Format fail. \\%", "Composite", "$p_{\\mathrm{Holm}}$ vs best"]
    return _table(f"Capability accuracy ({s.capability_scope}) and composite reliability. "
                  "Accuracy: task-level intervals (tasks x trials per task, ICC, effective n "
                  "beside); p: exact sign test across tasks vs the best model, Holm-adjusted.",
                  "tab:headline", "lrrrlrrr", header, rows)


def dimensions_table(s: AnalysisSummary) -> str:
    """The four reliability dimensions and the composite per model, with honest intervals."""
    rows = [[escape(d.model), *(ci(d.dimensions.get(k), percent=False)
                                if k in d.dimensions else "not measurable" for k in DIMENSIONS),
             ci(d.composite, percent=False)] for d in s.dimensions]
    header = ["Model", "Consistency", "Robustness", "Fault tol.", "Safety", "Composite"]
    return _table(f"Reliability dimensions (0-1) with 95% intervals: {DIMENSION_INTERVALS}.",
                  "tab:dimensions", "lrrrrr", header, rows)


def groups_table(s: AnalysisSummary) -> str:
    """Accuracy per task group (rows) and model (columns)."""
    models = sorted({g.model for g in s.groups})
    groups = sorted({g.group for g in s.groups})
    cells = {(g.model, g.group): g.accuracy for g in s.groups}
    rows = [[escape(g.replace("_", " ")), *(ci(cells.get((m, g))) for m in models)]
            for g in groups]
    return _table("Accuracy (%) per task group with 95% task-level intervals.", "tab:groups",
                  "l" + "r" * len(models), ["Group", *(escape(m) for m in models)], rows)


def pairwise_table(s: AnalysisSummary) -> str:
    """Comparisons paired by task: sign test across tasks, Holm, paired interval, MDD."""
    rows = [[escape(p.a), escape(p.b), str(p.tasks), str(p.cells), str(p.comparison.a_ahead),
             str(p.comparison.b_ahead), ci(p.comparison.difference),
             pvalue(p.comparison.sign_test.p_value), pvalue(p.p_holm),
             "--" if p.comparison.mdd is None else f"{100 * p.comparison.mdd:.1f}",
             "--" if p.equivalence is None else pvalue(p.equivalence.p_value)]
            for p in s.pairwise]
    header = ["A", "B", "Tasks", "Cells", "A ahead", "B ahead", "A$-$B (pp) [95\\% CI]",
              "$p$ (sign)", "$p_{\\mathrm{Holm}}$", "MDD (pp)", "$p$ (TOST)"]
    return _table("Comparisons paired by task: per-task differences averaged over the cells "
                  "both ran; exact sign test across tasks, Holm-adjusted; interval of the mean "
                  "difference: hull of paired t and the bounded-mean posterior; MDD: minimum "
                  "detectable difference (two-sided alpha 0.05, power 0.8; -- with no spread); "
                  f"TOST: exact, of equivalence within $\\pm${100 * EQUIVALENCE_MARGIN:.0f} pp.",
                  "tab:pairwise",
                  "llrrrrrrrrr", header, rows)


TABLES = {"headline": headline_table, "dimensions": dimensions_table,
          "groups": groups_table, "pairwise": pairwise_table}


def write_tables(summary: AnalysisSummary, out_dir: str | Path) -> dict[str, Path]:
    """Write every table as ``<name>.tex`` into ``out_dir``; returns name → path."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written = {}
    for name, fn in TABLES.items():
        path = out / f"{name}.tex"
        path.write_text(fn(summary), encoding="utf-8")
        written[name] = path
    return written
