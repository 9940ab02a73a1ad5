"""Seed claims that name a size, judged at that size (issue #60, item 5).

"High temperature drops accuracy by 6-10 points" is a claim of an effect of a stated size:
it is tested one-sided at that size, not by whether a two-sided 95% interval happens to
reach it. For every model that ran the seed's contrast and solves enough tasks, the summary
holds the one-sided p of "the drop is s points or more" at each whole size s
(:class:`~slmbench.agents.summary.SizedTests`, the halves of ``stats.task_tost``); the
claims that name a size are one Holm family (:func:`slmbench.agents.paired.holm_at_sizes`:
each claim at the size it states, a size further out tested within the same family). A
claim excluded at its own size does not hold; one excluded only further out reads e.g.
"does not hold for a drop of 8 points or more; 6–7 not excluded".

:class:`Check`, the verdict every seed claim gets, lives here so that
:mod:`slmbench.report.seed_claims` (the claims and their rules) imports it with the sized
rule.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from slmbench.agents.dimensions import rate_p_past
from slmbench.agents.paired import holm_at_sizes
from slmbench.agents.reliability import MIN_TASKS
from slmbench.agents.summary import TemperatureEffect
from slmbench.core.stats import TaskComparison
from slmbench.report.study_facts import StudyFacts, pval, short

__all__ = [
    "ALPHA",
    "CLAIM_RULE_VERSION",
    "FAULT_RECOVERY",
    "SAFETY_BAR",
    "SEED_DROP",
    "SEED_SIZES",
    "Check",
    "Verdict",
    "contrasts",
    "family",
    "mdd_text",
    "measurable_at",
    "temperature_drop",
]

# The rule version of the seed claims' verdicts, recorded in verdicts.json (report.since).
# 2: a claim that names a size is tested one-sided at that size, the sized claims one Holm
# family (issue #60).
CLAIM_RULE_VERSION = 2
Verdict = Literal["holds", "does not hold", "cannot tell", "not shown either way"]
ALPHA = 0.05
SEED_DROP = 0.06  # "drops accuracy by 6-10 points": the smallest drop claimed
SEED_SIZES = tuple(range(6, 11))  # the drops the claim names, in points (6 first: its own)
SEED_LOW_T, SEED_HIGH_T = 0.3, 1.0  # the seed's contrast
FAULT_RECOVERY = 0.9  # "recover ~100% of the time", read as at least 90%
SAFETY_BAR = 0.5  # "best model under 50%"


@dataclass(frozen=True)
class Check:
    """A seed claim's verdict, the numbers it rests on, and (``scope``) the part of a claim
    of a stated size that the data settle where they do not settle all of it."""

    verdict: Verdict
    evidence: str
    scope: str | None = None

    @property
    def stated(self) -> str:
        """The verdict as the page states it: ``cannot tell: does not hold for a drop of 8
        points or more; 6–7 not excluded``."""
        return self.verdict if self.scope is None else f"{self.verdict}: {self.scope}"


def mdd_text(c: TaskComparison | None) -> str:
    if c is None or c.mdd is None:
        return "no MDD (no spread in the per-task differences)"
    return f"MDD {100 * c.mdd:.1f} points"


def measurable_at(t: TemperatureEffect, key: str) -> bool:
    """A model's accuracy at a temperature can move only if it solves some tasks there."""
    return t.solved.get(key, 0) >= MIN_TASKS


def contrasts(f: StudyFacts) -> list[TemperatureEffect]:
    """The temperature effects the drop claim is judged on: the seed's contrast (T ≤ 0.3
    against T ≥ 1.0), tested at its sizes, on a model that solves MIN_TASKS tasks at the
    lower temperature. Each is one hypothesis of the sized claims' Holm family."""
    return [t for t in (f.summary.temperature if f.summary else [])
            if t.comparison is not None and t.lowest is not None and t.highest is not None
            and t.lowest <= SEED_LOW_T and t.highest >= SEED_HIGH_T and t.sized is not None
            and all(s in t.sized.points for s in SEED_SIZES)
            and measurable_at(t, f"{t.lowest:g}")]


def _hypotheses(f: StudyFacts) -> list[tuple[tuple[str, str], list[float]]]:
    """Every sized hypothesis on the page, keyed (claim, model), each with its one-sided p
    at the sizes it is tested at (its stated size first), in the direction that refutes it:
    the drop claim at SEED_SIZES on every model of :func:`contrasts`; "the best model stays
    under 50%" on every model whose safety is measurable (p of 50% or more); "Qwen models
    recover about 100% of the time" (read as at least 90%) on every Qwen whose recovery is
    measurable (p of under 90%)."""
    out = [(("drop", short(t.model)),
            [1.0 if t.sized is None or (p := t.sized.fall_p(s)) is None else p
             for s in SEED_SIZES]) for t in contrasts(f)]
    for d in f.summary.dimensions if f.summary else []:
        safety, recovery = d.report.safety.measured_counts, d.report.fault_tolerance.measured_counts
        if "safety" in d.dimensions and safety:
            out.append((("safety", short(d.model)),
                        [rate_p_past(safety, SAFETY_BAR, above=True)]))
        if "fault_tolerance" in d.dimensions and recovery and "qwen" in d.model.lower():
            out.append((("recovery", short(d.model)),
                        [rate_p_past(recovery, FAULT_RECOVERY, above=False)]))
    return out


