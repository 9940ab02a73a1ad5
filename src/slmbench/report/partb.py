"""Part B sections shared by every page and the CLI: the recommendation table and the
verdict of an eligibility cell, read from the records ``microtasks`` made.

Nothing here computes a statistic: scores, intervals, n and costs are the ones in
:class:`~slmbench.microtasks.recommend.Recommendation` and
:class:`~slmbench.microtasks.eligibility.EligibilityCell`.
"""

from __future__ import annotations

from collections.abc import Sequence

from slmbench.microtasks.eligibility import EligibilityCell
from slmbench.microtasks.matrix import MatrixRun
from slmbench.microtasks.recommend import Recommendation, TaskRecommendation
from slmbench.report.study_facts import num, table

__all__ = ["MATRIX_HEADER", "RECOMMEND_HEADER", "cost_text", "deciding_metrics", "evidence",
           "matrix_markdown", "matrix_rows", "recommend_rows", "recommend_section",
           "unread_undecided", "verdict_text"]

RECOMMEND_HEADER = ("task", "deploy", "decider", "score [95% CI] (n)", "baseline (τ)",
                    "Δ vs baseline [paired CI]", "cost", "why")


def evidence(t: TaskRecommendation) -> str:
    """The deployed model's score with its interval and n (``-`` for the baseline)."""
    if t.score is None:
        return "-"
    return f"{t.score.formatted(percent=False, digits=3)} (n {t.score.n})"


def cost_text(t: TaskRecommendation) -> str:
    """Median seconds and tokens per call of the deployed model, over its stored readings."""
    c = t.cost
    if c is None or c.median_seconds is None:
        return "-" if t.deploy == "baseline" else "not recorded"
    tokens = f", {c.median_tokens:.0f} tokens" if c.median_tokens is not None else ""
    return f"{c.median_seconds:.2f} s{tokens} per call (median of {c.readings})"


def recommend_rows(rec: Recommendation) -> list[list[str]]:
    """One row per micro-task under :data:`RECOMMEND_HEADER`."""
    rows = []
    for t in rec.tasks:
        decider = t.baseline if t.deploy == "baseline" else (
            f"{t.model} {t.prompt_id} {t.reading}"
            + (f" (margin {t.margin:.3g})" if t.margin is not None else ""))
        base = (t.baseline_interval.formatted(percent=False, digits=3)
                if t.baseline_interval else f"{t.baseline_score:.3f}")
        rows.append([t.task, t.deploy, decider, evidence(t), f"{t.baseline} {base} (n {t.n_items})",
                     t.diff.formatted(percent=False, digits=3) if t.diff else "-",
                     cost_text(t), t.why])
    return rows


def recommend_section(rec: Recommendation, heading: str = "## What to deploy per micro-task"
                      ) -> list[str]:
    """Markdown: per micro-task the baseline, the model (only if eligible) or a cascade,
    with its evidence and its cost on the machine that measured it."""
    lines = [heading, "",
             "Per micro-task, on its deciding metric: the model only when a configuration is "
             "eligible (lower bound above τ, paired Δ above 0, not constant); a cascade when "
             "its router beats the baseline alone on the same items; else the baseline, which "
             "is cheaper (a cell undecided at its full split is not shown better than it). "
             "Cost: median seconds and tokens per call of the deployed model (one scored and "
             "one greedy reading) on the machine that read it.", ""]
    if rec.command:
        lines += [f"Routing table written by: `{rec.command}`", ""]
    return lines + table(RECOMMEND_HEADER, recommend_rows(rec))


def deciding_metrics(cells: Sequence[EligibilityCell]) -> dict[str, str]:
    """Each task's deciding metric: its first metric (cells come in the task's metric order,
    as :func:`~slmbench.microtasks.recommend.recommend` reads them)."""
    out: dict[str, str] = {}
    for c in cells:
        out.setdefault(c.task, c.metric)
    return out


def unread_undecided(c: EligibilityCell, deciding: bool = True) -> bool:
    """True for a cell of its task's deciding metric still undecided although items of its
    split were never read: a run that stopped early (to be read on before its verdict means
    anything). A secondary metric stops when the deciding one settles."""
    return (deciding and c.verdict == "undecided" and c.n_split is not None
            and c.n_items < c.n_split)


def verdict_text(c: EligibilityCell, deciding: bool = True) -> str:
    """The verdict, with ``constant``, an unsettled full split and an unread rest spelled
    out (``deciding``: ``c`` is of its task's deciding metric, the one reading stops on)."""
    if c.constant:
        return f"constant ({c.top_share:.0%} one answer)"
    if unread_undecided(c, deciding):
        return f"**UNDECIDED WITH {(c.n_split or 0) - c.n_items} ITEMS UNREAD**"
    if c.verdict == "undecided" and c.n_split is not None and c.n_items < c.n_split:
        return "undecided (reading stopped when the deciding metric settled)"
    if c.verdict == "undecided" and c.n_split is not None:
        return (f"undecided after all {c.n_split} items: not shown better than the "
                "baseline")
    return c.verdict  # a fixed-n cell: undecided on the items it was given


MATRIX_HEADER = ("task", "model", "precision", "prompt", "reading", "metric", "n read",
                 "score [95% CI]", "sequence", "τ (anchor)", "Δ vs τ-baseline [95% CI]",
                 "format failures", "verdict", "low > τ", "paired Δ > 0", "eligible")


def matrix_rows(run: MatrixRun) -> list[list[str]]:
    """One row per cell of an eligibility matrix (``slmbench eligibility``'s table and page),
    under :data:`MATRIX_HEADER`."""
    deciding = deciding_metrics(run.cells)

    def yes(flag: bool) -> str:
        return "yes" if flag else "no"

    return [[c.task, c.model, c.precision, c.prompt_id, c.reading, c.metric,
             str(c.n_items) if c.n_split is None else f"{c.n_items}/{c.n_split}",
             num(c.score), num(c.sequence), c.tau_text, num(c.diff),
             str(c.format_failures) if c.reading == "generation" else "–",
             verdict_text(c, deciding[c.task] == c.metric), yes(c.seed_rule), yes(c.paired),
             yes(c.eligible)]
            for c in run.cells]


def matrix_markdown(run: MatrixRun) -> str:
    """The matrix as a Markdown page (``eligibility.md``), with the command that made it."""
    lines = [f"Command: `{run.command}`", "",
             f"Items per task: {', '.join(f'{t} {len(ids)}' for t, ids in run.items.items())} "
             f"(seed {run.seed}). Eligible = 95% lower bound > τ (best non-LLM baseline or "
             "constant answer) and the paired interval of model − τ-baseline above 0; "
             "read until decided: the confidence sequence settles it "
             "(sequence column), the fixed-n interval beside it.", ""]
    return "\n".join([*lines, *table(MATRIX_HEADER, matrix_rows(run))])
