"""The CI-aware pass rule: a configuration is eligible only if its 95% lower bound beats τ.

τ for a task is the best point score among the non-LLM baselines (the task baseline and the
majority / random references) on the *same items* the model saw. τ is set here and nowhere
else. Every interval comes from :mod:`slmbench.core.stats` (its one confidence level,
resample count and seed):

* accuracy: Wilson (``stats.wilson``);
* nDCG@5, MRR: Jeffreys Dirichlet posterior over the per-item values (and the range's ends
  0 and 1), simulated (``stats.bounded_mean``);
* F1: Jeffreys Dirichlet posterior of the confusion cells, simulated (``stats.f1_interval``);
* the paired difference model - τ-baseline on the same items: the same posterior over the
  (model, baseline) value pairs (``stats.paired_bounded_difference``); for F1 the posterior
  of the joint cells (``stats.paired_f1_difference``).

None of them is zero-width at small n (a bootstrap gives [v, v] when every item agrees).

A reply that names no option (format failure) counts as wrong and is also counted apart.

**Reading until decided.** Accuracy, MRR and nDCG@5 are means of per-item values in [0, 1],
so a cell can stop as soon as an anytime-valid confidence sequence
(``stats.ConfidenceSequence``, from ``confseq``) settles against τ: its lower bound above τ
(eligible) or its upper bound below τ (ineligible). τ is then fixed beforehand on every
item the cell could read (:class:`SequentialRule`). F1 is not such a mean: an F1 cell reads
every item and is settled by its fixed-n interval. A cell still unsettled when its items run
out is ``undecided``: not shown better than the baseline, so not eligible.

**The paired decision.** Beside the seed's rule (the lower bound above τ) the cell reports
model − τ-baseline on the same items with a paired interval (``diff``); ``paired`` says
whether that interval excludes 0 in the model's favour. A cell is eligible only when both
hold: the seed's rule (``seed_rule``) and the paired one, and its ``verdict`` says the same:
``eligible`` only then, ``undecided`` while the bound is past τ but the paired half is not
shown. A cell that has read every item it could, still unsettled against τ, whose paired
interval lies wholly below 0 is ``ineligible``: shown worse than the baseline on the same
items, it cannot be eligible (a fixed-n interval, so it is never a reason to stop early).

A cell whose decisions give one answer to at least ``CONSTANT_SHARE`` of its items is
``constant``: it is never eligible, whatever its score (a constant answer is a reference,
not a decision; see ``MicroTask.constants``).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict

from slmbench.core import stats
from slmbench.microtasks import tasks
from slmbench.microtasks.datasets.records import TaskName
from slmbench.microtasks.spec import Metric

CELL_VERSION = 4  # 4: the verdict weighs the paired half (3: constant, top_share, verdict,
#                   sequence; 2: score, diff are Estimates)
SEQUENTIAL_METRICS: frozenset[str] = frozenset({"accuracy", "mrr", "ndcg@5"})
Verdict = Literal["eligible", "ineligible", "undecided"]
CONSTANT_SHARE = 0.95  # one answer on at least this share of the items: a constant cell
TAU_GRID: tuple[float, ...] = (0.5, 0.6, 0.7, 0.8, 0.9)


# --- per-item metric values -----------------------------------------------------------------

def rank_of(gold: str, ranking: Sequence[str]) -> int | None:
    """1-based rank of ``gold`` in ``ranking`` (None: not ranked)."""
    return ranking.index(gold) + 1 if gold in ranking else None


def item_values(metric: Metric, golds: Sequence[str],
                rankings: Sequence[Sequence[str]]) -> np.ndarray:
    """Per-item value of an additive metric (accuracy, nDCG@5, MRR) with one relevant item."""
    out = []
    for gold, ranking in zip(golds, rankings, strict=True):
        r = rank_of(gold, ranking)
        if metric == "accuracy":
            out.append(float(r == 1))
        elif metric == "mrr":
            out.append(0.0 if r is None else 1.0 / r)
        elif metric == "ndcg@5":  # one relevant item: IDCG = 1
            out.append(0.0 if r is None or r > 5 else 1.0 / math.log2(r + 1))
        else:
            raise ValueError(f"{metric} is not additive over items")
    return np.asarray(out, dtype=float)


class Scorer:
    """Scores a set of rankings on fixed items."""

    def __init__(self, task: TaskName, metric: Metric, golds: Sequence[str]) -> None:
        self.task, self.metric, self.golds = task, metric, list(golds)

    def score(self, rankings: Sequence[Sequence[str]]) -> float:
        """The metric's point value on these items."""
        if self.metric == "f1":
            return stats.f1_score(*self.positives(rankings))
        return float(item_values(self.metric, self.golds, rankings).mean())

    def positives(self, rankings: Sequence[Sequence[str]]) -> tuple[list[bool], list[bool]]:
        """Per item: is the gold the positive class, is the decision (top option) positive."""
        positive = tasks.get(self.task).positive
        return ([g == positive for g in self.golds],
                [bool(r) and r[0] == positive for r in rankings])


