"""The results page of a study (Markdown), generated from its stores, never typed.

:func:`render_study_page` takes what :mod:`slmbench.study` collected (Part A's
analysis summary and trials, Part B's eligibility matrix, HumanEval summaries,
versions and model hashes) and writes the seed-style tables: accuracy with
intervals per model and group, the four reliability dimensions and the
composite, temperature effects, size-vs-score correlation with its p-value,
the eligibility matrix with τ, what to deploy per micro-task (baseline, model or
cascade, with evidence and cost), HumanEval against the published table, the cost
of each model, then a plain-language summary derived from the same numbers.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path

from slmbench.agents.configurations import spec_of
from slmbench.agents.dimensions import DIMENSION_INTERVALS
from slmbench.agents.humaneval import Summary as HumanEvalSummary
from slmbench.agents.records import Trial
from slmbench.agents.reliability import MIN_TASKS, Consistency
from slmbench.agents.summary import AnalysisSummary, DimensionScores, PairwiseComparison
from slmbench.core.stats import ClusteredEstimate, Correlation, TaskComparison
from slmbench.microtasks.eligibility import deciding_metrics
from slmbench.microtasks.matrix import MatrixRun
from slmbench.report.cascade_page import cascade_section
from slmbench.report.partb import (
    RULE_TEXT,
    family_headline,
    family_text,
    family_verdict,
    recommend_section,
    survival_section,
    verdict_text,
)
from slmbench.report.published import published_part_a, published_part_b
from slmbench.report.seed_claims import check_claims
from slmbench.report.study_facts import (
    DIMENSIONS,
    ModelCost,
    ReadingTally,
    StudyFacts,
    num,
    pct,
    pval,
    short,
    table,
)

__all__ = ["part_a_section", "part_b_family", "part_b_section", "readme_block",
           "readme_markers", "render_study_page"]

# -- sections -----------------------------------------------------------------------------------

def _reproduce(f: StudyFacts) -> list[str]:
    lines = ["## How this page was made", "",
             "```bash", f.command, "```", "",
             f"From the study file `{f.study_file}`; generated {f.created}. Running the same "
             "command again resumes an interrupted study (only missing trials and readings are "
             "computed); `--page-only` regenerates this page from the stores without a model.",
             ""]
    if f.design:
        lines += table(["block", "models", "grid"], f.design)
    if f.cuts:
        lines += ["**Cut from the design** (the study file's `cuts`; none of it is run or "
                  "shown):", ""] + [f"- {c}" for c in f.cuts] + [""]
    if f.notes:
        lines += ["**How it runs** (the study file's `notes`):", ""] + [
            f"- {n}" for n in f.notes] + [""]
    lines += ["Versions: " + ", ".join(f"{k} {v}" for k, v in f.versions.items()) + ".", ""]
    if f.exports:
        lines += ["Every stored trial and reading behind the numbers, one JSON document per "
                  "line: " + ", ".join(f"[{e}]({e})" for e in f.exports) + ".", ""]
    if f.model_hashes:
        lines += table(["model file", "sha256"],
                       [[k, f"`{v}`"] for k, v in sorted(f.model_hashes.items())])
    if f.incomplete:
        lines += ["**Incomplete:**", ""] + [f"- {x}" for x in f.incomplete] + [""]
    return lines


def _costs(f: StudyFacts) -> list[str]:
    if not f.costs:
        return []
    rows = []
    for c in f.costs:
        tps = f"{c.tokens / c.trial_wall_s:.0f}" if c.trial_wall_s else "–"
        rwall = "–" if c.reading_wall_s is None else f"{c.reading_wall_s / 60:.1f}"
        a = bool(c.trials or c.trials_planned)  # "–" where the study plans nothing
        b = bool(c.readings or c.readings_planned)
        if not b or not c.readings_with_tokens:
            rtok = "–"
        elif c.readings_with_tokens == c.readings:
            rtok = f"{c.reading_tokens:,}"
        else:
            rtok = f"{c.reading_tokens:,} ({c.readings_with_tokens} of {c.readings} readings)"
        rows.append([short(c.model), f"{c.trials}/{c.trials_planned}" if a else "–",
                     f"{c.trial_wall_s / 60:.1f}" if a else "–", f"{c.tokens:,}" if a else "–",
                     tps, f"{c.readings}/{c.readings_planned}" if b else "–",
                     rwall if b else "–", rtok])
    total_min = sum(c.trial_wall_s + (c.reading_wall_s or 0.0) for c in f.costs) / 60
    head = ["model", "Part A trials", "Part A min", "Part A tokens", "tokens/s",
            "Part B readings", "Part B min", "Part B tokens"]
    return ["## Cost on this machine", "",
            "Model time summed over stored trials and readings (2-core CPU, llama.cpp); "
            f"{total_min:.0f} minutes in all. Tokens: prompt and reply tokens of every model "
            "call; for a Part B reading, its generation's plus the candidate forms it scored "
            "(– where the readings were stored before slmbench recorded their tokens).", "",
            *table(head, rows)]


def block_time_section(f: StudyFacts) -> list[str]:
    """Model time per block of the study file, from the stores' own timings, and the time left."""
    if not f.block_times:
        return []
    rows = []
    for b in f.block_times:
        bound = "≤ " if b.at_most else ""
        each = f"{b.spent_s / b.stored:.1f}" if b.stored else "–"
        left = ("–" if b.hours_left is None
                else (bound if b.hours_left else "") + f"{b.hours_left:.2f}")
        rows.append([b.block, ", ".join(short(m) for m in b.models),
                     f"{b.stored}/{bound}{b.planned} {b.unit}s", f"{b.spent_s / 60:.1f}", each,
                     left])
    spent = sum(b.spent_s for b in f.block_times) / 3600
    known = sum(b.hours_left or 0.0 for b in f.block_times)
    unknown = [b.block for b in f.block_times if b.hours_left is None]
    return ["## Model time per block", "",
            "Per block of the study file: the model time of its stored trials (each trial's wall "
            "time) and readings (each reading's own time), and the hours its remaining trials or "
            "readings should take at the mean rate measured in the stores (– where a model of "
            "the block has no rate yet). A sequential Part B block stops each cell at its "
            "verdict, so its planned readings and the time left are upper bounds (none is left "
            "once its cells are settled).", "",
            *table(["block", "models", "stored/planned", "model min", "s each", "hours left"],
                   rows),
            f"In all: {spent:.2f} model hours stored, {known:.2f} hours left at the measured "
            "rates" + (f" (+ {', '.join(unknown)}: no rate measured)" if unknown else "") + ".",
            ""]


