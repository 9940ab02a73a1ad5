"""Part B sections shared by every page and the CLI: the eligibility matrix and its family,
the recommendation table and the verdict of an eligibility cell, read from the records
``microtasks`` made.

Nothing here computes a statistic: scores, intervals, n and costs are the ones in
:class:`~slmbench.microtasks.recommend.Recommendation` and
:class:`~slmbench.microtasks.cells.EligibilityCell`.
"""

from __future__ import annotations

from collections.abc import Sequence

from slmbench.microtasks.cells import EligibilityCell
from slmbench.microtasks.eligibility import deciding_metrics
from slmbench.microtasks.matrix import MatrixRun
from slmbench.microtasks.recommend import Recommendation, TaskRecommendation
from slmbench.report.study_facts import StudyFacts, short, table

__all__ = ["MATRIX_HEADER", "RECOMMEND_HEADER", "RULE_TEXT", "cell_key", "cell_verdict",
           "cost_text", "evidence", "family_headline", "family_text", "family_verdict",
           "matrix_markdown", "matrix_rows", "order_note", "part_b_family", "part_b_section",
           "recommend_rows", "recommend_section", "survival_section", "unread_undecided",
           "verdict_changes", "verdict_text"]

RECOMMEND_HEADER = ("task", "deploy", "decider", "score [95% CI] (n)", "baseline (τ, fixed)",
                    "Δ vs baseline on the items read [95% CI]", "family-wise", "cost", "why")


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
        family = (f"{t.family_eligible_cells} of {t.cells} eligible after Holm over "
                  f"{t.family}; {t.eligible_cells} cell by cell" if t.family else "-")
        rows.append([t.task, t.deploy, decider, evidence(t),
                     f"{t.baseline} {t.baseline_score:.3f} (all {t.n_items} items)",
                     t.diff.formatted(percent=False, digits=3) if t.diff else "-",
                     family, cost_text(t), t.why])
    return rows


def recommend_section(rec: Recommendation, heading: str = "## What to deploy per micro-task"
                      ) -> list[str]:
    """Markdown: per micro-task the baseline, the model (only if eligible) or a cascade,
    with its evidence and its cost on the machine that measured it."""
    lines = [heading, "",
             "Per micro-task, on its deciding metric: the model only when a configuration is "
             "eligible family-wise (lower bound above τ, paired Δ above 0 on the items read, "
             "not constant, and surviving Holm over every configuration tested together); a "
             "cascade when "
             "its router beats the baseline alone on the same items; else the baseline, which "
             "is cheaper (a cell undecided at its full split is not shown better than it). "
             "Cost: median seconds and tokens per call of the deployed model (one scored and "
             "one greedy reading) on the machine that read it.", ""]
    if rec.command:
        lines += [f"Routing table written by: `{rec.command}`", ""]
    return lines + table(RECOMMEND_HEADER, recommend_rows(rec))


def unread_undecided(c: EligibilityCell, deciding: bool = True) -> bool:
    """True for a cell of its task's deciding metric whose stop rule is not met although items
    of its split were never read: a run that stopped early (to be read on before its verdict
    means anything; a cell eligible on its own bound but not at the family-wise stop level
    is one). A secondary metric stops when the deciding one settles."""
    if not deciding or c.n_split is None or c.n_items >= c.n_split:
        return False
    if c.stop_rule_met is not None:
        return not c.stop_rule_met
    return c.verdict == "undecided"


def verdict_text(c: EligibilityCell, deciding: bool = True) -> str:
    """The verdict, with ``constant``, an unsettled full split and an unread rest spelled
    out (``deciding``: ``c`` is of its task's deciding metric, the one reading stops on)."""
    if c.constant and c.answer_space is None:  # a cell made before "constant" needed evidence
        return f"constant ({c.top_share:.0%} one answer)"
    if c.constant:
        return (f"constant ({c.top_share:.0%} one answer; shown above 95% over "
                f"{c.answer_space} answers, anytime-valid)")
    if unread_undecided(c, deciding):
        unread = (c.n_split or 0) - c.n_items
        if c.eligible:
            return (f"eligible cell by cell, **NOT SETTLED FAMILY-WISE WITH {unread} ITEMS "
                    "UNREAD**")
        return f"**UNDECIDED WITH {unread} ITEMS UNREAD**"
    if c.undecided_with_items_left:
        return "undecided (reading stopped when the deciding metric settled)"
    if c.verdict == "undecided" and c.n_split is not None:
        return (f"undecided after all {c.n_split} items: not shown better than the "
                "baseline")
    return c.verdict  # a fixed-n cell: undecided on the items it was given


MATRIX_HEADER = ("task", "model", "precision", "prompt", "reading", "metric", "n read",
                 "interval", "score [95%]", "τ (anchor, fixed)",
                 "vs τ-baseline on the n items read [95%]", "format failures", "verdict",
                 "low > τ", "paired Δ > 0", "eligible (cell)", "Holm p (family)",
                 "eligible (family-wise)")


