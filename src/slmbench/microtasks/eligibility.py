"""The CI-aware pass rule: a configuration is eligible only if its 95% lower bound beats τ.

τ for a task is the best point score among the non-LLM baselines (the task baseline and the
majority / random references) on the *same items* the model saw. Intervals:

* accuracy: Wilson (``statsmodels.stats.proportion.proportion_confint``);
* F1, nDCG@5, MRR: percentile bootstrap over items (``scipy.stats.bootstrap``, fixed seed,
  ``N_RESAMPLES`` resamples);
* the paired difference model - τ-baseline on the same items: paired bootstrap, same seed.

A reply that names no option (format failure) counts as wrong and is also counted apart.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict
from scipy import stats as sps
from statsmodels.stats.proportion import proportion_confint

from slmbench.microtasks import tasks
from slmbench.microtasks.datasets.records import TaskName
from slmbench.microtasks.spec import Metric

CONFIDENCE = 0.95
N_RESAMPLES = 2000
SEED = 20250101
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


def f1_score(golds: Sequence[str], preds: Sequence[str | None], positive: str) -> float:
    """F1 of the positive class; 0.0 when there is nothing to find and nothing found."""
    tp = sum(g == positive and p == positive for g, p in zip(golds, preds, strict=True))
    fp = sum(g != positive and p == positive for g, p in zip(golds, preds, strict=True))
    fn = sum(g == positive and p != positive for g, p in zip(golds, preds, strict=True))
    return 0.0 if tp == 0 else 2 * tp / (2 * tp + fp + fn)


class Scorer:
    """Scores a set of rankings on fixed items, and on any resample of those items."""

    def __init__(self, task: TaskName, metric: Metric, golds: Sequence[str]) -> None:
        self.task, self.metric, self.golds = task, metric, list(golds)

    def by_index(self, rankings: Sequence[Sequence[str]]) -> Callable[[np.ndarray], float]:
        """A function of item indices -> the metric on those items (for the bootstrap)."""
        if self.metric == "f1":
            golds = np.asarray(self.golds, dtype=object)
            preds = np.asarray([r[0] if r else None for r in rankings], dtype=object)
            positive = tasks.get(self.task).positive or ""
            return lambda idx: f1_score(list(golds[idx]), list(preds[idx]), positive)
        values = item_values(self.metric, self.golds, rankings)
        return lambda idx: float(values[idx].mean())

    def score(self, rankings: Sequence[Sequence[str]]) -> float:
        return self.by_index(rankings)(np.arange(len(self.golds)))


def bootstrap_interval(stat: Callable[[np.ndarray], float], n: int) -> tuple[float, float]:
    """Percentile bootstrap CI of ``stat`` over item indices 0..n-1."""
    if n < 2:
        value = stat(np.arange(n))
        return value, value
    res = sps.bootstrap((np.arange(n),), stat, vectorized=False, paired=False,
                        n_resamples=N_RESAMPLES, confidence_level=CONFIDENCE,
                        method="percentile", rng=np.random.default_rng(SEED))
    return float(res.confidence_interval.low), float(res.confidence_interval.high)


def interval(scorer: Scorer, rankings: Sequence[Sequence[str]]) -> tuple[float, float, str]:
    """The score's 95% interval: Wilson for accuracy, bootstrap otherwise."""
    n = len(scorer.golds)
    if scorer.metric == "accuracy":
        hits = round(scorer.score(rankings) * n)
        low, high = proportion_confint(hits, n, alpha=1 - CONFIDENCE, method="wilson")
        return float(low), float(high), "wilson"
    low, high = bootstrap_interval(scorer.by_index(rankings), n)
    return low, high, f"bootstrap-percentile({N_RESAMPLES})"


def paired_difference(scorer: Scorer, model: Sequence[Sequence[str]],
                      baseline: Sequence[Sequence[str]]) -> tuple[float, float, float]:
    """Point, low, high of (model - baseline) on the same items, paired bootstrap."""
    fm, fb = scorer.by_index(model), scorer.by_index(baseline)
    n = len(scorer.golds)
    point = fm(np.arange(n)) - fb(np.arange(n))
    low, high = bootstrap_interval(lambda idx: fm(idx) - fb(idx), n)
    return point, low, high


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
    score: float
    ci_low: float
    ci_high: float
    ci_method: str
    tau: float
    tau_anchor: str
    baseline_scores: dict[str, float]
    diff: float
    diff_low: float
    diff_high: float
    format_failures: int
    eligible: bool
    note: str | None = None


def decide(ci_low: float, tau: float) -> bool:
    """The pass rule: strictly above τ."""
    return ci_low > tau


def make_cell(*, task: TaskName, metric: Metric, model: str, precision: str, prompt_id: str,
              reading: Literal["generation", "logprob"], golds: Sequence[str],
              rankings: Sequence[Sequence[str]], baselines: dict[str, Sequence[Sequence[str]]],
              format_failures: int = 0, note: str | None = None) -> EligibilityCell:
    """Score one configuration against τ = the best baseline's point score on the same items."""
    scorer = Scorer(task, metric, golds)
    score = scorer.score(rankings)
    low, high, method = interval(scorer, rankings)
    base_scores = {name: scorer.score(r) for name, r in baselines.items()}
    anchor = max(base_scores, key=lambda k: base_scores[k])
    diff, d_low, d_high = paired_difference(scorer, rankings, baselines[anchor])
    tau = base_scores[anchor]
    return EligibilityCell(
        task=task, model=model, precision=precision, prompt_id=prompt_id, reading=reading,
        metric=metric, n_items=len(golds), score=score, ci_low=low, ci_high=high,
        ci_method=method, tau=tau, tau_anchor=anchor, baseline_scores=base_scores, diff=diff,
        diff_low=d_low, diff_high=d_high, format_failures=format_failures,
        eligible=decide(low, tau), note=note)


class TauSweepRow(BaseModel):
    """How many configurations pass when τ is set to one anchor."""

    model_config = ConfigDict(frozen=True)

    anchor: str
    eligible: int
    total: int


def tau_sweep(cells: Sequence[EligibilityCell]) -> list[TauSweepRow]:
    """Recount eligibility with τ at each baseline's own score and at fixed values."""
    anchors = sorted({name for c in cells for name in c.baseline_scores})
    rows = []
    for name in anchors:
        scored = [c for c in cells if name in c.baseline_scores]
        rows.append(TauSweepRow(anchor=f"baseline:{name}", total=len(scored), eligible=sum(
            decide(c.ci_low, c.baseline_scores[name]) for c in scored)))
    for value in TAU_GRID:
        rows.append(TauSweepRow(anchor=f"fixed:{value}", total=len(cells),
                                eligible=sum(decide(c.ci_low, value) for c in cells)))
    return rows


class PromptSummary(BaseModel):
    model_config = ConfigDict(frozen=True)

    prompt_id: str
    eligible: int
    total: int


def by_prompt(cells: Sequence[EligibilityCell]) -> list[PromptSummary]:
    """How many configurations pass under each prompt (frozen p0 and its paraphrases)."""
    ids = sorted({c.prompt_id for c in cells})
    return [PromptSummary(prompt_id=p, eligible=sum(c.eligible for c in cells if c.prompt_id == p),
                          total=sum(c.prompt_id == p for c in cells)) for p in ids]
