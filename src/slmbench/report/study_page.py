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

from collections.abc import Sequence
from pathlib import Path

from slmbench.agents.humaneval import Summary as HumanEvalSummary
from slmbench.agents.ladder_rates import split
from slmbench.report.cascade_page import cascade_section
from slmbench.report.findings import findings
from slmbench.report.funnel_section import funnel_section
from slmbench.report.ladder_section import ladder_section
from slmbench.report.parta import failures, outcomes_per_task, part_a_section
from slmbench.report.partb import (
    part_b_family,
    part_b_section,
    recommend_section,
)
from slmbench.report.published import published_part_a, published_part_b
from slmbench.report.seed_claims import check_claims
from slmbench.report.since import (
    page_verdicts,
    rescored_section,
    rule_moves_section,
    since_section,
)
from slmbench.report.study_facts import (
    StudyFacts,
    pct,
    short,
    table,
)

__all__ = ["block_time_section", "readme_block", "readme_markers", "relative",
           "render_study_page"]

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


def _seed_claims(f: StudyFacts) -> list[str]:

    rows = [[c.seed, c.claim, f"**{k.verdict}**" + (f": {k.scope}" if k.scope else ""),
             k.evidence] for c, k in check_claims(f)]
    return ["## What holds up from the seed studies", "",
            "Each claim of the two seed studies, checked against this study's numbers by the "
            "rule in `slmbench/report/seed_claims.py`. The seeds ran 1-9B models (Ollama, GPU; "
            "Qwen3 0.6-8B); the models here are smaller, so a claim that does not hold here "
            "may still hold at their sizes. A claim of an effect of a stated size (the "
            "temperature drop) is tested one-sided at that size (`slmbench/report/"
            "sized_claims.py`), and the claims that state a size are one Holm family (5%); "
            "where the data exclude only part of the size, the verdict says which part.", "",
            *table(["seed", "claim", "verdict", "here"], rows)]


def render_study_page(f: StudyFacts) -> str:
    lines = [f"# {f.name}", "",
             "Generated by `slmbench study` from the stored trials and readings; do not edit "
             "by hand.", "", "## Summary", ""]
    lines += [f"- {x}" for x in findings(f)] or ["- Nothing is stored yet."]
    lines.append("")
    lines += _seed_claims(f)
    if f.previous is not None and f.previous_link is not None:
        lines += since_section(f.previous, page_verdicts(f), link=f.previous_link)
    lines += rule_moves_section(f.rule_moves) if f.rule_moves is not None else []
    lines += rescored_section(f.rescored) if f.rescored is not None else []
    lines += _reproduce(f) + _costs(f) + block_time_section(f)
    if f.summary is not None:
        base, _ = split(f.trials)  # a generated level's trials feed the ladder only
        lines += part_a_section(f.summary, base) + failures(f.summary, base)
        lines += outcomes_per_task(base)
        lines += funnel_section(f.summary, f.figures.get("stage_funnel"))
        lines += ladder_section(f.summary, f.figures.get("level_ladder"))
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
    claims = "; ".join(f"\"{c.claim.rstrip('.')}\" {k.stated}" for c, k in check_claims(f))
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


