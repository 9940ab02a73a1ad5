"""The backend-agreement page: one model through several runtimes, from stored runs alone.

:class:`AgreementFacts` is what the page is made of (``study.agree`` gathers it from the
agreement study's stores and writes it beside the page as JSON); :func:`agreement_markdown`
is pure: facts in, Markdown out. Every number is a field of an ``agents.agreement`` or
``microtasks.agreement`` record; intervals print through ``study_facts.pct``/``num``.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field

from slmbench.agents.agreement import RuntimePair
from slmbench.core.stats import Agreement, McNemarResult, TaskComparison
from slmbench.microtasks.agreement import ReadingAgreement
from slmbench.models.base import Message
from slmbench.report.study_facts import num, pct, pval, table
from slmbench.report.study_page import readme_markers

__all__ = ["AgreementFacts", "FloorA", "FloorB", "TemplateShown", "agreement_markdown",
           "agreement_readme_block"]

FACTS_VERSION = 1


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True)


class TemplateShown(_Frozen):
    """The prompt one runtime made of the page's fixed conversation (None: it cannot say)."""

    label: str
    text: str | None
    note: str | None = None


class FloorA(_Frozen):
    """A pair of runtimes' identical transcripts against the noise floor, paired by task."""

    cross: tuple[str, str]
    floor: tuple[str, str]
    comparison: TaskComparison


class FloorB(_Frozen):
    """A pair of runtimes' item agreement against the noise floor (McNemar, by item)."""

    task: str
    prompt_id: str
    cross: tuple[str, str]
    floor: tuple[str, str]
    test: McNemarResult


class AgreementFacts(_Frozen):
    """Everything the agreement page shows."""

    version: int = FACTS_VERSION
    title: str
    command: str
    created: str
    commit: str | None = None
    specs: list[str]
    floor: list[str] = Field(default_factory=list)  # how each noise-floor side was set
    margin: float
    suite: str
    conversation: list[Message]
    templates: list[TemplateShown]
    part_a: list[RuntimePair] = Field(default_factory=list)
    part_a_floor: list[RuntimePair] = Field(default_factory=list)
    part_a_beyond: list[FloorA] = Field(default_factory=list)
    part_b: list[ReadingAgreement] = Field(default_factory=list)
    part_b_floor: list[ReadingAgreement] = Field(default_factory=list)
    part_b_beyond: list[FloorB] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)


VERDICT = {"equivalent": "**equivalent within ±{m:g} points**", "different": "**different**",
           "cannot tell": "cannot tell at this n",
           "both at the floor": "both at the floor: not comparable on success"}


def _templates(facts: AgreementFacts) -> list[str]:
    lines = ["## The chat template each runtime applied", "",
             "The prompt text each runtime made of one fixed conversation (a template or "
             "tokenizer mismatch is the commonest cause of disagreement):", ""]
    first = next((t for t in facts.templates if t.text is not None), None)
    for t in facts.templates:
        if t.text is None:
            lines += [f"- `{t.label}`: not shown ({t.note or 'the runtime does not say'})"]
        elif first is not None and t is not first and t.text == first.text:
            lines += [f"- `{t.label}`: the same text as `{first.label}`"]
        elif first is not None and t is not first:
            diff = difflib.unified_diff((first.text or "").splitlines(), t.text.splitlines(),
                                        first.label, t.label, lineterm="")
            lines += [f"- `{t.label}`: **differs** from `{first.label}`:", "", "```diff",
                      *diff, "```"]
        else:
            lines += [f"- `{t.label}`:", "", "```text", *t.text.splitlines(), "```"]
    return [*lines, ""]


def _with_floor(facts: AgreementFacts, header: Sequence[str], rows: list[list[str]],
                floor: list[list[str]]) -> list[str]:
    """The table across runtimes, then (when read) the same table within one runtime."""
    lines = table(header, rows)
    if floor:
        lines += ["Within one runtime (the noise floor: " + "; ".join(facts.floor) + "):", "",
                  *table(header, floor)]
    return lines


def _verdict(p: RuntimePair) -> str:
    return VERDICT[p.verdict].format(m=p.margin * 100)