def _icc(e: ClusteredEstimate) -> str:
    return "–" if e.icc is None else f"{e.icc:.2f}"


def _with_design(e: ClusteredEstimate | None, *, percent: bool = True) -> str:
    """A task-level number with its design: ``14.5 [5.2, 25.5] (31×6, ICC 0.41, n_eff 61)``."""
    if e is None:
        return "–"
    text = pct(e) if percent else num(e)
    return (f"{text} ({e.tasks}×{e.trials_per_task:.3g}, ICC {_icc(e)}, "
            f"n_eff {e.effective_n:.0f})")


def _mdd(c: TaskComparison) -> str:
    """The minimum detectable difference in points, or why there is none."""
    if c.mdd is not None:
        return f"{100 * c.mdd:.1f}"
    return "– (no spread)" if c.tasks >= 2 else "– (one task)"


def _comparison_row(p: PairwiseComparison) -> list[str]:
    c = p.comparison
    return [short(p.a), short(p.b), str(p.tasks), str(p.cells), ", ".join(p.temperatures),
            f"{c.a_ahead} : {c.b_ahead}", pct(c.difference), pval(c.sign_test.p_value),
            pval(p.p_holm), _mdd(c)]


COMPARISON_HEAD = ["a", "b", "tasks", "cells", "at T", "tasks a : b ahead",
                   "a − b points [95% CI]", "sign test p", "p (Holm)", "MDD (points)"]
DESIGN_NOTE = ("Every interval is task-level: the task is the unit that repeats, so trials of "
               "one task are not independent (`docs/statistics.md`: the wider of Wilson on the "
               "design-effect-adjusted n and the cluster-robust t over tasks). Beside each "
               "number, its design: tasks × trials per task, the intraclass correlation (ICC, "
               "one-way ANOVA; – where every trial ended the same way, and the worst case is "
               "taken) and the effective n. The estimand is the mean over a population of "
               "tasks like the suite's.")


