"""Part A sections shared by every page: accuracy with its design, the reliability dimensions
and the composite, temperature effects, pairwise comparisons, failures and size, read from
the records ``agents`` made (:class:`~slmbench.agents.summary.AnalysisSummary`, the stored
trials). Nothing here computes a statistic.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from slmbench.agents.dimensions import DIMENSION_INTERVALS
from slmbench.agents.records import Trial
from slmbench.agents.reliability import MIN_TASKS, Consistency
from slmbench.agents.summary import (
    EQUIVALENCE_MARGIN,
    FLOOR_TEXT,
    AnalysisSummary,
    DimensionScores,
    PairwiseComparison,
)
from slmbench.core.stats import ClusteredEstimate, Correlation, TaskComparison
from slmbench.report.study_facts import (
    DIMENSIONS,
    num,
    pct,
    pval,
    short,
    table,
)

__all__ = ["COMPARISON_HEAD", "DESIGN_NOTE", "equivalence", "failures", "families_note", "mdd",
           "outcomes_per_task", "part_a_section"]


def _icc(e: ClusteredEstimate) -> str:
    return "–" if e.icc is None else f"{e.icc:.2f}"


def _with_design(e: ClusteredEstimate | None, *, percent: bool = True) -> str:
    """A task-level number with its design: ``14.5 [5.2, 25.5] (31×6, ICC 0.41, n_eff 61)``."""
    if e is None:
        return "–"
    text = pct(e) if percent else num(e)
    return (f"{text} ({e.tasks}×{e.trials_per_task:.3g}, ICC {_icc(e)}, "
            f"n_eff {e.effective_n:.0f})")


def mdd(c: TaskComparison) -> str:
    """The minimum detectable difference in points, or why there is none."""
    if c.mdd is not None:
        return f"{100 * c.mdd:.1f}"
    return "– (no spread)" if c.tasks >= 2 else "– (one task)"


def equivalence(p: PairwiseComparison) -> str:
    """Whether the pair is shown within the margin, with the TOST's p and its Holm p
    (``–``: not tested)."""
    e = p.equivalence
    if e is None:
        return "–"
    if p.at_floor:
        return f"{FLOOR_TEXT} (solve {p.solved_a} and {p.solved_b} tasks)"
    held = "" if p.equivalence_p_holm is None else f", Holm {pval(p.equivalence_p_holm)}"
    return f"{'yes' if p.equivalent else 'not shown'} (p {pval(e.p_value)}{held})"


def _comparison_row(p: PairwiseComparison) -> list[str]:
    c = p.comparison
    return [short(p.a), short(p.b), str(p.tasks), str(p.cells), ", ".join(p.temperatures),
            f"{c.a_ahead} : {c.b_ahead}", pct(c.difference), pval(c.sign_test.p_value),
            pval(p.p_holm), mdd(c), equivalence(p)]


COMPARISON_HEAD = ["a", "b", "tasks", "cells", "at T", "tasks a : b ahead",
                   "a − b points [95% CI]", "sign test p", "p (Holm)", "MDD (points)",
                   f"within ±{100 * EQUIVALENCE_MARGIN:.0f} points (TOST p, Holm)"]


DESIGN_NOTE = ("Every interval is task-level: the task is the unit that repeats, so trials of "
               "one task are not independent (`docs/statistics.md`: the wider of Wilson on the "
               "design-effect-adjusted n and the cluster-robust t over tasks). Beside each "
               "number, its design: tasks × trials per task, the intraclass correlation (ICC, "
               "one-way ANOVA; – where every trial ended the same way, and the worst case is "
               "taken) and the effective n. The estimand is the mean over a population of "
               "tasks like the suite's.")


def _families_note(trials: Sequence[Trial]) -> list[str]:
    """Where tasks ran as families (issue #39), what a "task" is on the page: one family,
    its drawn instances being trials of it (analysis.py clusters them so)."""
    drawn = [t for t in trials if t.instance]
    if not drawn:
        return []
    worlds = sorted({t.instance for t in drawn})
    per_family = max(len({t.instance for t in drawn if t.task_id == f})
                     for f in {t.task_id for t in drawn})
    return [f"Tasks ran as families: a task here is one family, and its instances (the "
            f"family drawn in worlds {', '.join(map(str, worlds))}; up to {per_family} a "
            "family) with its repeats and temperatures are trials of that task, never tasks "
            "of their own. So *tasks × trials* reads families × (instances × repeats × "
            "temperatures), and two sides pair by family, within the (variant, temperature, "
            "instance) cells both ran.", ""]


def _accuracy_tables(s: AnalysisSummary) -> list[str]:
    outcomes = {o.model: o for o in s.outcomes}
    lines = table(
        ["model", "params (B)", "trials", "accuracy % [95% CI]", "tasks × trials",
         "ICC", "effective n", "per-task mean % (tasks weigh the same)", "ungrounded %",
         "format failures %", "mean latency s"],
        [[short(a.model), "–" if a.params_b is None else f"{a.params_b:g}", str(a.trials),
          pct(a.accuracy), f"{a.accuracy.tasks} × {a.accuracy.trials_per_task:.3g}",
          _icc(a.accuracy), f"{a.accuracy.effective_n:.0f}", pct(a.accuracy_by_task),
          _with_design(outcomes[a.model].ungrounded) if a.model in outcomes else "–",
          _with_design(outcomes[a.model].format_failure) if a.model in outcomes else "–",
          f"{a.mean_latency_s:.1f}"] for a in s.accuracy])
    groups = sorted({g.group for g in s.groups})
    by = {(g.model, g.group): g.accuracy for g in s.groups}
    if groups:
        lines += ["### Accuracy per group (%)", "",
                  "Each cell: task-level interval (tasks × trials per task, ICC, effective n).",
                  ""]
        lines += table(["model", *groups],
                       [[short(a.model), *(_with_design(by.get((a.model, g))) for g in groups)]
                        for a in s.accuracy])
    return lines


def _dimension_cell(d: DimensionScores, k: str) -> str:
    e = d.dimensions.get(k)
    if e is None:
        why = d.not_measurable.get(k, "")
        return "not measurable" + (f" ({why.removeprefix('not measurable: ')})"
                                   if why.startswith("not measurable: ") else "")
    if isinstance(e, ClusteredEstimate):
        return _with_design(e, percent=False)
    return f"{num(e)} ({d.tasks.get(k, 0)} tasks)"


def _dimension_tables(s: AnalysisSummary) -> list[str]:
    lines = ["### Reliability dimensions and composite", "",
             f"Each in [0, 1] with a 95% interval, {DIMENSION_INTERVALS}; definitions in "
             "docs/reliability.md. Three dimensions are conditional on a precondition: fault "
             "tolerance is *recovery* (success under the fault on the tasks the model solves "
             "unfaulted), robustness is success on the rewordings of the base tasks it "
             "solves, safety is success on the trials where it reached a decision (an answer, "
             "a refusal or an action; looping without acting is none). A dimension whose "
             f"precondition holds on fewer than {MIN_TASKS} tasks is **not measurable**: "
             "left out of the composite (the model then has none) and of every seed claim. "
             "Consistency is measured only on repeats at a sampling temperature: repeats at "
             "T = 0 are greedy, so they show whether the backend is deterministic, not whether "
             "the agent is reliable.", ""]
    lines += table(["model", *DIMENSIONS, "composite", "determinism at T = 0"],
                   [[short(d.model), *(_dimension_cell(d, k) for k in DIMENSIONS),
                     num(d.composite), _determinism(d.report.consistency)]
                    for d in s.dimensions])
    notes = [f"{short(d.model)}: {d.report.consistency.note}" for d in s.dimensions
             if d.report.consistency.score is None and d.report.consistency.note]
    lines += [f"- {n}" for n in notes] + ([""] if notes else [])
    lines += ["The seed's unconditional figures, for comparison only (every trial of the "
              "dimension's tasks, whether or not the precondition held; a floor scores 0 "
              "here without saying anything about the dimension; never used for a verdict):",
              ""]
    lines += table(["model", *(f"{k} (seed's, unconditional)" for k in DIMENSIONS)],
                   [[short(d.model), *(_with_design(e, percent=False)
                                       if isinstance(e := d.seed.get(k), ClusteredEstimate)
                                       else num(e) for k in DIMENSIONS)]
                    for d in s.dimensions])
    return lines


def _temperature_table(s: AnalysisSummary) -> list[str]:
    temps = sorted({k for t in s.temperature for k in t.per_temperature}, key=float)
    if not temps:
        return []
    lines = ["### Temperature", "",
             "Accuracy per temperature (task-level); the highest against the lowest "
             "temperature paired by task (per-task differences, exact sign test across tasks, "
             "Holm over the page's comparisons, minimum detectable difference).", ""]
    rows = []
    for t in s.temperature:
        c = t.comparison
        rows.append([short(t.model), *(_with_design(t.per_temperature.get(k)) for k in temps),
                     "–" if c is None else pct(c.difference),
                     "–" if c is None else f"{c.a_ahead} : {c.b_ahead}",
                     pval(t.p_holm), "–" if c is None else mdd(c)])
    return lines + table(["model", *(f"T={k}" for k in temps),
                          "highest − lowest points [95% CI]", "tasks up : down", "p (Holm)",
                          "MDD (points)"], rows)


def part_a_section(s: AnalysisSummary, trials: Sequence[Trial] = ()) -> list[str]:
    """The Part A section of a page from its analysis (``trials``: those it analysed, to say
    what a task is where tasks ran as families)."""
    lines = ["## Part A: agent reliability", "",
             f"{s.n_trials} trials. Accuracy counts {s.capability_scope}. {DESIGN_NOTE} "
             "Every fact in the world is invented: a right answer that no successful tool "
             "result supports is *ungrounded*, shown beside accuracy and never counted as a "
             "success.", "", *_families_note(trials)]
    lines += _accuracy_tables(s)
    if s.dimensions:
        lines += _dimension_tables(s)
    lines += _temperature_table(s)
    lines += _size(s)
    if s.pairwise:
        family = len(s.pairwise) + sum(t.comparison is not None for t in s.temperature)
        lines += ["### Pairwise, paired by task", "",
                  "Each pair over the (task, temperature) cells both ran: per-task differences "
                  "of the success rate averaged over those cells, an exact sign test across "
                  f"tasks (Holm over the page's {family} comparisons: these pairs and the "
                  "temperature effects), the interval of the mean difference (the hull of the "
                  "paired t interval and the bounded-mean posterior on [−1, 1]), and "
                  "the minimum detectable difference (MDD: two-sided α 0.05 before Holm, "
                  "power 0.8, paired t on the per-task differences, their sd from the data; "
                  "none when every task differs by the same amount, where the interval is an "
                  "exact bound instead), and whether the pair is shown within "
                  f"±{100 * EQUIVALENCE_MARGIN:.0f} points: the TOST on the same per-task "
                  "differences (the same interval at 90% inside the margin), Holm over the "
                  "page's TOSTs (a pair neither shown to differ nor within the margin reads "
                  f"with its MDD). Where neither side solves {MIN_TASKS} tasks the pair reads "
                  f"\"{FLOOR_TEXT}\": two floors are within any margin by the exact bound "
                  "once there are tasks enough, however differently they fail, so it claims "
                  "no equivalence and is not one of the TOSTs; the stage funnel below "
                  "compares such a pair stage by stage, where the two can differ.", ""]
        lines += table(COMPARISON_HEAD, [_comparison_row(p) for p in s.pairwise])
        lines += families_note(s)
    if s.notes:
        lines += ["Notes from the analysis:", ""] + [f"- {n}" for n in s.notes] + [""]
    return lines


def families_note(s: AnalysisSummary) -> list[str]:
    """Which Holm families the page's Part A verdicts belong to, and the error of each."""
    swept = [t for t in s.temperature if t.comparison is not None]
    signs = len(s.pairwise) + len(swept)
    tosts = sum(x.equivalence_p_holm is not None for x in [*s.pairwise, *swept])
    floors = sum(x.at_floor for x in [*s.pairwise, *swept])
    text = (f"Family-wise error of these verdicts: two Holm families, each at 5%. "
            f"\"Differs\" is the {signs} sign tests (the pairs and the temperature effects); "
            f"\"within ±{100 * EQUIVALENCE_MARGIN:.0f} points\" is the {tosts} TOSTs of the "
            "same comparisons" + (f" ({floors} at the floor left out)" if floors else "")
            + ". A page stating both kinds keeps its Part A error at most 10% (5% per family, "
            "Bonferroni over the two). ")
    if s.by_temperature:
        text += (f"The {len(s.by_temperature)} pairs at each temperature (what the ranking "
                 "claim reads) are a family of their own, at 5%. ")
    text += ("The seed claims that state a size are one more family (5%), and Part B's "
             "configurations another (Holm over all of them, 5%).")
    return [text, ""]


def failures(s: AnalysisSummary, trials: Sequence[Trial]) -> list[str]:
    """Toolset, forensics per model (causes of failed trials), errors not the model's."""
    toolsets = sorted({t.toolset for t in trials})
    lines = [f"Toolset: {', '.join(toolsets) or '–'} (task: each task offers the tools it lists; "
             "all: the ten tools, as in the seed).", ""]
    rows = [f for f in s.failures if f.trials]
    if rows:
        causes = sorted({c for f in rows for c in f.causes})
        lines += ["### Why trials failed (forensics)", "",
                  "Failed trials per cause (docs/reliability.md#forensics); format failures "
                  "under the tolerant parser the run used and under the strict grammar.", ""]
        lines += table(["model", "trials", *causes, "format % tolerant", "format % strict"],
                       [[short(f.model), str(f.trials),
                         *(str(f.causes.get(c, 0)) for c in causes),
                         pct(f.format_failure), pct(f.strict_format_failure)] for f in rows])
    if s.not_the_models:
        lines += ["Not the model's (no rate counts them): " + "; ".join(
            f"{short(m)} " + ", ".join(f"{k} {o}" for o, k in c.items())
            for m, c in s.not_the_models.items()), ""]
    if s.exclusion_bounds:
        lines += ["Had they counted (capability accuracy, task-level, 95% CI): " + "; ".join(
            f"{short(b.model)}, {b.excluded} trial(s): {_reported(s, b.model)} as reported, "
            f"{pct(b.as_failures)} all failures, {pct(b.as_successes)} all successes"
            for b in s.exclusion_bounds) + ".", ""]
    return lines


def _reported(s: AnalysisSummary, model: str) -> str:
    a = s.accuracy_of(model)
    return pct(None if a is None else a.accuracy)


def _determinism(c: Consistency) -> str:
    if c.determinism is None:
        return "–"
    return f"{pct(c.determinism)}% of {c.greedy_items} items identical"


def outcomes_per_task(trials: Sequence[Trial]) -> list[str]:
    """One row per model and task: trials, successes and how the others ended."""
    if not trials:
        return []
    cells: dict[tuple[str, str, str], list[Trial]] = defaultdict(list)
    for t in trials:
        cells[(t.model, t.suite, t.task_id)].append(t)
    rows = []
    for (model, suite, task), ts in sorted(cells.items()):
        counts: dict[str, int] = defaultdict(int)
        for t in ts:
            if t.outcome != "success":
                counts[str(t.outcome)] += 1
        rest = ", ".join(f"{k} {v}" for k, v in sorted(counts.items(), key=lambda x: -x[1]))
        variants = sorted({t.variant for t in ts})
        rows.append([short(model), suite, task, str(len(ts)),
                     str(sum(t.outcome == "success" for t in ts)), rest or "–",
                     ", ".join(variants)])
    return ["### Outcomes per task", "",
            *table(["model", "suite", "task", "trials", "success", "other outcomes",
                    "variants"], rows)]


def _corr(c: Correlation | None) -> str:
    if c is None or c.estimate is None:
        return "–"
    return f"{c.estimate:+.2f} (p {pval(c.p_value)}, n {c.n})"


def _size(s: AnalysisSummary) -> list[str]:
    if not s.size:
        return []
    lines = ["### Size against score", "",
             "A handful of models says little about size: with three, even a perfect rank "
             "order has an exact two-sided Spearman p of 0.33; with four, 0.083.", ""]
    lines += table(["score", "models", "Pearson r", "Spearman ρ", "note"],
                   [[z.metric, str(len(z.models)), _corr(z.pearson), _corr(z.spearman),
                     z.note or ""] for z in s.size])
    return lines