def _a_rows(pairs: Sequence[RuntimePair]) -> list[list[str]]:
    return [[f"`{p.a}`", f"`{p.b}`", f"{p.pairs} ({p.identical.tasks} tasks)",
             str(p.excluded), pct(p.identical), pct(p.same_outcome), pct(p.success_a),
             pct(p.success_b), pct(p.by_task.difference),
             "–" if p.by_task.mdd is None else f"{100 * p.by_task.mdd:.1f}",
             _tost(p), pval(p.p_holm), _verdict(p)] for p in pairs]


def _tost(p: RuntimePair) -> str:
    """The TOST's p, its Holm p over the pairs, and its interval
    (``0.038, Holm 0.115 [-9.2, 9.2]``)."""
    e = p.equivalence
    held = ("" if p.equivalence_p_holm is None else f", Holm {pval(p.equivalence_p_holm)}"
            ) if not p.at_floor else ", no claim (both at the floor)"
    return pval(e.p_value) + held + ("" if e.interval is None else
                                     " " + e.formatted_interval(level=False))


A_HEADER = ("a", "b", "paired trials", "excluded", "identical transcripts % [95% CI]",
            "same outcome %", "success a %", "success b %", "a − b by task, points [95% CI]",
            "MDD (points)", "TOST p, Holm [90% CI, points]", "sign test p (Holm)",
            "verdict")


def _part_a(facts: AgreementFacts) -> list[str]:
    if not facts.part_a:
        return []
    lines = ["## Part A: the agent, at T = 0", "",
             f"The {facts.suite} suite, greedy (a seed does not carry across runtimes, so "
             "sampled transcripts are not comparable), paired trial by trial. Rates are "
             "task-level (a task's variants are correlated); the verdict is the TOST of "
             f"equivalence within ±{facts.margin * 100:g} points on per-task success "
             "differences (its 90% interval: the hull of the paired t and the bounded-mean "
             "posterior, or the exact bound where no task differs), equivalent when its p is "
             "under "
             "0.05 after Holm over every pair on this page, noise floors included (each "
             "pair's verdict is a claim of its own: with three pairs, two runtimes that never "
             "differ need 39 tasks at ±10 points), else "
             "*different* where the sign test across tasks "
             "rejects no "
             "difference (Holm over the pairs), else *cannot tell* with the design's minimum "
             "detectable difference (MDD, 80% power). Where neither runtime solves 3 tasks, "
             "the pair reads *both at the floor: not comparable on success* (two floors are "
             "within any margin once there are tasks enough, however differently they fail): "
             "no claim of equivalence, and not one of the TOSTs' family. The TOSTs and the "
             "sign tests are two Holm families, each at 5%.", ""]
    lines += _with_floor(facts, A_HEADER, _a_rows(facts.part_a), _a_rows(facts.part_a_floor))
    for f in facts.part_a_beyond:
        c = f.comparison
        lines += [f"- `{f.cross[0]}` / `{f.cross[1]}` against the floor `{f.floor[0]}` / "
                  f"`{f.floor[1]}`: identical transcripts, floor − across by task "
                  f"{pct(c.difference)} (sign test p {pval(c.sign_test.p_value)}, "
                  f"{c.a_ahead} tasks more often identical within, {c.b_ahead} across)"]
    return [*lines, ""] if facts.part_a_beyond else lines


def _agreement(a: Agreement | None) -> tuple[str, str]:
    if a is None:
        return "–", "–"
    return f"{a.agreed}/{a.n} = {pct(a.share)}", num(a.kappa)


B_HEADER = ("a", "b", "task", "prompt", "items", "decisions agreed, % [95% CI]",
            "κ [95% CI]", "log-prob decisions agreed, %", "κ (log-prob)",
            "log-prob difference (nats): median / p95 / max", "verdicts (gen, lp)")


def _verdicts(r: ReadingAgreement) -> str:
    shown = {True: "same", False: "**differ**", None: "not both decided"}
    return ", ".join(f"{v.reading}: {shown[v.same]}" for v in r.verdicts) or "–"