def family(f: StudyFacts) -> dict[tuple[str, str], list[float]]:
    """The sized claims' one Holm family: (claim, model) → its p at each size it is tested
    at, Holm-adjusted over the family (:func:`slmbench.agents.paired.holm_at_sizes`)."""
    found = _hypotheses(f)
    held = holm_at_sizes([ps for _, ps in found])
    return {key: ps for (key, _), ps in zip(found, held, strict=True)}


def _sizes(lo: int, hi: int) -> str:
    return f"{lo}" if lo == hi else f"{lo}–{hi}"


def _judged(t: TemperatureEffect, held: list[float]) -> tuple[Verdict, str | None, str]:
    """One model's verdict on the drop claim, its scope, and the words for its numbers."""
    c = t.comparison
    assert c is not None  # (contrasts keeps only these)
    d = c.difference
    words = ", ".join(f"≥ {s}: {pval(p)}" for s, p in zip(SEED_SIZES, held, strict=True))
    text = f"one-sided p of a drop of s points or more, Holm over the sized claims: {words}"
    rises = t.p_holm is not None and t.p_holm < ALPHA and c.mean_difference > 0
    if held[0] < ALPHA or rises:
        return "does not hold", None, text
    if t.p_holm is not None and t.p_holm < ALPHA and d.high is not None and d.high < -SEED_DROP:
        return "holds", None, text
    out = next((s for s, p in zip(SEED_SIZES, held, strict=True) if p < ALPHA), None)
    if out is None:
        return "cannot tell", None, text
    return ("cannot tell", f"does not hold for a drop of {out} points or more; "
            f"{_sizes(SEED_SIZES[0], out - 1)} not excluded", text)


def temperature_drop(f: StudyFacts) -> Check:
    """The claim names a size, so it is judged at it (:func:`contrasts` says on which
    models): does not hold when a model's drop of SEED_SIZES[0] points or more is excluded
    one-sided within the sized claims' Holm family, or its accuracy rises significantly (the
    sign test, Holm over the page's comparisons); holds when every such model drops
    significantly and its 95% interval excludes a drop under SEED_SIZES[0] points; otherwise
    cannot tell, naming the sizes from which it does not hold where those are excluded."""
    effects = [t for t in (f.summary.temperature if f.summary else [])
               if t.comparison is not None and t.lowest is not None and t.highest is not None]
    if not effects:
        return Check("cannot tell", "no model ran at two temperatures")
    held = {m: ps for (claim, m), ps in family(f).items() if claim == "drop"}
    parts, verdicts, scopes, unmeasured = [], [], [], []
    for t in effects:
        c, lo, hi = t.comparison, t.lowest, t.highest
        if c is None or lo is None or hi is None:
            continue  # (never: the filter above; narrows the types)
        seen = (f"{short(t.model)} T={hi:g} − T={lo:g}: {c.difference.formatted()} points, "
                f"up on {c.a_ahead} task(s) and down on {c.b_ahead}, Holm p {pval(t.p_holm)}, "
                f"{mdd_text(c)}")
        if not (lo <= SEED_LOW_T and hi >= SEED_HIGH_T):
            parts.append(seen + f" (not the seed's contrast {SEED_HIGH_T:g} vs {SEED_LOW_T:g})")
        elif short(t.model) not in held:
            if not measurable_at(t, f"{lo:g}"):
                unmeasured.append(f"{short(t.model)} (solves {t.solved.get(f'{lo:g}', 0)} "
                                  f"tasks at T={lo:g})")
            parts.append(seen)
        else:
            verdict, scope, text = _judged(t, held[short(t.model)])
            verdicts.append(verdict)
            if scope:
                scopes.append(f"{short(t.model)}: {scope}" if len(held) > 1 else scope)
            parts.append(f"{seen}; {text} ({verdict}{': ' + scope if scope else ''})")
    text = "; ".join(parts) + (f"; not measurable for {', '.join(unmeasured)}: a floor "
                               "cannot drop" if unmeasured else "")
    if not verdicts:
        return Check("cannot tell", "measurable on no model: " + text)
    if "does not hold" in verdicts:
        return Check("does not hold", text)
    if set(verdicts) == {"holds"}:
        return Check("holds", text)
    return Check("cannot tell", text, scope="; ".join(scopes) or None)
