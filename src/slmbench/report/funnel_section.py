"""The stage funnel's section of a page (issue #61): per configuration, each stage's marginal
rate with its task-level interval and design and its rate given the stage before; the funnel
figure; the stage comparisons (their own Holm family); the pairs the pairwise table reads as
both at the floor; and the stage-level reliability. Everything is read from
``AnalysisSummary.funnel``, ``funnel_pairs`` and ``stage_reliability``: no number is computed
here."""

from __future__ import annotations

from slmbench.agents.reliability import MIN_TASKS
from slmbench.agents.summary import AnalysisSummary, StageFunnel, StageRate
from slmbench.core.stats import ClusteredEstimate, Estimate
from slmbench.report.study_facts import num, pct, pval, short, table

__all__ = ["ANCHOR", "at_the_floor", "breaks_line", "funnel_section", "stage_name", "with_design"]

ANCHOR = "stage-funnel-where-the-agent-breaks"  # the section's heading, as a Markdown anchor
HEAD = ["stage", "passed / trials", "tasks passing", "marginal % [95% CI] (design)",
        "given the stage before % [95% CI]", "not applicable"]


def stage_name(stage: str) -> str:
    return stage.replace("_", " ")


def with_design(e: Estimate | None, *, percent: bool = True) -> str:
    """A number with its design where it is task-level: ``14.5 [5.2, 25.5] (31×6, ICC 0.41,
    n_eff 61)``."""
    if e is None:
        return "–"
    text = pct(e) if percent else num(e)
    if not isinstance(e, ClusteredEstimate):
        return text
    icc = "–" if e.icc is None else f"{e.icc:.2f}"
    return f"{text} ({e.tasks}×{e.trials_per_task:.3g}, ICC {icc}, n_eff {e.effective_n:.0f})"


def _row(r: StageRate) -> list[str]:
    why = "; ".join(f"{k}: {w}" for w, k in r.not_applicable.items()) or "–"
    return [stage_name(r.stage), f"{r.passed} / {r.trials}", str(r.tasks_passed),
            with_design(r.marginal), pct(r.given_previous), why]


def breaks_line(f: StageFunnel) -> str:
    """Where a configuration breaks (the first stage fewer than half of the trials reaching
    it pass, with its rate), and how many of its trials stopped at each stage."""
    stopped = ", ".join(f"{k} at {'no action' if s == 'none' else stage_name(s)}"
                        for s, k in f.reached.items())
    if f.breaks_at is None:
        where = "every stage is passed by half or more of the trials reaching it"
    elif f.breaks_at == "acts":
        where = f"it breaks at *acts*: {pct(f.given('acts'))}% of its trials act"
    else:
        where = (f"it breaks at *{stage_name(f.breaks_at)}*: {pct(f.given(f.breaks_at))}% of "
                 "the trials that passed every stage before it passed it")
    return f"{where} (of {f.trials} trials, the last stage reached: {stopped})"


def _funnel_table(f: StageFunnel) -> list[str]:
    rows = []
    for r in f.stages:
        rows.append(_row(r))
        if r.stage == "acts":
            rows.append(["acts (strict grammar)", "", "", with_design(f.strict_acts), "", ""])
    lines = [f"**{short(f.model)}**: {breaks_line(f)}.", "", *table(HEAD, rows)]
    if f.unjudged:
        lines += [f"{f.unjudged} trial(s) of tasks not in the shipped suites: no stage judged.",
                  ""]
    return lines


def at_the_floor(s: AnalysisSummary) -> list[tuple[str, str]]:
    """The pairs of the pairwise table where neither side is correct on MIN_TASKS tasks."""
    floor = {f.model for f in s.funnel
             if (c := f.stage("correct")) is not None and c.tasks_passed < MIN_TASKS}
    return [(p.a, p.b) for p in s.pairwise if p.a in floor and p.b in floor]


