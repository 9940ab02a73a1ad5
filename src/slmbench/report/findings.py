"""The plain-language summary of a study page: each statement derived from a number on the
page (the records ``agents`` and ``microtasks`` made), none computed here.
"""

from __future__ import annotations

from collections import defaultdict

from slmbench.agents.reliability import MIN_TASKS
from slmbench.agents.summary import (
    EQUIVALENCE_MARGIN,
    FLOOR_TEXT,
    AnalysisSummary,
    PairwiseComparison,
)
from slmbench.report.parta import mdd
from slmbench.report.partb import (
    family_headline,
)
from slmbench.report.study_facts import (
    StudyFacts,
    num,
    pct,
    pval,
    short,
)

__all__ = ["findings"]


def _best_is_decided(s: AnalysisSummary, best: str) -> str:
    """Whether the best point estimate is ahead of every other configuration: the pairs with
    it, paired by task (exact sign test across tasks, Holm over the page's comparisons)."""
    others = [p for a in s.accuracy if a.model != best and (p := s.pair(best, a.model))]
    if not others:
        return ""
    tied = [p for p in others if not p.differs and not p.equivalent]
    same = [p for p in others if not p.differs and p.equivalent]
    ahead = [p for p in others if p.differs and (p.comparison.mean_difference > 0) == (p.a == best)]
    if len(ahead) == len(others):
        worst = pval(max(p.p_holm for p in others))
        return ("; ahead of every other model (sign test across tasks, Holm p "
                f"{worst if worst.startswith('<') else '≤ ' + worst})")
    text = ""
    if ahead:
        text += "; ahead of " + ", ".join(f"{_other(p, best)} (Holm p {pval(p.p_holm)})"
                                         for p in ahead)
    if same:
        text += f"; within ±{100 * EQUIVALENCE_MARGIN:.0f} points of " + ", ".join(
            f"{_other(p, best)} ({_tost(p)})" for p in same)
    if tied:
        text += "; cannot tell it from " + ", ".join(
            f"{_other(p, best)} (Holm p {pval(p.p_holm)}, "
            f"{p.comparison.a_ahead + p.comparison.b_ahead} of {p.tasks} shared tasks differ, "
            f"MDD {mdd(p.comparison)} points)" for p in tied)
    return text


def _other(p: PairwiseComparison, best: str) -> str:
    return short(p.b if p.a == best else p.a)


def _tost(p: PairwiseComparison) -> str:
    e = p.equivalence
    return "" if e is None else (f"TOST p {pval(e.p_value)}, Holm "
                                 f"{pval(p.equivalence_p_holm)}, {e.note}")


def _pair_line(p: PairwiseComparison) -> str:
    c = p.comparison
    return (f"{short(p.a)} vs {short(p.b)} ({c.a_ahead} : {c.b_ahead} tasks, Holm p "
            f"{pval(p.p_holm)})")