def interval(scorer: Scorer, rankings: Sequence[Sequence[str]]) -> stats.Estimate:
    """The score with its 95% interval (see the module docstring for the method per metric)."""
    n = len(scorer.golds)
    if scorer.metric == "accuracy":
        return stats.wilson(round(scorer.score(rankings) * n), n)
    if scorer.metric == "f1":
        gold, pred = scorer.positives(rankings)
        return stats.f1_interval(gold, pred)
    return stats.bounded_mean(item_values(scorer.metric, scorer.golds, rankings))


def paired_difference(scorer: Scorer, model: Sequence[Sequence[str]],
                      baseline: Sequence[Sequence[str]]) -> stats.Estimate:
    """(model - baseline) on the same items, with a paired interval (module docstring)."""
    if scorer.metric == "f1":
        gold, pred = scorer.positives(model)
        return stats.paired_f1_difference(gold, pred, scorer.positives(baseline)[1])
    return stats.paired_bounded_difference(item_values(scorer.metric, scorer.golds, model),
                                           item_values(scorer.metric, scorer.golds, baseline))


# --- cells ----------------------------------------------------------------------------------

class EligibilityCell(BaseModel):
    """One configuration's score, interval, τ and verdict on one metric."""

    model_config = ConfigDict(frozen=True)

    task: TaskName
    model: str
    precision: str
    prompt_id: str
    reading: Literal["generation", "logprob"]
    metric: Metric
    n_items: int
    score: stats.Estimate  # the metric with its 95% interval
    tau: float
    tau_anchor: str
    tau_interval: stats.Estimate | None = None  # the τ-baseline's score with its interval
    baseline_scores: dict[str, float]
    diff: stats.Estimate  # model - τ-baseline on the same items, paired
    format_failures: int
    eligible: bool
    note: str | None = None
    top_share: float | None = None  # share of items given the most frequent answer
    constant: bool = False  # top_share >= CONSTANT_SHARE: never eligible
    verdict: Verdict = "undecided"  # `cell_verdict` on `sequence`, else on `score`
    sequence: stats.Estimate | None = None  # the confidence sequence at n_items (sequential)
    n_split: int | None = None  # items the cell could read (None: n_items)
    seed_rule: bool = False  # the seed's rule alone: the bound above τ (and not constant)
    paired: bool = False  # the paired interval of model - τ-baseline lies above 0
    version: Literal[2, 3, 4] = CELL_VERSION

    @property
    def tau_text(self) -> str:
        """τ with its interval and anchor as every table prints it: ``0.750 [0.551, 0.880]
        (bm25)`` (a cell stored before τ kept its interval: the point alone)."""
        shown = (f"{self.tau:.3f}" if self.tau_interval is None
                 else self.tau_interval.formatted(percent=False, digits=3))
        return f"{shown} ({self.tau_anchor})"


def settle(low: float | None, high: float | None, tau: float) -> Verdict:
    """Eligible when the lower bound is above τ, ineligible when the upper bound is below it,
    else undecided (a tie with the baseline is not a win)."""
    if low is not None and low > tau:
        return "eligible"
    if high is not None and high < tau:
        return "ineligible"
    return "undecided"


