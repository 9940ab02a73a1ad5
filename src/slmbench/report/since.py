"""What changed since a previous study page: its verdicts beside this page's.

Every study page writes the verdicts it states to ``verdicts.json`` beside it
(:func:`page_verdicts`): each seed claim's, each Part A model pair's (the sign test across
tasks, Holm), each model's temperature effect and each Part B cell's, with what each rests on
(tasks and cells, items read). A study file's ``previous = "PAGE"`` names an earlier page; this
page's "What changed since" section (:func:`since_section`) lists every verdict the two state
differently, or that only one states, with both bases side by side, so a reader sees which
verdicts moved and on how much more (or other) data. Both files are written by the rules of
the checkout that last regenerated each page: a move is a change of data or design, unless the
earlier page was made by older rules (it says so in its own ``verdict-changes.json``).
"""

from __future__ import annotations

from collections.abc import Sequence

from slmbench.agents.rescoring import RESCORED_NAME, Rescored
from slmbench.agents.rescoring import RULES as RESCORING_RULES
from slmbench.agents.summary import FLOOR_TEXT, PAIR_RULE_VERSION, AnalysisSummary
from slmbench.microtasks.cells import CELL_VERSION
from slmbench.report.partb import cell_key, cell_verdict
from slmbench.report.seed_claims import check_claims
from slmbench.report.sized_claims import CLAIM_RULE_VERSION
from slmbench.report.study_facts import PageVerdicts, Stated, StudyFacts, short, table

__all__ = ["RULES", "VERDICTS_NAME", "moved_by_rule", "page_verdicts", "rescored_section",
           "rule_moves_section", "since_section"]

VERDICTS_NAME = "verdicts.json"


def _pairs(s: AnalysisSummary) -> dict[str, Stated]:
    out = {}
    for p in s.pairwise:
        a, b = sorted((short(p.a), short(p.b)))
        ahead = short(p.a if p.comparison.mean_difference > 0 else p.b)
        temps = ", ".join(p.temperatures)
        e = p.equivalence
        out[f"{a} vs {b}"] = Stated(
            verdict=f"{ahead} ahead" if p.differs else FLOOR_TEXT if p.at_floor else
            f"within ±{100 * e.margin:.0f} points" if e is not None and p.equivalent else
            "not shown",
            basis=f"{p.tasks} tasks, {p.cells} cells" + (f", T {temps}" if temps else ""))
    return out


def _temperature(s: AnalysisSummary) -> dict[str, Stated]:
    out = {}
    for t in s.temperature:
        if t.comparison is None or t.lowest is None or t.highest is None:
            continue
        if t.p_holm is not None and t.p_holm < 0.05:
            verdict = ("lower" if t.comparison.mean_difference < 0 else "higher") + \
                f" at T {t.highest:g}"
        elif t.at_floor:
            verdict = FLOOR_TEXT
        elif t.equivalence is not None and t.equivalent:
            verdict = f"within ±{100 * t.equivalence.margin:.0f} points"
        else:
            verdict = "cannot tell"
        out[f"{short(t.model)}, T {t.lowest:g} vs {t.highest:g}"] = Stated(
            verdict=verdict, basis=f"{t.comparison.tasks} tasks, {t.comparison.cells} cells")
    return out


def page_verdicts(f: StudyFacts) -> PageVerdicts:
    """The verdicts the page made of ``f`` states (what ``verdicts.json`` holds)."""
    s = f.summary
    cells = {cell_key(c): Stated(verdict=cell_verdict(c), basis=f"{c.n_items} items")
             for m in f.matrices for c in m.cells}
    return PageVerdicts(
        name=f.name, claims={c.claim: Stated(verdict=k.stated) for c, k in check_claims(f)},
        pairs=_pairs(s) if s else {}, temperature=_temperature(s) if s else {}, cells=cells,
        rules=RULES)


# the rule version of each kind of verdict, recorded in verdicts.json (a page written before
# it was recorded holds none: version 1 of the seed claims and the Part A pairs, and Part B's
# cells' own CELL_VERSION in its export)
RULES = {"claims": CLAIM_RULE_VERSION, "pairs": PAIR_RULE_VERSION,
         "temperature": PAIR_RULE_VERSION, "cells": CELL_VERSION}


def _reason(kind: str, before: PageVerdicts, now: PageVerdicts) -> str:
    """Why a verdict of ``kind`` may have moved: ``rule`` (v1 → v2) where the two pages were
    judged by different rule versions of that kind, else ``data or design``."""
    old, new = before.rules.get(kind), now.rules.get(kind)
    if old is None and kind != "cells":
        old = 1  # before rule versions were recorded: the first rule
    if old is not None and new is not None and old != new:
        return f"rule (v{old} → v{new})"
    return "data or design"


KINDS = (("claims", "seed claim"), ("pairs", "Part A pair"),
         ("temperature", "temperature effect"), ("cells", "Part B cell"))