def _accuracy_tables(s: AnalysisSummary) -> list[str]:
    outcomes = {o.model: o for o in s.outcomes}
    lines = table(
        ["model", "params (B)", "trials", "accuracy % [95% CI]", "tasks × trials",
         "ICC", "effective n", "per-task mean % (these tasks)", "ungrounded %",
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
                     pval(t.p_holm), "–" if c is None else _mdd(c)])
    return lines + table(["model", *(f"T={k}" for k in temps),
                          "highest − lowest points [95% CI]", "tasks up : down", "p (Holm)",
                          "MDD (points)"], rows)


def part_a_section(s: AnalysisSummary) -> list[str]:
    lines = ["## Part A: agent reliability", "",
             f"{s.n_trials} trials. Accuracy counts {s.capability_scope}. {DESIGN_NOTE} "
             "Every fact in the world is invented: a right answer that no successful tool "
             "result supports is *ungrounded*, shown beside accuracy and never counted as a "
             "success.", ""]
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
                  "temperature effects), the paired t interval of the mean difference, and "
                  "the minimum detectable difference (MDD: two-sided α 0.05 before Holm, "
                  "power 0.8, paired t on the per-task differences, their sd from the data; "
                  "none when every task differs by the same amount, where the interval is an "
                  "exact bound instead).", ""]
        lines += table(COMPARISON_HEAD, [_comparison_row(p) for p in s.pairwise])
    if s.notes:
        lines += ["Notes from the analysis:", ""] + [f"- {n}" for n in s.notes] + [""]
    return lines


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
    return lines


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