def above_zero(diff: stats.Estimate) -> bool:
    """The paired interval of model − τ-baseline lies above 0 (the model shown better)."""
    return diff.low is not None and diff.low > 0


def cell_verdict(settled: Verdict, diff: stats.Estimate, complete: bool) -> Verdict:
    """A cell's verdict from its bound's (``settled``, :func:`settle`) and the paired half of
    the rule.

    ``eligible`` needs the paired interval above 0 as well (else ``undecided``: read on). A
    ``complete`` cell (every item it could read is read) still unsettled whose paired interval
    lies below 0 is ``ineligible``: shown worse than the baseline on the same items."""
    if settled == "eligible" and not above_zero(diff):
        return "undecided"
    if settled == "undecided" and complete and diff.high is not None and diff.high < 0:
        return "ineligible"
    return settled


def decide(ci_low: float | None, tau: float) -> bool:
    """The pass rule: the lower bound strictly above τ (no interval: cannot tell, not eligible)."""
    return ci_low is not None and ci_low > tau


def top_share(rankings: Sequence[Sequence[str]]) -> float | None:
    """Share of items whose decision (top option; a format failure counts as one answer) is
    the most frequent one (None: no items)."""
    if not rankings:
        return None
    counts = Counter(r[0] if r else "" for r in rankings)
    return counts.most_common(1)[0][1] / len(rankings)


def make_cell(*, task: TaskName, metric: Metric, model: str, precision: str, prompt_id: str,
              reading: Literal["generation", "logprob"], golds: Sequence[str],
              rankings: Sequence[Sequence[str]], baselines: dict[str, Sequence[Sequence[str]]],
              format_failures: int = 0, note: str | None = None,
              rule: SequentialRule | None = None) -> EligibilityCell:
    """Score one configuration against τ = the best baseline's point score on the same items.

    With a ``rule`` (sequential reading), τ is the rule's (fixed on every item the cell could
    read) and, for a sequential metric, the verdict is the confidence sequence's at the items
    read; the fixed-n ``score`` interval stays beside it.
    """
    scorer = Scorer(task, metric, golds)
    score = interval(scorer, rankings)
    base_scores = {name: scorer.score(r) for name, r in baselines.items()}
    anchor = max(base_scores, key=lambda k: base_scores[k])
    tau = base_scores[anchor]
    sequence, tau_interval = None, None
    if rule is not None:
        anchor, tau, tau_interval = rule.anchor, rule.tau, rule.interval
        if rule.sequential:
            sequence = stats.confidence_sequence(
                item_values(metric, golds, rankings), horizon=rule.horizon)
    bound = sequence or score
    share = top_share(rankings)
    constant = share is not None and share >= CONSTANT_SHARE
    diff = paired_difference(scorer, rankings, baselines[anchor])
    settled = settle(bound.low, bound.high, tau)
    seed_rule = settled == "eligible" and not constant
    paired = above_zero(diff)
    verdict = cell_verdict(settled, diff, complete=rule is None or len(golds) >= rule.horizon)
    return EligibilityCell(
        task=task, model=model, precision=precision, prompt_id=prompt_id, reading=reading,
        metric=metric, n_items=len(golds), score=score, tau=tau, tau_anchor=anchor,
        tau_interval=tau_interval or interval(scorer, baselines[anchor]),
        baseline_scores=base_scores, diff=diff, format_failures=format_failures,
        eligible=seed_rule and paired, seed_rule=seed_rule, paired=paired, note=note,
        top_share=share, constant=constant, verdict=verdict, sequence=sequence,
        n_split=rule.horizon if rule is not None else None)