def _part_a_findings(s: AnalysisSummary) -> list[str]:
    """The Part A lines of the summary, each from a number on the page."""
    out: list[str] = []
    best = s.best()
    if best is None:
        return out
    temps = [set(t.per_temperature) for t in s.temperature]
    common = set.intersection(*temps) if temps else set()
    uneven = len({frozenset(t) for t in temps}) > 1  # models ran different temperatures
    pooled = uneven and len(next((t.per_temperature for t in s.temperature
                                  if t.model == best.model), {})) > 1
    out.append(f"Best Part A capability accuracy: {short(best.model)}, "
               f"{pct(best.accuracy)}% ({best.accuracy.design()}) on {best.trials} trials"
               + (" (pooled over its temperatures)" if pooled else "")
               + _best_is_decided(s, best.model) + ".")
    if uneven and len(s.temperature) > 1:
        for key in sorted(common, key=float):
            at = sorted(((t.per_temperature[key], t.model) for t in s.temperature),
                        key=lambda e: -(e[0].estimate or 0.0))
            out.append(f"At T={key}, a temperature every model ran: " + "; ".join(
                f"{short(m)} {e.formatted()}% (n={e.n}, {e.tasks} tasks)" for e, m in at)
                + ".")
    composites = [d for d in s.dimensions if d.composite is not None]
    if composites:
        out.append("Reliability composite (the mean of the four dimensions, 95% interval): "
                   + "; ".join(f"{short(d.model)} {num(d.composite)}" for d in composites)
                   + ".")
    unmeasured = [d for d in s.dimensions if d.not_measurable]
    if unmeasured:
        out.append(f"Not measurable (the precondition holds on fewer than {MIN_TASKS} tasks; "
                   "no composite then): " + "; ".join(
                       f"{short(d.model)}: {', '.join(sorted(d.not_measurable))}"
                       for d in unmeasured) + ".")
    for o in s.outcomes:
        if (o.ungrounded is not None and o.ungrounded.estimate
                and (k := o.counts.get("ungrounded", 0))):
            out.append(f"{short(o.model)}: {k} of {o.trials} capability trials ended in "
                       "a right answer that no tool result supports "
                       f"({pct(o.ungrounded)}%, {o.ungrounded.design()}): ungrounded, not "
                       "counted as "
                       "successes.")
        if o.dumped is not None and (k := o.counts.get("dumped", 0)):
            out.append(f"{short(o.model)}: {k} of {o.trials} capability trials ended in a right "
                       "token inside a tool dump (a JSON answer, or one naming another "
                       f"candidate a tool showed; {pct(o.dumped)}%, {o.dumped.design()}): "
                       "dumped, not counted as successes.")
    if s.pairwise:
        sig = [p for p in s.pairwise if p.differs]
        same = [p for p in s.pairwise if not p.differs and p.equivalent]
        floors = [p for p in s.pairwise if not p.differs and p.at_floor]
        out.append(f"{len(sig)} of {len(s.pairwise)} model pairs differ (paired by task: exact "
                   "sign test across tasks, Holm over the page's comparisons)"
                   + (": " + "; ".join(_pair_line(p) for p in sig) if sig else "")
                   + (f"; {len(same)} shown within ±{100 * EQUIVALENCE_MARGIN:.0f} points (TOST "
                      "on the same per-task "
                      "differences): " + "; ".join(f"{short(p.a)} vs {short(p.b)} ({_tost(p)})"
                                                   for p in same) if same else "")
                   + (f"; {len(floors)} {FLOOR_TEXT} (neither side solves {MIN_TASKS} "
                      "tasks; no claim of equivalence): " + "; ".join(
                          f"{short(p.a)} vs {short(p.b)} (solve {p.solved_a} and {p.solved_b} "
                          "tasks)" for p in floors) if floors else "") + ".")
    for t in s.temperature:
        c = t.comparison
        if c is None or t.lowest is None or t.highest is None:
            continue
        lo, hi = (t.per_temperature[_temp(x)] for x in (t.lowest, t.highest))
        seen = (f"T={t.lowest:g} {pct(lo)}%, T={t.highest:g} {pct(hi)}%; paired by task "
                f"{pct(c.difference)} points, up on {c.a_ahead} task(s) and down on "
                f"{c.b_ahead}, Holm "
                f"p {pval(t.p_holm)}, MDD {mdd(c)} points")
        changed = t.p_holm is not None and t.p_holm < 0.05
        same = t.equivalence
        solved = [t.solved.get(_temp(x), 0) for x in (t.lowest, t.highest)]
        if changed:
            out.append(f"{short(t.model)}: accuracy differs between its lowest and highest "
                       f"temperature ({seen}).")
        elif t.at_floor:
            out.append(f"{short(t.model)}: T={t.lowest:g} and T={t.highest:g} {FLOOR_TEXT} "
                       f"(it solves {solved[0]} and {solved[1]} tasks; no claim of "
                       f"equivalence; {seen}).")
        elif same is not None and t.equivalent:
            out.append(f"{short(t.model)}: temperature changes its accuracy by less "
                       f"than {100 * same.margin:.0f} points (TOST p {pval(same.p_value)}, "
                       f"Holm {pval(t.equivalence_p_holm)}, highest − lowest "
                       f"{same.formatted_interval()} points; {seen}).")
        else:
            out.append(f"{short(t.model)}: cannot tell whether temperature changes its "
                       f"accuracy ({seen}"
                       + (f"; not shown within ±{100 * same.margin:.0f} points either: "
                          f"TOST p {pval(same.p_value)}, {same.formatted_interval()} points, "
                          f"Holm over the page's TOSTs {pval(t.equivalence_p_holm)}"
                          if same is not None else "") + ").")
    for z in s.size:
        if z.spearman is not None and z.spearman.estimate is not None:
            out.append(f"Size vs {z.metric}: Spearman ρ {z.spearman.estimate:+.2f} over "
                       f"{z.spearman.n} models (p {pval(z.spearman.p_value)}); "
                       + ("too few models to conclude anything."
                          if not z.spearman.meaningful else "see the table."))
    return out


def _temp(x: float) -> str:
    return f"{x:g}"


def findings(f: StudyFacts) -> list[str]:
    """Plain-language statements, each derived from a number on the page."""
    out: list[str] = _part_a_findings(f.summary) if f.summary else []
    if f.matrices:
        cells = [c for m in f.matrices for c in m.cells]
        out.append(f"Part B: {family_headline(cells)} (eligible: the lower bound of the "
                   "interval that applies above τ and above the τ-baseline on the items read).")
        per_task: dict[str, list[str]] = defaultdict(list)
        for c in cells:
            per_task[c.task].append(c.tau_anchor)
        anchors = {t: max(set(a), key=a.count) for t, a in per_task.items()}
        out.append("Baselines setting τ: " + ", ".join(f"{t}: {a}" for t, a in
                                                      sorted(anchors.items())) + ".")
    for h in f.humaneval:
        if h.comparison is not None:
            inside = "inside" if h.comparison.inside else "outside"
            out.append(f"HumanEval {short(h.model)}: {pct(h.pass_at_1)}%; the published "
                       f"{100 * h.comparison.published:.1f}% is {inside} our interval.")
    return out
