"""The seed studies' headline claims, each checked against a study's own numbers.

A study page sets every claim the two seed studies make (the agent-reliability
study over nine Ollama models, and the micro-task eligibility study over Qwen3)
beside what the study measured, with one of three verdicts:

* ``holds`` - our numbers agree, by the rule written in the check;
* ``does not hold`` - our numbers contradict it (an interval excludes it, or a
  significant effect points the other way);
* ``cannot tell`` - our study cannot test it (too few models, no sweep, or the
  dimension is not measurable on any model) or the interval is too wide to decide;
* ``not shown either way`` - a claim of no effect that neither an equivalence test nor a
  significant effect settles; the evidence gives the minimum detectable difference.

Part A claims are decided at the task level (issue #37): "holds" needs an affirmative
task-level test on the models where the claim is measurable, and those models are named; a
dimension that is not measurable for a model (its precondition holds on fewer than 3 tasks)
never decides a claim, and the evidence says so.

Each check is a small function of :class:`~slmbench.report.study_facts.StudyFacts`
so that the verdict is derived from the page's numbers, never typed. The seeds
ran 1-9B models on a GPU; our packaged models are 0.1-1.5B, which every check's
evidence keeps in view.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass

from slmbench.agents.reliability import MIN_TASKS
from slmbench.agents.summary import PairwiseComparison
from slmbench.core.stats import Estimate
from slmbench.microtasks.cells import EligibilityCell
from slmbench.microtasks.eligibility import deciding_metrics
from slmbench.report.sized_claims import (
    ALPHA,
    FAULT_RECOVERY,
    SAFETY_BAR,
    Check,
    Verdict,
    family,
    mdd_text,
    measurable_at,
    temperature_drop,
)
from slmbench.report.study_facts import StudyFacts, pval, short

__all__ = ["CLAIMS", "SeedClaim", "check_claims"]



@dataclass(frozen=True)
class SeedClaim:
    seed: str
    claim: str
    check: Callable[[StudyFacts], Check]


def _dimension(f: StudyFacts, dim: str) -> list[tuple[str, Estimate]]:
    """(model, estimate) of one reliability dimension, where it and its interval are defined."""
    if f.summary is None:
        return []
    return [(short(d.model), e) for d in f.summary.dimensions
            if (e := d.dimensions.get(dim)) is not None and e.low is not None
            and e.high is not None and e.estimate is not None]


def _listed(rows: list[tuple[str, Estimate]]) -> str:
    return "; ".join(f"{m} {e.formatted(percent=False)}" for m, e in rows)


def _unmeasured(f: StudyFacts, dim: str) -> str:
    """``; not measurable for X (why), Y (why)`` for the models where ``dim`` is not."""
    rows = [(short(d.model), d.not_measurable[dim]) for d in (f.summary.dimensions
                                                               if f.summary else [])
            if dim in d.not_measurable]
    if not rows:
        return ""
    return "; not measurable for " + ", ".join(
        f"{m} ({why.removeprefix('not measurable: ')})" for m, why in rows)


def _order(p: PairwiseComparison) -> str:
    """``>`` or ``<`` when the sign test across tasks decides the pair (Holm), else ``?``."""
    if not p.differs:
        return "?"
    return ">" if p.comparison.mean_difference > 0 else "<"


def temperature_ranking(f: StudyFacts) -> Check:
    """A claim of no effect, decided pair by pair, paired by task at each temperature both
    models ran, on the models that solve at least 3 tasks at each of those temperatures: does
    not hold when a pair's order is decided both ways; holds when every pair's order is
    decided the same way at every temperature; otherwise not shown either way (with each
    open comparison's MDD)."""
    s = f.summary
    swept = {t.model: t for t in (s.temperature if s else []) if t.comparison is not None}
    if s is None or len(swept) < 2:
        return Check("cannot tell", f"{len(swept)} model(s) ran at more than one temperature: "
                                    "a ranking needs two")
    temps = sorted(set.intersection(*(set(t.per_temperature) for t in swept.values())),
                   key=float)
    if len(temps) < 2:
        return Check("cannot tell", "no two temperatures that every swept model ran")
    measurable = sorted(m for m, t in swept.items() if all(measurable_at(t, k) for k in temps))
    floors = [f"{short(m)} (solves {', '.join(str(swept[m].solved.get(k, 0)) for k in temps)}"
              f" tasks at T={', '.join(temps)})" for m in sorted(set(swept) - set(measurable))]
    below = (f"; not measurable for {', '.join(floors)}: fewer than {MIN_TASKS} tasks solved"
             if floors else "")
    if len(measurable) < 2:
        return Check("cannot tell", f"measurable on {len(measurable)} model(s)"
                     + (f" ({', '.join(short(m) for m in measurable)})" if measurable else "")
                     + ": a ranking needs two" + below)
    parts, flipped, open_pairs = [], [], []
    for a, b in itertools.combinations(measurable, 2):
        at = {p.temperatures[0]: p for p in s.by_temperature
              if {p.a, p.b} == {a, b} and p.temperatures and p.temperatures[0] in temps}
        orders = [_order(at[k]) if at[k].a == a else _order(at[k]).translate(
            str.maketrans("<>", "><")) for k in temps if k in at]
        pair = f"{short(a)} vs {short(b)}"
        parts.append(f"{pair}: " + ", ".join(
            f"{o} at T={k} ({mdd_text(at[k].comparison)})" for o, k in
            zip(orders, [k for k in temps if k in at], strict=True)))
        if {">", "<"} <= set(orders):
            flipped.append(pair)
        elif "?" in orders or len(orders) < len(temps):
            open_pairs.append(pair)
    text = ("; ".join(parts) + " (> or <: the sign test across tasks decides the order, "
            "Holm over every pair at every temperature; ?: it does not)" + below)
    if flipped:
        return Check("does not hold", f"the order flips for {', '.join(flipped)}: {text}")
    if open_pairs:
        return Check("not shown either way", f"undecided for {', '.join(open_pairs)}: {text}")
    return Check("holds", f"on {', '.join(short(m) for m in measurable)}: {text}")


def _sized(f: StudyFacts, claim: str, models: list[str], words: str) -> tuple[list[str], str]:
    """The models whose one-sided p (Holm over the sized claims) refutes ``claim`` at its
    size, and the words for those p-values."""
    held = family(f)
    ps = [(m, held[(claim, m)][0]) for m in models if (claim, m) in held]
    return ([m for m, p in ps if p < ALPHA],
            f"; one-sided p of {words}, Holm over the sized claims: "
            + ", ".join(f"{m} {pval(p)}" for m, p in ps) if ps else "")


def safety_poor(f: StudyFacts) -> Check:
    """A claim of a stated size (issue #60): does not hold when a model's safety is shown at
    50% or more, one-sided within the sized claims' Holm family; holds when every
    measurable model's 95% interval lies below 50%; otherwise cannot tell."""
    rows = _dimension(f, "safety")
    if not rows:
        return Check("cannot tell", "safety is measurable on no model"
                     + (_unmeasured(f, "safety") or ": no safety trials stored"))
    over, sized = _sized(f, "safety", [m for m, _ in rows], f"{SAFETY_BAR:.0%} or more")
    text = (_listed(rows) + " (success among the trials that reached a decision)" + sized
            + _unmeasured(f, "safety"))
    if all(e.high < SAFETY_BAR for _, e in rows):  # type: ignore[operator]
        return Check("holds", f"every measurable model's interval is below {SAFETY_BAR:.2f}: "
                              f"{text}")
    if over:
        return Check("does not hold", f"shown at {SAFETY_BAR:.0%} or more for "
                                      f"{', '.join(over)}: {text}")
    return Check("cannot tell", f"intervals reach across {SAFETY_BAR:.2f}: {text}")


def _lowest_here(rob: Estimate, others: list[Estimate]) -> Verdict:
    """Is robustness below every other dimension, by their intervals?"""
    if all(rob.high < o.low for o in others):  # type: ignore[operator]
        return "holds"
    if any(o.high < rob.low for o in others):  # type: ignore[operator]
        return "does not hold"
    return "cannot tell"


def robustness_lowest(f: StudyFacts) -> Check:
    dims = ("consistency", "robustness", "fault_tolerance", "safety")
    per: dict[str, dict[str, Estimate]] = {}
    for d in dims:
        for m, e in _dimension(f, d):
            per.setdefault(m, {})[d] = e
    rows = {m: ds for m, ds in per.items() if "robustness" in ds and len(ds) >= 2}
    if not rows:
        return Check("cannot tell", "no model where robustness and another dimension are "
                                    "measurable" + _unmeasured(f, "robustness"))
    verdicts = {m: _lowest_here(ds["robustness"], [e for d, e in ds.items() if d != "robustness"])
                for m, ds in rows.items()}
    text = "; ".join(f"{m}: " + ", ".join(f"{d} {e.formatted(percent=False)}"
                                          for d, e in ds.items()) + f" ({verdicts[m]})"
                     for m, ds in sorted(rows.items()))
    text += _unmeasured(f, "robustness")
    if all(v == "holds" for v in verdicts.values()):
        return Check("holds", f"robustness's interval lies below every other's: {text}")
    if any(v == "does not hold" for v in verdicts.values()):
        return Check("does not hold", f"another dimension's interval lies below robustness's: "
                                      f"{text}")
    return Check("cannot tell", f"the intervals overlap: {text}")


def qwen_recover(f: StudyFacts) -> Check:
    """A claim of a stated size (read as at least 90%; issue #60): does not hold when a Qwen
    model's recovery is shown under 90%, one-sided within the sized claims' Holm family;
    holds when every such interval lies at or above 90%; otherwise cannot tell."""
    rows = [r for r in _dimension(f, "fault_tolerance") if "qwen" in r[0].lower()]
    if not rows:
        return Check("cannot tell", "recovery is measurable on no Qwen model"
                     + (_unmeasured(f, "fault_tolerance")
                        or ": no Qwen model's fault-recovery trials stored"))
    under, sized = _sized(f, "recovery", [m for m, _ in rows], f"under {FAULT_RECOVERY:.0%}")
    text = (_listed(rows) + " (recovery on the tasks solved unfaulted)" + sized
            + _unmeasured(f, "fault_tolerance"))
    if under:
        return Check("does not hold", f"shown under {FAULT_RECOVERY:.0%} for "
                                      f"{', '.join(under)}: {text} (the seed's Qwens were 7B)")
    if all(e.low >= FAULT_RECOVERY for _, e in rows):  # type: ignore[operator]
        return Check("holds", f"every interval lies at or above {FAULT_RECOVERY:.1f}: {text}")
    return Check("cannot tell", f"intervals reach across {FAULT_RECOVERY:.1f}: {text}")


def size_unrelated(f: StudyFacts) -> Check:
    rows = list(f.summary.size if f.summary else [])
    row = next((z for z in rows if z.metric == "composite" and z.spearman is not None),
               rows[0] if rows else None)
    n = len(row.models) if row else 0
    floor = 2 / math.factorial(n) if n else 1.0  # exact two-sided p of a perfect rank order
    if row is None or row.spearman is None or row.spearman.estimate is None or floor >= 0.05:
        return Check("cannot tell", f"{n} model(s) with a score and a size: even a perfect "
                                    f"rank order would give p ≥ {min(floor, 1.0):.2g}")
    sp = row.spearman
    text = (f"{row.metric}: Spearman ρ {sp.estimate:+.2f}, p {sp.p_value:.3g}, "
            f"{n} models")
    if sp.p_value is not None and sp.p_value < 0.05:
        return Check("does not hold", text)
    return Check("not shown either way", text + " (no significant relation; no equivalence "
                                                "test at this number of models)")


def none_eligible(f: StudyFacts) -> Check:
    """Does not hold when a configuration is eligible family-wise; holds when none is eligible
    cell by cell either and none is undecided with items left to read (the rule's final
    "not eligible", as for the rewording claim); otherwise cannot tell: eligible cell by cell
    but not after Holm means the seed's own per-cell rule and the family-wise rule disagree."""
    cells = [c for m in f.matrices for c in m.cells]
    if not cells:
        return Check("cannot tell", "no Part B configuration stored")
    deciding = deciding_metrics(cells)  # a secondary metric stops with the deciding one
    tested = [c for c in cells if c.metric == deciding[c.task]]
    good = [c for c in tested if _family_eligible(c)]
    lone = [c for c in tested if c.eligible and not _family_eligible(c)]
    open_ = [c for c in tested if c.verdict == "undecided" and not c.constant]
    models = sorted({short(c.model) for c in cells})
    text = (f"{len(good)} of {len(tested)} configurations of {', '.join(models)} eligible "
            "family-wise (Holm)" + (f": {'; '.join(_named(c) for c in good)}" if good else ""))
    if lone:
        text += (f"; {len(lone)} more eligible cell by cell only: "
                 + "; ".join(_named(c) for c in lone))
    if open_:
        text += (f"; {len(open_)} more undecided (n = "
                 f"{', '.join(str(n) for n in sorted({c.n_items for c in open_}))}): "
                 "not shown better than the baseline")
    if good:
        return Check("does not hold", text)
    unread = [c for c in open_ if c.undecided_with_items_left]
    if lone or unread:  # the two rules disagree, or reading on could still decide
        return Check("cannot tell", text + "; the claim holds family-wise but "
                     + ("not cell by cell" if lone else "cells could still be read on"))
    return Check("holds", text)


def _family_eligible(c: EligibilityCell) -> bool:
    """The verdict a claim states: family-wise (a cell of a matrix without one: its own)."""
    return c.eligible if c.family_eligible is None else c.family_eligible


def prompts_do_not_rescue(f: StudyFacts) -> Check:
    """Tested only on configurations (model, task, reading, deciding metric) whose frozen
    prompt p0 and at least one paraphrase were read: does rewording make one eligible
    (family-wise) where p0 is not? Only where p0 is settled not eligible by both rules: a p0
    eligible cell by cell but not after Holm (or undecided with items left) against a
    paraphrase eligible family-wise is cannot tell, not a rescue (as for ``none_eligible``,
    the seed's per-cell rule and the family-wise rule disagree there)."""
    cells = [c for m in f.matrices for c in m.cells]
    deciding = deciding_metrics(cells)
    groups: dict[tuple[str, str, str], list[EligibilityCell]] = {}
    for c in cells:
        if c.metric == deciding[c.task]:
            groups.setdefault((c.model, c.task, c.reading), []).append(c)
    paired = {k: g for k, g in groups.items()
              if any(c.prompt_id == "p0" for c in g) and any(c.prompt_id != "p0" for c in g)}
    if not paired:
        return Check("cannot tell", "no configuration has both p0 and a paraphrase read")
    rescued, unsure, contested = [], [], []
    for g in paired.values():
        base = [c for c in g if c.prompt_id == "p0"]
        if any(_family_eligible(c) for c in base):
            continue  # eligible already on p0: rewording cannot make it so
        base_open = any(c.eligible or c.undecided_with_items_left for c in base)
        for c in g:
            if c.prompt_id == "p0":
                continue
            if _family_eligible(c):
                (contested if base_open else rescued).append(c)
            elif c.eligible or c.undecided_with_items_left:
                unsure.append(c)
    prompts = sorted({c.prompt_id for g in paired.values() for c in g})
    text = (f"{len(paired)} configurations ({', '.join(sorted({short(m) for m, _, _ in paired}))}"
            f") read on p0 and a paraphrase ({', '.join(p for p in prompts if p != 'p0')}); "
            f"{len(rescued)} eligible family-wise on a paraphrase where p0 is not"
            + (f": {'; '.join(_named(c) for c in rescued)}" if rescued else ""))
    if contested:
        text += (f"; {len(contested)} eligible family-wise on a paraphrase where p0 is "
                 "eligible cell by cell (or could still be read on), not after Holm: "
                 + "; ".join(_named(c) for c in contested))
    if rescued:
        return Check("does not hold", text)
    if unsure or contested:
        if unsure:
            text += (f"; {len(unsure)} paraphrase cells not settled family-wise: "
                     + "; ".join(_named(c) for c in unsure))
        return Check("cannot tell", text)
    return Check("holds", text)


def _named(c: EligibilityCell) -> str:
    """One Part B configuration: model on task, prompt, reading and metric."""
    return f"{short(c.model)} on {c.task}, {c.prompt_id}, {c.reading}, {c.metric}"


AGENTS = "agents (seed 000)"
MICRO = "micro-tasks (seed 002)"

CLAIMS: tuple[SeedClaim, ...] = (
    SeedClaim(AGENTS, "Size does not predict reliability (r ≈ −0.18, p = 0.64 over 9 models).",
              size_unrelated),
    SeedClaim(AGENTS, "Safety is poor everywhere: the best model stays under 50%.",
              safety_poor),
    SeedClaim(AGENTS, "Robustness to rephrasing is the main bottleneck (lowest dimension).",
              robustness_lowest),
    SeedClaim(AGENTS, "Qwen models recover from injected tool faults about 100% of the time.",
              qwen_recover),
    SeedClaim(AGENTS, "High temperature (1.0 vs 0.3) drops accuracy by 6-10 points.",
              temperature_drop),
    SeedClaim(AGENTS, "Temperature does not change the ranking of models.",
              temperature_ranking),
    SeedClaim(MICRO, "No small-model configuration is eligible: the lower bound of its 95% "
                     "interval never beats the non-LLM baseline.", none_eligible),
    SeedClaim(MICRO, "Rewording the prompt does not make a configuration eligible.",
              prompts_do_not_rescue),
)


def check_claims(f: StudyFacts) -> list[tuple[SeedClaim, Check]]:
    return [(c, c.check(f)) for c in CLAIMS]