def family_text(c: EligibilityCell) -> str:
    """The cell's Holm-adjusted p-value and the size of its family (``secondary`` for a
    secondary metric's cell, which is no hypothesis of its own)."""
    if c.p_holm is None or c.family is None:
        return "secondary metric"
    return f"{c.p_holm:.3g} (of {c.family})"


def family_verdict(c: EligibilityCell) -> str:
    """``**yes**`` / ``no`` family-wise (``–`` for a secondary metric's cell)."""
    if c.family_eligible is None:
        return "–"
    return "**yes**" if c.family_eligible else "no"


def matrix_rows(run: MatrixRun) -> list[list[str]]:
    """One row per cell of an eligibility matrix (``slmbench eligibility``'s table and page),
    under :data:`MATRIX_HEADER`."""
    deciding = deciding_metrics(run.cells)

    def yes(flag: bool) -> str:
        return "yes" if flag else "no"

    return [[c.task, c.model, c.precision, c.prompt_id, c.reading, c.metric,
             str(c.n_items) if c.n_split is None else f"{c.n_items}/{c.n_split}",
             c.interval_label, c.score_text, c.tau_text, c.diff_text,
             str(c.format_failures) if c.reading == "generation" else "–",
             verdict_text(c, deciding[c.task] == c.metric), yes(c.seed_rule), yes(c.paired),
             yes(c.eligible), family_text(c), family_verdict(c)]
            for c in run.cells]


def matrix_markdown(run: MatrixRun) -> str:
    """The matrix as a Markdown page (``eligibility.md``), with the command that made it."""
    lines = [f"Command: `{run.command}`", "",
             f"Items per task: {', '.join(f'{t} {len(ids)}' for t, ids in run.items.items())} "
             f"(seed {run.seed}). {RULE_TEXT}", ""]
    return "\n".join([*lines, *table(MATRIX_HEADER, matrix_rows(run))])


RULE_TEXT = (
    "Eligible (cell) = the 95% lower bound of the score above τ (the best non-LLM baseline "
    "or constant answer on every item the cell could read, a fixed number) and the paired "
    "interval of model − τ-baseline on the items read above 0, and not constant. A cell read "
    "until decided prints its anytime-valid interval (a confidence sequence: valid at a stop "
    "chosen on the data), a cell read in full its fixed-n interval; the interval column says "
    "which: a confidence sequence is printed as it stands, intersected over the items read, "
    "so where the items read after it settled moved the estimate out of it the row says "
    "\"settled early; the later items moved the estimate out of the interval\" (the bound "
    "still holds, and still decides), with the fixed-n paired result on every item read "
    "beside it (McNemar's p for accuracy), which does not decide. Eligible (family-wise) = "
    "eligible and its Holm-adjusted p-value, over every "
    "configuration (model, task, prompt, reading) tested together on its task's deciding "
    "metric, at most 0.05: the verdict a summary states. Constant = an anytime-valid lower "
    "bound on the share of the commonest answer (Bonferroni over the answers a decision "
    "could be) above 0.95; never eligible.")


def order_note(seed: int) -> str:
    """The method note's words on the reading order a cell's anytime verdict depends on."""
    return (f"Every cell reads its items in one order, a uniform permutation drawn from seed "
            f"{seed} and the item ids alone (never an item's content, stratum or a baseline's "
            "correctness: `tests/microtasks/test_reading_order.py`); a cell read until decided "
            "has a verdict that depends on that order, valid at its stop whatever the order, "
            "but another seed could stop it elsewhere.")


def family_headline(cells: Sequence[EligibilityCell]) -> str:
    """One sentence: how many configurations are eligible family-wise and cell by cell, and
    which (the family: the cells whose ``family`` is set)."""
    tested = [c for c in cells if c.family is not None]
    if not tested:
        return "no configuration was tested"
    good = [c for c in tested if c.family_eligible]
    lone = [c for c in tested if c.eligible]

    def names(found: Sequence[EligibilityCell]) -> str:
        return ", ".join(f"{short(c.model)} on {c.task} ({c.prompt_id}, {c.reading})"
                         for c in found)

    text = (f"{len(good)} of {len(tested)} configurations are eligible family-wise (Holm over "
            f"all {tested[0].family}, 5%)" + (f": {names(good)}" if good else ""))
    return text + (f"; cell by cell, without the correction, {len(lone)}"
                   + (f" ({names(lone)})" if lone else ""))


