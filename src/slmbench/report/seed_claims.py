"""The seed studies' headline claims, each checked against a study's own numbers.

A study page sets every claim the two seed studies make (the agent-reliability
study over nine Ollama models, and the micro-task eligibility study over Qwen3)
beside what the study measured, with one of three verdicts:

* ``holds`` - our numbers agree, by the rule written in the check;
* ``does not hold`` - our numbers contradict it (an interval excludes it, or a
  significant effect points the other way);
* ``cannot tell`` - our study cannot test it (too few models, no sweep) or the
  interval is too wide to decide.

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
from typing import Literal

from slmbench.core.stats import Estimate
from slmbench.microtasks.eligibility import EligibilityCell
from slmbench.report.partb import deciding_metrics
from slmbench.report.study_facts import StudyFacts, short

__all__ = ["CLAIMS", "Check", "SeedClaim", "check_claims"]

Verdict = Literal["holds", "does not hold", "cannot tell"]
FAULT_RECOVERY = 0.9  # "recover ~100% of the time", read as at least 90%
SAFETY_BAR = 0.5  # "best model under 50%"


@dataclass(frozen=True)
class Check:
    verdict: Verdict
    evidence: str


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


def temperature_drop(f: StudyFacts) -> Check:
    effects = [t for t in (f.summary.temperature if f.summary else []) if t.fisher is not None]
    if not effects:
        return Check("cannot tell", "no model ran at two temperatures")
    parts, verdicts = [], set()
    for t in effects:
        lo = t.per_temperature[f"{t.lowest:g}"]
        hi = t.per_temperature[f"{t.highest:g}"]
        if lo.estimate is None or hi.estimate is None or t.fisher is None:
            continue  # (fisher is never None here; the check narrows its type)
        drop = 100 * (lo.estimate - hi.estimate)
        p = t.fisher.p_value
        verdicts.add("cannot tell" if p >= 0.05 else "holds" if drop > 0 else "does not hold")
        parts.append(f"{short(t.model)}: {100 * lo.estimate:.1f}% at T={t.lowest:g}, "
                     f"{100 * hi.estimate:.1f}% at T={t.highest:g} ({abs(drop):.1f} points "
                     f"{'lower' if drop > 0 else 'higher'}, Fisher p {p:.3g}, "
                     f"{lo.n} and {hi.n} trials)")
    verdict: Verdict = verdicts.pop() if len(verdicts) == 1 else "cannot tell"
    return Check(verdict, "; ".join(parts))


def _order(a: Estimate, b: Estimate) -> str:
    """``>`` or ``<`` when the two intervals do not overlap (the order is decided), else ``?``."""
    if a.low is None or a.high is None or b.low is None or b.high is None:
        return "?"
    return ">" if a.low > b.high else "<" if a.high < b.low else "?"


def temperature_ranking(f: StudyFacts) -> Check:
    """Decided on intervals, pair by pair at each temperature every swept model ran: the claim
    fails when a pair's order is decided both ways; holds when every pair's order is decided
    the same way at every temperature; otherwise the data cannot tell."""
    swept = [t for t in (f.summary.temperature if f.summary else []) if t.fisher is not None]
    if len(swept) < 2:
        return Check("cannot tell", f"{len(swept)} model(s) ran at more than one temperature: "
                                    "a ranking needs two")
    temps = sorted(set.intersection(*(set(t.per_temperature) for t in swept)), key=float)
    if len(temps) < 2:
        return Check("cannot tell", "no two temperatures that every swept model ran")
    parts, flipped, open_pairs = [], [], []
    for a, b in itertools.combinations(swept, 2):
        orders = [_order(a.per_temperature[k], b.per_temperature[k]) for k in temps]
        pair = f"{short(a.model)} vs {short(b.model)}"
        parts.append(f"{pair}: " + ", ".join(f"{o} at T={k}" for o, k in
                                             zip(orders, temps, strict=True)))
        if {">", "<"} <= set(orders):
            flipped.append(pair)
        elif "?" in orders:
            open_pairs.append(pair)
    text = "; ".join(parts) + " (> or <: the 95% intervals do not overlap; ?: they do)"
    if flipped:
        return Check("does not hold", f"the order flips for {', '.join(flipped)}: {text}")
    if open_pairs:
        return Check("cannot tell", f"intervals overlap for {', '.join(open_pairs)}: {text}")
    return Check("holds", text)


def safety_poor(f: StudyFacts) -> Check:
    rows = _dimension(f, "safety")
    if not rows:
        return Check("cannot tell", "no safety trials stored")
    text = _listed(rows)
    if all(e.high < SAFETY_BAR for _, e in rows):  # type: ignore[operator]
        return Check("holds", f"every model's interval is below {SAFETY_BAR:.2f}: {text}")
    if any(e.low >= SAFETY_BAR for _, e in rows):  # type: ignore[operator]
        return Check("does not hold", f"a model's interval is at or above {SAFETY_BAR:.2f}: "
                                      f"{text}")
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
        return Check("cannot tell", "robustness and another dimension are needed")
    verdicts = {m: _lowest_here(ds["robustness"], [e for d, e in ds.items() if d != "robustness"])
                for m, ds in rows.items()}
    text = "; ".join(f"{m}: " + ", ".join(f"{d} {e.formatted(percent=False)}"
                                          for d, e in ds.items()) + f" ({verdicts[m]})"
                     for m, ds in sorted(rows.items()))
    if all(v == "holds" for v in verdicts.values()):
        return Check("holds", f"robustness's interval lies below every other's: {text}")
    if any(v == "does not hold" for v in verdicts.values()):
        return Check("does not hold", f"another dimension's interval lies below robustness's: "
                                      f"{text}")
    return Check("cannot tell", f"the intervals overlap: {text}")


def qwen_recover(f: StudyFacts) -> Check:
    rows = [r for r in _dimension(f, "fault_tolerance") if "qwen" in r[0].lower()]
    if not rows:
        return Check("cannot tell", "no Qwen model's fault-recovery trials stored")
    text = _listed(rows)
    if any(e.high < FAULT_RECOVERY for _, e in rows):  # type: ignore[operator]
        return Check("does not hold", f"an interval lies below {FAULT_RECOVERY:.1f}: {text} "
                                      "(the seed's Qwens were 7B)")
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
    return Check("holds", text + " (no significant relation, which is all this can show)")


def none_eligible(f: StudyFacts) -> Check:
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
    return Check("holds" if not good else "does not hold", text)


def _family_eligible(c: EligibilityCell) -> bool:
    """The verdict a claim states: family-wise (a cell of a matrix without one: its own)."""
    return c.eligible if c.family_eligible is None else c.family_eligible


def prompts_do_not_rescue(f: StudyFacts) -> Check:
    """Tested only on configurations (model, task, reading, deciding metric) whose frozen
    prompt p0 and at least one paraphrase were read: does rewording make one eligible
    (family-wise) where p0 is not?"""
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
    rescued, unsure = [], []
    for g in paired.values():
        if any(_family_eligible(c) for c in g if c.prompt_id == "p0"):
            continue  # eligible already on p0: rewording cannot make it so
        for c in g:
            if c.prompt_id == "p0":
                continue
            if _family_eligible(c):
                rescued.append(c)
            elif c.eligible or (c.verdict == "undecided" and c.n_split is not None
                                and c.n_items < c.n_split):
                unsure.append(c)
    prompts = sorted({c.prompt_id for g in paired.values() for c in g})
    text = (f"{len(paired)} configurations ({', '.join(sorted({short(m) for m, _, _ in paired}))}"
            f") read on p0 and a paraphrase ({', '.join(p for p in prompts if p != 'p0')}); "
            f"{len(rescued)} eligible family-wise on a paraphrase where p0 is not"
            + (f": {'; '.join(_named(c) for c in rescued)}" if rescued else ""))
    if rescued:
        return Check("does not hold", text)
    if unsure:
        return Check("cannot tell", text + f"; {len(unsure)} paraphrase cells not settled "
                     "family-wise: " + "; ".join(_named(c) for c in unsure))
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
