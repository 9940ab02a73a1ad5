"""The context-length probe page: memory and ranking against the amount of history in the
prompt, from a ``slmbench probe`` report (``probe.json``) alone.

Every number is a field of the report's eligibility cells: the model's log-prob score with
its 95% interval and n, τ (the best non-LLM reference on the same items, constant answers
included) with its interval, and the paired difference model − τ-reference. Intervals are
printed by :func:`~slmbench.report.study_facts.num`, the one formatter of the pages.
"""

from __future__ import annotations

from slmbench.microtasks.diagnostics.probes import ProbeReport
from slmbench.report.partb import verdict_text
from slmbench.report.study_facts import num, short, table

__all__ = ["probe_markdown"]

HEADER = ("task", "model", "turns", "metric", "n", "score [95% CI]", "τ [95% CI] (reference)",
          "model − τ-reference [95% CI]", "verdict")


def _rows(report: ProbeReport) -> list[list[str]]:
    return [[p.cell.task, short(p.cell.model), str(p.n_turns), p.cell.metric,
             str(p.cell.n_items), num(p.cell.score), p.cell.tau_text, num(p.cell.diff),
             verdict_text(p.cell)]
            for p in report.points]


def probe_markdown(report: ProbeReport, *, title: str = "Context-length probe") -> str:
    """The page (and a run's ``probe.md``): the command, how to read it, one row per task,
    history length and metric, then the run's notes and where its readings came from."""
    lines = [f"# {title}", "", "Generated from the readings store of the run by (run again, it "
             "loads no model when every reading is stored):", "", "```bash", report.command,
             "```", "",
             f"Made {report.created}. {report.limit or 'All'} eval items per task "
             "(seed-stratified), the same items at every length; frozen prompt p0, log-prob "
             "decisions. Ranking: each window widened to the given number of turns around its "
             "gold turn (older turns of other conversations pad it); τ's BM25 ranks the same "
             "widened turns. Memory: the given number of earlier user turns shown before the "
             "turn; τ's rules and learned baseline read the turn alone. τ is the best of the "
             "task's references on the same items, majority, random and every constant answer "
             "included, so no constant beats it; a verdict is eligible only when the lower "
             "bound is above τ and the paired interval of model − τ-reference above 0, "
             "ineligible when the upper bound is below τ or the paired interval wholly below "
             "0, else undecided.",
             "", *table(HEADER, _rows(report)),
             f"Readings: {report.read_counts.from_store} from the store, "
             f"{report.read_counts.read_now} read now, {report.read_counts.backend_errors} "
             "backend errors (in no score).", ""]
    lines += [f"- note: {n}" for n in report.notes]
    return "\n".join(lines).rstrip() + "\n"