def _b_rows(rows: Sequence[ReadingAgreement]) -> list[list[str]]:
    out = []
    for r in rows:
        gen, gen_k = _agreement(r.decisions)
        lp, lp_k = _agreement(r.logprob_decisions)
        spread = "–" if r.logprobs is None else (
            f"{r.logprobs.median:.3f} / {r.logprobs.p95:.3f} / {r.logprobs.maximum:.3f}")
        out.append([f"`{r.a}`", f"`{r.b}`", r.task, r.prompt_id, str(r.items), gen, gen_k, lp,
                    lp_k, spread, _verdicts(r)])
    return out


def _part_b(facts: AgreementFacts) -> list[str]:
    if not facts.part_b:
        return []
    lines = ["## Part B: the micro-tasks, item by item", "",
             "Every chosen item read on every runtime (fixed n): the decision (top option; a "
             "format failure is an answer of its own) compared item by item, Cohen's κ with a "
             "paired bootstrap interval (none where no item disagreed: read the share); "
             "log-probabilities (nats, every option of every item) only where both runtimes "
             "give them; cell verdicts compared only where both cells decided.", ""]
    lines += _with_floor(facts, B_HEADER, _b_rows(facts.part_b), _b_rows(facts.part_b_floor))
    for f in facts.part_b_beyond:
        t = f.test
        lines += [f"- {f.task} · {f.prompt_id}: `{f.cross[0]}` / `{f.cross[1]}` against the "
                  f"floor `{f.floor[0]}` / `{f.floor[1]}`: {t.only_a} items agreed within the "
                  f"floor only, {t.only_b} across only (McNemar p {pval(t.p_value)})"]
    return [*lines, ""] if facts.part_b_beyond else lines


def agreement_markdown(facts: AgreementFacts) -> str:
    """The page: the command, the templates first, then Part A and Part B per pair of
    runtimes, each beside its noise floor, then the notes."""
    lines = [f"# {facts.title}", "", "Generated from the agreement study's stores by (run "
             "again, it loads no model when everything is stored):", "", "```bash",
             facts.command, "```", "",
             f"Made {facts.created}" + (f" from commit `{facts.commit}`" if facts.commit
                                        else "") + ". Runtimes: "
             + ", ".join(f"`{s}`" for s in facts.specs) + ".", ""]
    lines += _templates(facts) + _part_a(facts) + _part_b(facts)
    if facts.notes:
        lines += ["## Notes", "", *[f"- {n}" for n in facts.notes], ""]
    return "\n".join(lines).rstrip() + "\n"


def agreement_readme_block(facts: AgreementFacts, *, page: str, command: str) -> str:
    """The README's entry of an agreement page, between its markers (as a study page's,
    :func:`~slmbench.report.study_page.readme_markers`): where the page is, then each
    cross-runtime pair's Part A verdict and Part B decision agreement, from ``facts`` (the
    page's own); ``command`` is the one that writes it again."""
    begin, end = readme_markers(page)
    lines = [begin,
             f"- **{facts.title}** ([`{page}`]({page}), made by `{facts.command}`; this entry is "
             f"generated from the same stores by `{command}`, do not edit between the markers):"]
    lines += [f"  - Part A ({facts.suite}, T 0, {p.pairs} paired trials): `{p.a}` against "
              f"`{p.b}`: {_verdict(p)} (TOST p {_tost(p)} points; "
              f"success {pct(p.success_a)}% against "
              f"{pct(p.success_b)}%); the same outcome in {pct(p.same_outcome)}%, identical "
              f"transcripts in {pct(p.identical)}%." for p in facts.part_a]
    for r in facts.part_b:
        agreed, kappa = _agreement(r.decisions)
        lines.append(f"  - Part B {r.task} · {r.prompt_id} ({r.items} items): `{r.a}` against "
                     f"`{r.b}`: decisions agree on {agreed}%, κ {kappa}; cell verdicts: "
                     f"{_verdicts(r)}.")
    if not facts.part_a and not facts.part_b:
        lines.append("  - Nothing is compared yet: not every runtime's trials or readings are "
                     "stored.")
    return "\n".join([*lines, end])