class SequentialRule:
    """τ fixed on every item a cell could read, and the stop test for reading until decided.

    ``golds`` and ``baselines`` (name -> rankings) cover all ``horizon`` items, in reading
    order. :meth:`settled` tells whether the readings so far settle the cell; F1 (not a mean
    of bounded per-item values) never settles before the last item.
    """

    def __init__(self, task: TaskName, metric: Metric, golds: Sequence[str],
                 baselines: dict[str, Sequence[Sequence[str]]]) -> None:
        scorer = Scorer(task, metric, golds)
        scores = {name: scorer.score(r) for name, r in baselines.items()}
        self.task, self.metric, self.golds = task, metric, list(golds)
        self.anchor = max(scores, key=lambda k: scores[k])
        self.tau, self.horizon = scores[self.anchor], len(golds)
        self.interval = interval(scorer, baselines[self.anchor])  # τ with its interval
        self.sequential = metric in SEQUENTIAL_METRICS
        # the τ-baseline's per-item values: "eligible" also needs the paired difference
        # (F1 has none: an F1 cell is not settled before its last item)
        self.anchor_values = (item_values(metric, golds, baselines[self.anchor])
                              if self.sequential else None)

    def tracker(self) -> Tracker:
        """A fresh stop test for one cell."""
        return Tracker(self)


class Tracker:
    """One cell's stop test: :meth:`feed` each next item's ranking, in order; it answers the
    verdict so far (settled for good once not ``undecided``). ``estimate`` is the running
    mean with the confidence sequence's bounds (F1: the running mean is not the metric, so
    only ``n`` is kept)."""

    def __init__(self, rule: SequentialRule) -> None:
        self.rule, self.n = rule, 0
        self.sequence = stats.ConfidenceSequence(rule.horizon)
        self.values: list[float] = []

    @property
    def estimate(self) -> stats.Estimate | None:
        return self.sequence.estimate() if self.rule.sequential and self.n else None

    def feed(self, ranking: Sequence[str]) -> Verdict:
        self.n += 1
        if not self.rule.sequential:
            return "undecided"
        value = item_values(self.rule.metric, [self.rule.golds[self.n - 1]], [ranking])[0]
        self.values.append(float(value))
        got = self.sequence.add(float(value))
        settled = settle(got.low, got.high, self.rule.tau)
        if settled != "eligible":  # the paired half matters only to an "eligible" bound
            return settled
        # never complete here: a fixed-n paired interval is no reason to stop early
        return cell_verdict(settled, self._diff(), complete=False)

    def _diff(self) -> stats.Estimate:
        """The paired difference model − τ-baseline on the items read so far."""
        assert self.rule.anchor_values is not None  # feed() reaches here only if sequential
        return stats.paired_bounded_difference(self.values, self.rule.anchor_values[:self.n])


class Tally(BaseModel):
    """How many of ``total`` configurations are eligible."""

    model_config = ConfigDict(frozen=True)

    eligible: int
    total: int


class TauSweepRow(Tally):
    """How many configurations pass when τ is set to one anchor."""

    anchor: str


def tau_sweep(cells: Sequence[EligibilityCell]) -> list[TauSweepRow]:
    """Recount eligibility with τ at each baseline's own score and at fixed values."""
    anchors = sorted({name for c in cells for name in c.baseline_scores})
    rows = []
    for name in anchors:
        scored = [c for c in cells if name in c.baseline_scores]
        rows.append(TauSweepRow(anchor=f"baseline:{name}", total=len(scored), eligible=sum(
            decide(c.score.low, c.baseline_scores[name]) and not c.constant for c in scored)))
    for value in TAU_GRID:
        rows.append(TauSweepRow(anchor=f"fixed:{value}", total=len(cells),
                                eligible=sum(decide(c.score.low, value) and not c.constant
                                             for c in cells)))
    return rows


class PromptSummary(Tally):
    """How many configurations pass under one prompt."""

    prompt_id: str


def by_prompt(cells: Sequence[EligibilityCell]) -> list[PromptSummary]:
    """How many configurations pass under each prompt (frozen p0 and its paraphrases)."""
    ids = sorted({c.prompt_id for c in cells})
    return [PromptSummary(prompt_id=p, eligible=sum(c.eligible for c in cells if c.prompt_id == p),
                          total=sum(c.prompt_id == p for c in cells)) for p in ids]