def survival_section(cells: Sequence[EligibilityCell]) -> list[str]:
    """Per model, task and prompt (deciding metric): each reading's verdict cell by cell and
    family-wise, and whether either reading survives the family-wise correction."""
    tested = [c for c in cells if c.family is not None]
    if not tested:
        return []
    groups: dict[tuple[str, str, str], dict[str, EligibilityCell]] = {}
    for c in tested:
        groups.setdefault((c.model, c.task, c.prompt_id), {})[c.reading] = c

    def shown(c: EligibilityCell | None) -> str:
        if c is None:
            return "–"
        cell = "eligible" if c.eligible else ("constant" if c.constant else c.verdict)
        if unread_undecided(c):
            return (f"{cell}; family-wise not settled "
                    f"({(c.n_split or 0) - c.n_items} items unread)")
        return f"{cell}; family-wise {family_verdict(c)}"

    def either(r: dict[str, EligibilityCell]) -> str:
        if any(c.family_eligible for c in r.values()):
            return "**yes**"
        return ("cannot tell: items unread" if any(unread_undecided(c) for c in r.values())
                else "no")

    rows = [[short(m), t, p, shown(r.get("generation")), shown(r.get("logprob")), either(r)]
            for (m, t, p), r in groups.items()]
    return ["Per model, task and prompt: does either reading survive the family-wise "
            f"correction (Holm over {tested[0].family} configurations)?", "",
            *table(["model", "task", "prompt", "generation", "log-prob", "either survives"],
                   rows)]


def cell_verdict(c: EligibilityCell) -> str:
    """A cell's verdict as pages compare it: constant, eligible (family-wise, or cell by cell
    only), or the cell's own verdict."""
    if c.constant:
        return "constant"
    if c.eligible:
        return ("eligible" if c.family is None or c.family_eligible
                else "eligible cell by cell only (not after Holm)")
    return c.verdict


def verdict_changes(before: Sequence[EligibilityCell], after: Sequence[EligibilityCell]
                    ) -> list[str]:
    """Each cell of ``before`` (a previous export) whose verdict differs in ``after``, or that
    ``after`` no longer shows: ``model · task · prompt · reading · metric: old -> new``."""
    now = {cell_key(c): c for c in after}
    out = []
    for c in before:
        new = now.get(cell_key(c))
        label = "not shown (its block is not settled by the stored readings)" if new is None \
            else cell_verdict(new)
        if label != cell_verdict(c):
            out.append(f"{cell_key(c)}: {cell_verdict(c)} → {label}")
    return out


def cell_key(c: EligibilityCell) -> str:
    """``model · task · prompt · reading · metric``, the model without its backend."""
    return f"{short(c.model)} · {c.task} · {c.prompt_id} · {c.reading} · {c.metric}"


def part_b_section(m: MatrixRun, block: int = 0, blocks: int = 1) -> list[str]:
    title = "## Part B: micro-task eligibility"
    if blocks > 1:
        title += f", block {block + 1} of {blocks} ({', '.join(short(x) for x in m.models)})"
    lines = [title, "",
             f"{', '.join(f'{t} {len(ids)}' for t, ids in m.items.items())} eval items "
             f"(seed {m.seed}, stratified by gold class). {RULE_TEXT} {order_note(m.seed)}",
             ""]
    rows = []
    deciding = deciding_metrics(m.cells)
    for c in sorted(m.cells, key=lambda c: (c.task, c.metric, c.model, c.prompt_id, c.reading)):
        n = str(c.n_items) if c.n_split is None else f"{c.n_items}/{c.n_split}"
        rows.append([c.task, c.metric, short(c.model), c.prompt_id, c.reading, n,
                     c.interval_label, c.score_text,
                     c.tau_text, c.diff_text, verdict_text(c, deciding[c.task] == c.metric),
                     "**yes**" if c.eligible else "no", family_text(c), family_verdict(c)])
    lines += table(["task", "metric", "model", "prompt", "reading", "n read", "interval",
                    "score [95%]", "τ (anchor, fixed)",
                    "vs τ-baseline on the n items read [95%]", "verdict", "eligible (cell)",
                    "Holm p (family)", "eligible (family-wise)"], rows)
    lines += [family_headline(m.cells) + ".", ""]
    if m.by_prompt:
        lines += table(["prompt", "eligible (cell)", "eligible (family-wise)",
                        "cells (every metric)"],
                       [[p.prompt_id, str(p.eligible), str(p.family_eligible), str(p.total)]
                        for p in m.by_prompt])
    if m.tau_sweep:
        lines += ["τ sweep (eligible cells, on every metric, cell by cell on the interval that "
                  "applies, when τ is set to each anchor; no family-wise correction):", ""]
        lines += table(["τ anchor", "eligible", "cells"],
                       [[r.anchor, str(r.eligible), str(r.total)] for r in m.tau_sweep])
    return lines


def part_b_family(f: StudyFacts) -> list[str]:
    """The study's Part B as one family: the family-wise headline, whether either reading of
    each model, task and prompt survives, and which cells changed verdict since the page's
    previous export."""
    cells = [c for m in f.matrices for c in m.cells]
    if not cells:
        return []
    lines = ["## Part B: the family of configurations", "",
             f"Over every block of this study together: {family_headline(cells)}.", ""]
    lines += survival_section(cells)
    if f.verdict_changes is not None:
        lines += ["Verdicts changed by the rule of issue #38 (one valid interval per cell, both "
                  "halves anytime-valid, the family-wise stop and Holm, evidence for "
                  "'constant'), against the export made before it: "
                  f"{len(f.verdict_changes)}" + (":" if f.verdict_changes else "."), ""]
        lines += [f"- {x}" for x in f.verdict_changes] + ([""] if f.verdict_changes else [])
    return lines
