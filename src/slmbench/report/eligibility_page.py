"""The eligibility page of a readings store read until decided (Markdown), never typed.

:func:`render_eligibility_page` takes the matrices rebuilt from the store
(:func:`slmbench.microtasks.stored.stored_matrices`), the blocks the store does not hold to
their end, and the recommendation over those matrices. Per cell it shows n read of the
split, the verdict (eligible / ineligible / undecided at the full split), the confidence
sequence that settled it (a cell read in full: its fixed-n interval), the family-wise verdict
(Holm over every configuration of the page); it flags loudly every cell
undecided while unread items remain, and ends with what to deploy per micro-task.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from slmbench.microtasks.cells import EligibilityCell
from slmbench.microtasks.eligibility import deciding_metrics
from slmbench.microtasks.matrix import MatrixRun
from slmbench.microtasks.recommend import Recommendation
from slmbench.microtasks.stored import IncompleteBlock
from slmbench.report.partb import (
    RULE_TEXT,
    family_headline,
    family_text,
    family_verdict,
    recommend_section,
    survival_section,
    unread_undecided,
    verdict_text,
)
from slmbench.report.study_facts import short, table

__all__ = ["VerdictCount", "render_eligibility_page", "verdict_counts"]


def _row(c: EligibilityCell, deciding: bool) -> list[str]:
    n = str(c.n_items) if c.n_split is None else f"{c.n_items}/{c.n_split}"
    return [c.task, short(c.model), c.prompt_id, c.reading, c.metric + ("" if deciding else
                                                                         " (secondary)"),
            n, verdict_text(c, deciding), c.interval_label, c.score_text,
            c.tau_text, c.diff_text, str(c.format_failures)
            if c.reading == "generation" else "–", "**yes**" if c.eligible else "no",
            family_text(c), family_verdict(c)]


def _flags(cells: Sequence[EligibilityCell], deciding: dict[str, str],
           incomplete: Sequence[IncompleteBlock]) -> list[str]:
    unread = [c for c in cells if unread_undecided(c, deciding[c.task] == c.metric)]
    lines = ["## Undecided while unread items remain", ""]
    if not unread and not incomplete:
        return [*lines, "None: every cell is settled by its bound, or read to the end of its "
                "split (a cell undecided there is not shown better than the baseline).", ""]
    lines += ["**THIS PAGE IS NOT FINAL: the cells and blocks below stopped before their "
              "verdict was settled. Resume the reading command (it reads only what is "
              "missing) and regenerate the page.**", ""]
    lines += [f"- **{short(c.model)} · {c.task} · {c.prompt_id} · {c.reading}: "
              f"{c.n_items} of {c.n_split} items read, undecided**" for c in unread]
    lines += [f"- **{short(b.model)} · {b.task} · {b.prompt_id}: {b.stored} of {b.planned} "
              "items stored, the block is not read to its end (left out of the tables)**"
              for b in incomplete]
    return [*lines, ""]


@dataclass(frozen=True)
class VerdictCount:
    """One model's cells on each task's deciding metric, by verdict (``constant`` apart)."""

    model: str
    cells: int
    eligible: int
    ineligible: int
    undecided: int
    constant: int
    read: int  # items read, summed over the cells
    split: int  # items of the cells' splits


def verdict_counts(cells: Sequence[EligibilityCell],
                   deciding: dict[str, str]) -> list[VerdictCount]:
    """Per model, in order of first appearance: its deciding-metric cells counted by verdict."""
    out = []
    for model in dict.fromkeys(c.model for c in cells):
        mine = [c for c in cells if c.model == model and deciding[c.task] == c.metric]
        verdicts = Counter("constant" if c.constant else c.verdict for c in mine)
        out.append(VerdictCount(
            model=model, cells=len(mine), eligible=verdicts["eligible"],
            ineligible=verdicts["ineligible"], undecided=verdicts["undecided"],
            constant=verdicts["constant"], read=sum(c.n_items for c in mine),
            split=sum(c.n_split or c.n_items for c in mine)))
    return out


def _summary(cells: Sequence[EligibilityCell], deciding: dict[str, str]) -> list[str]:
    rows = [[short(v.model), str(v.cells), str(v.eligible), str(v.ineligible),
             str(v.undecided), str(v.constant),
             f"{v.read:,} of {v.split:,} ({v.read / v.split:.0%})" if v.split else "–"]
            for v in verdict_counts(cells, deciding)]
    return ["## Verdicts per model (deciding metric, both readings)", "",
            "eligible (cell by cell): the bound settled above τ *and* the paired interval of "
            "model − τ-baseline on the items read above 0; ineligible: the bound settled below "
            "τ, or, with every item of the split read, the paired interval wholly below 0 "
            "(worse than the baseline on the same items); undecided: neither; constant: shown "
            "(anytime-valid) to give one answer to more than 95% of items, never eligible. "
            f"Family-wise: {family_headline(cells)}.", "",
            *table(["model", "cells", "eligible", "ineligible", "undecided", "constant",
                    "items read of the splits"], rows)]


def _methods(cells: Sequence[EligibilityCell]) -> str:
    """Each metric's interval method(s), as the cells name them."""
    by_metric: dict[str, list[str]] = {}
    for c in cells:
        names = by_metric.setdefault(c.metric, [])
        if c.score.method not in names:
            names.append(c.score.method)
    return "; ".join(f"{m}: {' / '.join(names)}" for m, names in by_metric.items())


def render_eligibility_page(*, title: str, command: str, created: str, store: str,
                            read_with: Sequence[str], runs: Sequence[MatrixRun],
                            incomplete: Sequence[IncompleteBlock],
                            rec: Recommendation | None) -> str:
    """The page as Markdown: how it was made, the loud flags, verdicts, every cell, routing."""
    cells = [c for r in runs for c in r.cells]
    deciding = deciding_metrics(cells)
    items = {t: len(ids) for r in runs for t, ids in r.items.items()}
    lines = [f"# {title}", "",
             "Generated from the readings store by the command below (it loads no model); do "
             "not edit by hand.", "", "## How it was made", "", "```bash"]
    lines += [*read_with, command, "```", "",
              f"Store: `{store}`; generated {created}. Items per task (the eval split, seed "
              f"{runs[0].seed if runs else 0}): "
              + ", ".join(f"{t} {n:,}" for t, n in items.items()) + ". Each (model, task, "
              "prompt) block is read in a seeded order until an anytime-valid confidence "
              "sequence (confseq) settles the deciding metric of both readings against τ, "
              "which is fixed on the whole split first; F1 is not a mean of per-item values, "
              "so F1 cells read the whole split and are settled by their fixed-n interval.",
              ""]
    lines += _flags(cells, deciding, incomplete)
    lines += _summary(cells, deciding)
    lines += ["## Every cell", "",
              "n read: items read of the split. " + RULE_TEXT + " Methods: "
              + _methods(cells) + ".", ""]
    rows = [_row(c, deciding[c.task] == c.metric)
            for c in sorted(cells, key=lambda c: (c.task, c.model, c.prompt_id, c.reading,
                                                   c.metric != deciding[c.task]))]
    lines += table(["task", "model", "prompt", "reading", "metric", "n read", "verdict",
                    "interval", "score [95%]", "τ (anchor, fixed)",
                    "vs τ-baseline on the n items read [95%]", "format failures",
                    "eligible (cell)", "Holm p (family)", "eligible (family-wise)"], rows)
    lines += survival_section(cells)
    if rec is not None:
        lines += recommend_section(rec)
    return "\n".join(lines).rstrip() + "\n"