def _floor_pairs(s: AnalysisSummary) -> list[str]:
    pairs = at_the_floor(s)
    if not pairs:
        return []
    lines = [f"**Pairs at the floor.** In the pairwise table above, these pairs have neither "
             f"side correct on {MIN_TASKS} tasks; their stages say how they differ:", ""]
    for a, b in pairs:
        found = [c for c in s.funnel_pairs if {c.a, c.b} == {a, b} and c.differs]
        if found:
            says = "; ".join(f"*{stage_name(c.stage)}* {pct(c.comparison.difference)} (Holm p "
                             f"{pval(c.p_holm)})" for c in found)
            lines.append(f"- {short(found[0].a)} vs {short(found[0].b)}, a − b in points: "
                         f"they differ at {says}.")
        else:
            lines.append(f"- {short(a)} vs {short(b)}: no stage differs after Holm.")
    return [*lines, ""]


def _comparisons(s: AnalysisSummary) -> list[str]:
    if not s.funnel_pairs:
        return []
    rows = [[stage_name(c.stage), short(c.a), short(c.b), str(c.comparison.tasks),
             str(c.cells), f"{c.comparison.a_ahead} : {c.comparison.b_ahead}",
             pct(c.comparison.difference), pval(c.comparison.sign_test.p_value),
             pval(c.p_holm), "yes" if c.differs else "no"] for c in s.funnel_pairs]
    head = ["stage", "a", "b", "tasks", "cells", "tasks a : b ahead", "a − b points [95% CI]",
            "sign test p", "p (Holm, the funnel's)", "differs"]
    return ["#### Stage comparisons", "",
            "Each pair of configurations at each stage, on the marginal rates, paired by task "
            "over the cells both ran (per-task differences, exact sign test across tasks); Holm "
            f"over these {len(s.funnel_pairs)} comparisons, a family of their own, so no "
            "comparison above changes.", "", *table(head, rows)]


def _stage_reliability(s: AnalysisSummary) -> list[str]:
    if not s.stage_reliability:
        return []
    rows = [[short(r.model), r.dimension.replace("_", " "),
             "–" if r.stage is None else stage_name(r.stage), str(r.reached_tasks),
             with_design(r.score, percent=False) if r.score is not None else (r.note or "–"),
             str(r.tasks) if r.score is not None else "–"]
            for r in s.stage_reliability]
    head = ["model", "dimension (stage-level)", "at stage", "tasks reaching it",
            "score [95% CI]", "tasks behind it"]
    return ["#### Stage-level reliability", "",
            "Robustness, recovery and consistency at the deepest stage short of *correct* "
            f"that the dimension's unperturbed trials reach on at least {MIN_TASKS} tasks, "
            "with reaching the stage in place of success (robustness: on the rewordings of "
            "the tasks whose base trials reach it; recovery: reaching it with the fault fired, "
            "on the fault tasks whose unfaulted trials reach it; consistency: pass^k of "
            "reaching it at T > 0). **Stage-level**: these are not the seed's dimensions, and "
            "no composite or seed claim reads them. Intervals as the dimensions' above.", "",
            *table(head, rows)]


def funnel_section(s: AnalysisSummary, figure: str | None = None) -> list[str]:
    """The funnel section of a page (``figure``: the funnel figure's path relative to the
    page, shown where given); nothing when the summary has no funnel."""
    if not s.funnel:
        return []
    lines = ["### Stage funnel: where the agent breaks", "",
             "How far each capability trial got toward a right answer, each stage judged "
             "against the trial's question by the world (docs/reliability.md): *acts* (its "
             "first reply parses as an action), *right tool* (its first call names a tool of "
             "the reference solution), *valid call* (a call to a reference tool succeeded), "
             "*evidence* (a successful tool result shows the task's evidence), *answers* (it "
             "ended in an answer, refusal or decision), *correct* (the accuracy above). Each "
             "stage's marginal rate is over the trials where it applies, task-level with its "
             "design as above; *given the stage before* is over those of them that passed every "
             "applicable stage before it. A configuration *breaks* at the first stage that "
             "fewer than half of the trials reaching it pass (its rate given the stage before "
             "below 50%; *acts*: of all its trials).", ""]
    for f in s.funnel:
        lines += _funnel_table(f)
    if figure:
        lines += [f"![stage funnel]({figure})", ""]
    return lines + _comparisons(s) + _floor_pairs(s) + _stage_reliability(s)
