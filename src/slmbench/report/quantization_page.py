"""The quantization page: one model at several precisions on the same items, from a
``slmbench quantize`` report (``quantization.json``) alone.

Every number comes from the report: the eligibility cell of each (task, precision, reading)
with its interval and n, and each precision paired against the first on the same items
(accuracy difference with its Jeffreys posterior interval, McNemar, TOST). Intervals are
printed by :func:`~slmbench.report.study_facts.num`, the one formatter of the pages.
"""

from __future__ import annotations

from pathlib import Path

from slmbench.microtasks.diagnostics.precisions import QuantizationReport
from slmbench.report.study_facts import num, pval, table

__all__ = ["quantization_markdown", "write_quantization_page"]

CELL_HEADER = ("task", "precision", "reading", "metric", "n", "score [95% CI]", "τ",
               "fmt fail", "eligible")


def _cells(report: QuantizationReport) -> list[list[str]]:
    return [[c.task, c.precision, c.reading, c.metric, str(c.n_items), num(c.score),
             c.tau_text,
             str(c.format_failures) if c.reading == "generation" else "-",
             "yes" if c.eligible else "no"] for c in report.cells]


def _comparisons(report: QuantizationReport) -> tuple[list[str], list[list[str]]]:
    header = ["task", "reading", "vs", "n", "accuracy", "Δ [95% CI]", "McNemar p",
              f"TOST ±{report.margin} p, Holm [90% CI]", "equivalent", "eligibility changed"]
    rows = [[c.task, c.reading, f"{c.precision} vs {c.reference}", str(c.n_items),
             f"{c.accuracy:.3f} vs {c.reference_accuracy:.3f}", num(c.difference),
             pval(c.mcnemar.p_value),
             "-" if c.tost is None else
             f"{pval(c.tost.p_value)}, Holm {pval(c.tost_p_holm)} "
             f"{c.tost.formatted_interval(percent=False, level=False)}",
             "-" if c.tost is None else ("yes" if c.equivalent else "no"),
             "-" if c.eligibility_changed is None else
             ("YES" if c.eligibility_changed else "no")] for c in report.comparisons]
    return header, rows


def _rtn(report: QuantizationReport) -> list[str]:
    return [f"- {p}: {r.parameters_quantized:,} weights in {len(r.layers)} Linear layers, "
            f"{r.bits}-bit, group {r.group_size}, "
            f"{'symmetric' if r.symmetric else 'asymmetric'}; skipped "
            f"{', '.join(r.skipped) or 'none'}; mean |Δw| "
            f"{r.mean_abs_error:.2e}"
            for p, r in report.rtn.items()]


def quantization_markdown(report: QuantizationReport, *, title: str | None = None,
                          made_by: str | None = None) -> str:
    """The page (or a run's ``quantization.md``): ``made_by``, the command that rescored the
    report and wrote the page, is printed above the run's own command."""
    header, rows = _comparisons(report)
    loads = ", ".join(f"{k} {v:.1f} s" for k, v in report.load_seconds.items())
    lines = [f"# {title or f'Quantization: {report.source}'}", ""]
    if made_by:
        lines += ["Generated from the stored readings of the run below (rescored by this "
                  "checkout's statistics; no model loaded) by:", "", "```bash", made_by, "```",
                  ""]
    lines += [f"Run: `{report.command}` ({report.created}). Frozen prompt p0; "
              f"{report.limit or 'all'} eval items per task (seed-stratified); τ is the best "
              "non-LLM baseline or constant answer on the same items; a cell is eligible only "
              "when its lower bound beats τ and its paired interval against the τ-baseline is "
              "above 0. Each precision is paired with the first on the same items: Δ is its "
              "accuracy minus the first's, with a Jeffreys posterior interval of the paired "
              "2×2 cells (open even when both answer every item alike)."
              + (f" Load time: {loads}." if loads else ""), "",
              *table(CELL_HEADER, _cells(report)), *table(header, rows),
              *_rtn(report), *[f"- note: {n}" for n in report.notes]]
    return "\n".join(lines).rstrip() + "\n"


def write_quantization_page(report: QuantizationReport, page: Path, *, title: str | None = None,
                            made_by: str | None = None) -> Path:
    """Write ``page`` (:func:`quantization_markdown`) and the report beside it as
    ``PAGE.json``, making the folder."""
    page.parent.mkdir(parents=True, exist_ok=True)
    page.with_suffix(".json").write_text(report.model_dump_json(indent=1), encoding="utf-8")
    page.write_text(quantization_markdown(report, title=title, made_by=made_by),
                    encoding="utf-8")
    return page