def _moved(before: dict[str, Stated], now: dict[str, Stated]) -> list[tuple[str, str, str]]:
    """(key, before, now) for every key whose verdict differs or that one side lacks."""
    def shown(x: Stated | None) -> str:
        if x is None:
            return "not stated"
        return x.verdict if x.basis is None else f"{x.verdict} ({x.basis})"

    return [(k, shown(before.get(k)), shown(now.get(k))) for k in sorted(before | now)
            if (before.get(k) is None or now.get(k) is None
                or before[k].verdict != now[k].verdict)]


def since_section(before: PageVerdicts, now: PageVerdicts, *, link: str) -> list[str]:
    """The page's "What changed since" section: each verdict ``before`` (the page at ``link``)
    and ``now`` state differently, or that one of them does not state, by kind; then how many
    of each kind stand unchanged."""
    lines = [f"## What changed since {before.name}", "",
             f"Every verdict of [{before.name}]({link}) (its `{VERDICTS_NAME}`) beside this "
             "page's, where they differ or only one page states it, with what each rests on. "
             "Both are judged by the rules of the checkout that last regenerated the page, "
             "and each records the rule version of every kind of verdict: *why* reads "
             "\"rule\" where the two pages' versions differ (the verdict may have moved by the "
             "rule alone), else a move is one of data or design, unless the earlier page names "
             "rule changes of its own (its `verdict-changes.json`).", ""]
    rows: list[Sequence[str]] = []
    kept = []
    for field, label in KINDS:
        b, n = getattr(before, field), getattr(now, field)
        moved = _moved(b, n)
        why = _reason(field, before, now)
        rows += [[label, k, x, y, why] for k, x, y in moved]
        same = len(set(b) & set(n)) - sum(1 for k, _, _ in moved if k in b and k in n)
        kept.append(f"{same} {label}{'' if same == 1 else 's'}")
    lines += (table(["kind", "what", before.name, "here", "why"], rows) if rows
              else ["No verdict moved.", ""])
    return [*lines, f"Unchanged: {', '.join(kept)}.", ""]


def rescored_section(rescored: Rescored) -> list[str]:
    """The page's "What changed" list of stored trials a new scoring rule moved (the exports'
    ``rescored.json``, written by ``slmbench rescore``): each trial's key, its outcome before
    and after, and the rule and the scorer's reason."""
    versions = ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in rescored.rules.items())
    trials = sum(t.trials for t in rescored.exports.values())
    lines = ["## What changed: stored trials the scoring moved", "",
             f"Every stored trial ({trials:,} in {', '.join(rescored.exports)}) was judged again "
             "by today's scorers against the question it recorded (`slmbench rescore`; its "
             f"`{RESCORED_NAME}`, {versions}); the numbers on this page count each trial as it "
             "is judged now.", ""]
    if not rescored.moved:
        return [*lines, "No trial moved.", ""]
    rows = [[short(m.key.model), m.key.task, m.key.variant, f"{m.key.temperature:g}",
             str(m.key.seed), str(m.key.repeat), str(m.key.instance), m.before.value,
             m.after.value, f"rule: {RESCORING_RULES.get(m.rule, m.rule)}; "
             + m.reason.replace("|", "\\|")] for m in rescored.moved]
    return [*lines, f"{len(rows)} trial{'' if len(rows) == 1 else 's'} moved:", "",
            *table(["model", "task", "variant", "T", "seed", "repeat", "instance", "before",
                    "now", "why"], rows)]


def moved_by_rule(before: PageVerdicts, now: PageVerdicts) -> list[str] | None:
    """The seed claims, Part A pairs and temperature effects of one page whose verdict moved
    between ``before`` (the page's own last ``verdicts.json``) and ``now``, in each kind that
    ``before`` judged by an older rule version (unrecorded: version 1); the data are the same
    page's, so such a move is the rule's. None when no kind's rule is newer (Part B cells: their
    own ``verdict-changes.json``)."""
    kinds = [(field, label) for field, label in KINDS if field != "cells"
             and before.rules.get(field, 1) < now.rules.get(field, 1)]
    if not kinds:
        return None
    return [f"{label} {key}: {was} → {is_} (rule v{before.rules.get(field, 1)} → "
            f"v{now.rules[field]})"
            for field, label in kinds
            for key, was, is_ in _moved(getattr(before, field), getattr(now, field))]


def rule_moves_section(moves: list[str]) -> list[str]:
    """The page's own verdicts that a newer rule moved (:func:`moved_by_rule`, kept beside the
    page so every later regeneration states them)."""
    lines = ["## What changed on this page: verdicts a new rule moved", "",
             "This page's seed claims, Part A pairs and temperature effects as its previous "
             "generation stated them, where the rule that judges them has changed since (the "
             f"same stored data): {len(moves)}" + (":" if moves else "."), ""]
    return lines + [f"- {m}" for m in moves] + ([""] if moves else [])
