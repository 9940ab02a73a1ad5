"""The cascade page: BM25's shortlist re-ranked by the model, and the router that consults the
model only where BM25 is unsure, from a ``slmbench cascade`` report (``cascade.json``) alone.

Every number is a field of the report or one of its properties (the top-1 hits counted by
:class:`~slmbench.microtasks.diagnostics.cascade.RerankResult`); each sentence of
"Reading it" is chosen by where an interval lies (above 0, below 0, or across it), so the
page never says more than the intervals do. Intervals are printed by
:func:`~slmbench.report.study_facts.num`, the one formatter of the pages.
"""

from __future__ import annotations

from slmbench.core.stats import Estimate
from slmbench.microtasks.diagnostics.cascade import CascadeReport
from slmbench.report.study_facts import num, short, table

__all__ = ["cascade_findings", "cascade_markdown", "cascade_section", "rerank_gain"]


def _direction(est: Estimate) -> str:
    """What a paired gain's interval says: helps, hurts, or cannot tell."""
    if est.low is not None and est.low > 0:
        return "helps (the interval lies above 0)"
    if est.high is not None and est.high < 0:
        return "hurts (the interval lies below 0)"
    return "cannot tell (the interval includes 0)"


def _ms(seconds: float | None) -> str:
    return "not recorded" if seconds is None else f"{seconds * 1000:.0f} ms"


def cascade_findings(report: CascadeReport) -> list[str]:
    """What the report's intervals say, as Markdown bullets: the re-rank, the router, latency."""
    rr, r = report.rerank, report.router
    hits, base_hits = rr.top1_hits
    lines = [f"- **Re-ranking every item**: the model's top-1 is the gold item on {hits} of "
             f"{rr.n_items} items, BM25's on {base_hits}. Paired over the items: "
             + "; ".join(f"{g.metric} {_direction(g.gain)}" for g in rr.gains) + "."]
    never = r.margin == 0.0
    lines.append(
        f"- **The router** (margin {r.margin:.3f}, fitted on {report.n_fit} fit items) consults "
        f"the model on {r.model_share.formatted(digits=0, unit='%')} of eval calls"
        + (" (margin 0: on the fit items, no margin gave more correct top-1 answers than "
           "BM25 alone)" if never else "")
        + f"; its top-1 accuracy is {num(r.accuracy)} against BM25's "
        f"{num(r.baseline_accuracy)}, and its paired MRR gain over BM25 alone "
        f"{_direction(r.mrr_gain)}.")
    if r.mean_latency_baseline_s:  # a report made before BM25's own time was left out
        lines.append(
            f"- **Latency per decision**: {_ms(r.mean_latency_s)} on average; "
            f"{_ms(r.mean_latency_baseline_s)} where BM25 answered alone, "
            f"{_ms(r.mean_latency_model_s)} where the model was consulted (BM25's time as it "
            "decided, plus the model's log-prob reading as timed when it was read).")
    else:
        lines.append(
            f"- **Model time per decision**: {_ms(r.mean_latency_s)} on average; none where "
            f"BM25 answered alone, {_ms(r.mean_latency_model_s)} where the model was consulted "
            "(its log-prob reading as timed when it was read; BM25's own time is not stored, "
            "so it is not counted).")
    return lines


def cascade_markdown(report: CascadeReport, *, title: str | None = None) -> str:
    """The page (and a run's ``cascade.md``): the command, the re-rank table, the router,
    what the intervals say, then the run's notes and where its readings came from."""
    rr, r = report.rerank, report.router
    heading = title or (f"Cascade on {report.task}: BM25 shortlist + {short(report.model)} "
                        "re-rank")
    rows = [[g.metric, f"{g.baseline:.3f}", f"{g.cascade:.3f}", num(g.gain)] for g in rr.gains]
    lines = [
        f"# {heading}", "",
        "Generated from the readings store of the run by (run again, it loads no model when "
        "every reading is stored):", "", "```bash", report.command, "```", "",
        f"Made {report.created}. {rr.n_items} eval items, {report.n_fit} fit items; BM25 "
        f"shortlists its top {report.k}, and the model re-orders the shortlist by "
        "log-probability (frozen prompt p0, the shortlisted options only, each option's "
        "surface forms summed); the rest keep BM25's order. Gains are paired over the same "
        "items, with 95% intervals.", "",
        *table(("metric", "BM25 alone", f"BM25 top-{report.k} + model",
                "paired gain [95% CI]"), rows),
        "| router | value [95% CI] |", "|---|---|",
        f"| margin (fitted on {report.n_fit} fit items) | {r.margin:.3f} |",
        f"| top-1 accuracy, n = {r.n_items} | {num(r.accuracy)} |",
        f"| BM25 alone, top-1 accuracy | {num(r.baseline_accuracy)} |",
        f"| MRR gain over BM25 alone (paired) | {num(r.mrr_gain)} |",
        f"| share of calls consulting the model | {num(r.model_share)} |",
        f"| mean model time per decision | {_ms(r.mean_latency_s)} |", "",
        "## Reading it", "", *cascade_findings(report), "",
        f"Readings: {report.read_counts.from_store} from the store, "
        f"{report.read_counts.read_now} read now, {report.read_counts.backend_errors} backend "
        "errors (their items in no number).", ""]
    lines += [f"- note: {n}" for n in report.notes]
    return "\n".join(lines).rstrip() + "\n"


def rerank_gain(report: CascadeReport, metric: str = "mrr") -> Estimate | None:
    """The paired gain of the shortlist re-rank over BM25 alone on ``metric`` (None: not
    measured)."""
    return next((g.gain for g in report.rerank.gains if g.metric == metric), None)


def cascade_section(reports: list[CascadeReport]) -> list[str]:
    """A study page's cascade blocks: one row each, and what each interval says."""
    if not reports:
        return []
    rows = [[short(c.model), c.task, str(c.k), f"{c.rerank.n_items} / {c.n_fit}",
             *(num(g.gain) for g in c.rerank.gains), num(c.router.accuracy),
             num(c.router.baseline_accuracy), num(c.router.mrr_gain),
             c.router.model_share.formatted(digits=0, unit="%")] for c in reports]
    metrics = [g.metric for g in reports[0].rerank.gains]
    lines = ["## Cascade: BM25's shortlist re-ranked by the model", "",
             "Each `[[cascade]]` block of the study file, rebuilt from its stored readings (one "
             "log-prob reading per shortlist, frozen prompt p0). Re-rank gains are the model's "
             "order of BM25's top k against BM25's own, paired over the eval items; the router "
             "consults the model only where BM25's top margin is below the one fitted on the fit "
             "items (docs/microtasks.md).", "",
             *table(["model", "task", "k", "eval / fit items",
                     *(f"re-rank {m} gain [paired 95% CI]" for m in metrics),
                     "router top-1", "BM25 top-1", "router MRR gain [paired]",
                     "model consulted"], rows)]
    for c in reports:
        lines += [f"**{short(c.model)}, {c.task}**", "", *cascade_findings(c), ""]
    return lines