def part_b_section(m: MatrixRun, block: int = 0, blocks: int = 1) -> list[str]:
    title = "## Part B: micro-task eligibility"
    if blocks > 1:
        title += f", block {block + 1} of {blocks} ({', '.join(short(x) for x in m.models)})"
    lines = [title, "",
             f"{', '.join(f'{t} {len(ids)}' for t, ids in m.items.items())} eval items "
             f"(seed {m.seed}, stratified by gold class). {RULE_TEXT}", ""]
    rows = []
    deciding = deciding_metrics(m.cells)
    for c in sorted(m.cells, key=lambda c: (c.task, c.metric, c.model, c.prompt_id, c.reading)):
        n = str(c.n_items) if c.n_split is None else f"{c.n_items}/{c.n_split}"
        rows.append([c.task, c.metric, short(c.model), c.prompt_id, c.reading, n,
                     c.interval_label, c.score.formatted(percent=False, digits=3),
                     c.tau_text, c.diff_text, verdict_text(c, deciding[c.task] == c.metric),
                     "**yes**" if c.eligible else "no", family_text(c), family_verdict(c)])
    lines += table(["task", "metric", "model", "prompt", "reading", "n read", "interval",
                    "score [95%]", "τ (anchor, fixed)",
                    "vs τ-baseline on the n items read [95%]", "verdict", "eligible (cell)",
                    "Holm p (family)", "eligible (family-wise)"], rows)
    lines += [family_headline(m.cells) + ".", ""]
    if m.by_prompt:
        lines += table(["prompt", "eligible (cell)", "eligible (family-wise)", "configurations"],
                       [[p.prompt_id, str(p.eligible), str(p.family_eligible), str(p.total)]
                        for p in m.by_prompt])
    if m.tau_sweep:
        lines += ["τ sweep (eligible configurations, cell by cell on the interval that applies, "
                  "when τ is set to each anchor; no family-wise correction):", ""]
        lines += table(["τ anchor", "eligible", "configurations"],
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


def _humaneval(found: Sequence[HumanEvalSummary]) -> list[str]:
    if not found:
        return []
    rows = []
    for s in found:
        c = s.comparison
        where = "–"
        if c is not None:
            est = s.pass_at_1
            where = ("inside" if c.inside else "above" if est.high is not None
                     and c.published > est.high else "below")
        rows.append([short(s.model), str(s.n), str(s.passed), pct(s.pass_at_1),
                     "–" if c is None else f"{100 * c.published:.1f}", where])
    head = ["model", "problems", "passed", "pass@1 % [95% CI]", "published %",
            "published vs our interval"]
    return ["## HumanEval (greedy, Q4_K_M GGUF) against the published table", "",
            "Published: Qwen2.5-Coder technical report, instruct models, pass@1, bf16, "
            "greedy. Details per problem: docs/results/humaneval.md.", "", *table(head, rows)]


def _figures(f: StudyFacts) -> list[str]:
    if not f.figures:
        return []
    lines = ["## Figures", ""]
    if f.html_report:
        lines += [f"Interactive report with every trial: [{f.html_report}]({f.html_report}).",
                  ""]
    for name, rel in sorted(f.figures.items()):
        lines += [f"![{name}]({rel})", ""]
    return lines


def _best_is_decided(s: AnalysisSummary, best: str) -> str:
    """Whether the best point estimate is ahead of every other configuration: the pairs with
    it, paired by task (exact sign test across tasks, Holm over the page's comparisons)."""
    others = [p for a in s.accuracy if a.model != best and (p := s.pair(best, a.model))]
    if not others:
        return ""
    tied = [p for p in others if not p.differs]
    ahead = [p for p in others if p.differs and (p.comparison.mean_difference > 0) == (p.a == best)]
    if len(ahead) == len(others):
        worst = pval(max(p.p_holm for p in others))
        return ("; ahead of every other model (sign test across tasks, Holm p "
                f"{worst if worst.startswith('<') else '≤ ' + worst})")
    text = ""
    if ahead:
        text += "; ahead of " + ", ".join(f"{_other(p, best)} (Holm p {pval(p.p_holm)})"
                                         for p in ahead)
    if tied:
        text += "; cannot tell it from " + ", ".join(
            f"{_other(p, best)} (Holm p {pval(p.p_holm)}, "
            f"{p.comparison.a_ahead + p.comparison.b_ahead} of {p.tasks} shared tasks differ, "
            f"MDD {_mdd(p.comparison)} points)" for p in tied)
    return text


def _other(p: PairwiseComparison, best: str) -> str:
    return short(p.b if p.a == best else p.a)


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
    if s.pairwise:
        sig = [p for p in s.pairwise if p.differs]
        out.append(f"{len(sig)} of {len(s.pairwise)} model pairs differ (paired by task: exact "
                   "sign test across tasks, Holm over the page's comparisons)"
                   + (": " + "; ".join(_pair_line(p) for p in sig) if sig else "") + ".")
    for t in s.temperature:
        c = t.comparison
        if c is None or t.lowest is None or t.highest is None:
            continue
        lo, hi = (t.per_temperature[_temp(x)] for x in (t.lowest, t.highest))
        seen = (f"T={t.lowest:g} {pct(lo)}%, T={t.highest:g} {pct(hi)}%; paired by task "
                f"{pct(c.difference)} points, up on {c.a_ahead} task(s) and down on "
                f"{c.b_ahead}, Holm "
                f"p {pval(t.p_holm)}, MDD {_mdd(c)} points")
        changed = t.p_holm is not None and t.p_holm < 0.05
        same = t.equivalence
        if changed:
            out.append(f"{short(t.model)}: accuracy differs between its lowest and highest "
                       f"temperature ({seen}).")
        elif same is not None and same.equivalent:
            solved = [t.solved.get(_temp(x), 0) for x in (t.lowest, t.highest)]
            floor = (f" at its floor (it solves {solved[0]} and {solved[1]} tasks)"
                     if max(solved) < MIN_TASKS else "")
            out.append(f"{short(t.model)}{floor}: temperature changes its accuracy by less "
                       f"than {100 * same.margin:.0f} points (TOST p {pval(same.p_value)}; "
                       f"{seen}).")
        else:
            out.append(f"{short(t.model)}: cannot tell whether temperature changes its "
                       f"accuracy ({seen}"
                       + (f"; not shown within ±{100 * same.margin:.0f} points either, TOST "
                          f"p {pval(same.p_value)}" if same is not None else "") + ").")
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


def _seed_claims(f: StudyFacts) -> list[str]:

    rows = [[c.seed, c.claim, f"**{k.verdict}**", k.evidence] for c, k in check_claims(f)]
    return ["## What holds up from the seed studies", "",
            "Each claim of the two seed studies, checked against this study's numbers by the "
            "rule in `slmbench/report/seed_claims.py`. The seeds ran 1-9B models (Ollama, GPU; "
            "Qwen3 0.6-8B); the models here are smaller, so a claim that does not hold here "
            "may still hold at their sizes.", "",
            *table(["seed", "claim", "verdict", "here"], rows)]


def render_study_page(f: StudyFacts) -> str:
    lines = [f"# {f.name}", "",
             "Generated by `slmbench study` from the stored trials and readings; do not edit "
             "by hand.", "", "## Summary", ""]
    lines += [f"- {x}" for x in findings(f)] or ["- Nothing is stored yet."]
    lines.append("")
    lines += _seed_claims(f)
    lines += _reproduce(f) + _costs(f) + block_time_section(f)
    if f.summary is not None:
        lines += part_a_section(f.summary) + failures(f.summary, f.trials)
        lines += outcomes_per_task(f.trials)
    for i, m in enumerate(f.matrices):
        lines += part_b_section(m, i, len(f.matrices))
    lines += part_b_family(f)
    if f.recommendation is not None:
        lines += recommend_section(f.recommendation)
    lines += cascade_section(f.cascades)
    lines += published_part_a(f)
    lines += published_part_b(f)
    lines += _humaneval(f.humaneval) + _figures(f)
    return "\n".join(lines).rstrip() + "\n"


def readme_markers(page: str) -> tuple[str, str]:
    """The two lines a README puts around the generated block of the study page ``page``
    (``docs/results/reference-study.md``: ``<!-- study:reference-study -->`` ...)."""
    key = Path(page).stem
    return f"<!-- study:{key} -->", f"<!-- /study:{key} -->"


def readme_block(f: StudyFacts, *, page: str, command: str) -> str:
    """The README's results entry of a study, between its markers: the page's title, where the
    page is, its summary and each seed claim's verdict, from the facts the page is made of;
    ``command`` is the one that writes it again."""
    begin, end = readme_markers(page)
    claims = "; ".join(f"\"{c.claim.rstrip('.')}\" {k.verdict}" for c, k in check_claims(f))
    trials, readings = sum(c.trials for c in f.costs), sum(c.readings for c in f.costs)
    minutes = sum(c.trial_wall_s + (c.reading_wall_s or 0.0) for c in f.costs) / 60
    lines = [begin,
             f"- **{f.name}** ([`{page}`]({page}), made by `{f.command}`; this entry is "
             f"generated from the same stores by `{command}`, do not edit between the markers):",
             f"  - {trials:,} agent trials and {readings:,} micro-task readings stored, "
             f"{minutes:.0f} minutes of model time.",
             *(f"  - {x}" for x in findings(f) or ["Nothing is stored yet."]),
             f"  - The seed studies' claims against these numbers: {claims}.",
             end]
    return "\n".join(lines)


def relative(path: Path, start: Path) -> str:
    """``path`` relative to ``start`` (with ``..`` where needed), POSIX style."""
    import os

    return Path(os.path.relpath(path, start)).as_posix()


def group_costs(trials: Sequence[Trial], planned: Mapping[str, int],
                readings: Mapping[str, ReadingTally]) -> list[ModelCost]:
    """Per-model cost rows from stored trials and the tally of each model's readings (a model
    spec's configurations are one row: its cost)."""
    models = list(dict.fromkeys([*planned, *readings]))
    out = []
    for m in models:
        mine = [t for t in trials if spec_of(t.model) == m]
        r = readings.get(m, ReadingTally())
        out.append(ModelCost(
            model=m, trials=len(mine), trials_planned=planned.get(m, 0),
            trial_wall_s=sum(t.wall_s for t in mine),
            tokens=sum(t.prompt_tokens + t.completion_tokens for t in mine),
            readings=r.done, readings_planned=r.planned, reading_wall_s=r.seconds,
            reading_tokens=r.tokens, readings_with_tokens=r.with_tokens))
    return out
