"""Decision-threshold diagnostics: does a model rank well but decide badly?

A model's log-probability of each answer option (from :mod:`slmbench.microtasks.readout`)
is a score. Its default decision is the top option. A *threshold* here is an additive
offset on options that every item shares, fitted on the ``fit`` split and applied,
unchanged, to the ``eval`` split (never tuned on the items it is scored on):

* binary tasks (approval, memory): one offset on the positive option; deciding "positive"
  when ``s = log P(positive) - log P(negative) > t`` is the offset ``-t``;
* tools: one offset on ``none`` (abstain versus call the best-scoring function);
* ranking: one offset per turn position (it corrects a position bias).

Offsets are fitted by coordinate ascent over the exact breakpoints of the fit split
(for one offset: an exhaustive threshold sweep), maximising the task's eligibility metric.

Separation is reported as ROC AUC. For binary tasks it is the Mann-Whitney AUC of ``s``
between the classes (interval: bootstrap over items). For multi-way tasks it is the
share of (item, distractor) pairs where the gold option outscores the distractor (0.5 is
chance; interval: cluster bootstrap over items). See docs/diagnostics.md.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Sequence

import numpy as np
from pydantic import BaseModel, ConfigDict
from scipy import stats as sps
from scipy.special import softmax

from slmbench.core import stats
from slmbench.core.errors import ConfigError, LogprobsUnsupportedError
from slmbench.microtasks.cells import EligibilityCell
from slmbench.microtasks.datasets.records import AnyItem, Split, TaskName
from slmbench.microtasks.eligibility import Scorer, decide, make_cell
from slmbench.microtasks.readout import ItemReading
from slmbench.microtasks.spec import Metric, MicroTask

ECE_BINS = 10


class ScoredItem(BaseModel):
    """One item's option log-probabilities, gold answer and generation outcome."""

    model_config = ConfigDict(frozen=True)

    item_id: str
    split: Split
    options: list[str]
    gold: str
    logprobs: dict[str, float]
    generation_ranking: list[str] | None = None  # None: not generated; [] = format failure


def scored_item(task: MicroTask, item: AnyItem, reading: ItemReading) -> ScoredItem:
    """Join a model's reading of an item of ``task`` with the item's gold answer and split."""
    if reading.logprobs is None:
        raise LogprobsUnsupportedError(
            f"no log-probabilities for {item.id}: threshold diagnostics need them",
            "use a backend with score() (llamacpp:, hf:)")
    return ScoredItem(item_id=item.id, split=item.split, options=reading.options,
                      gold=task.gold(item), logprobs=reading.logprobs,
                      generation_ranking=reading.generation_ranking)


# --- decisions under offsets -----------------------------------------------------------------

def ranking_under(item: ScoredItem, offsets: dict[str, float]) -> list[str]:
    """Options by adjusted log-probability, best first (ties: the option listed first)."""
    adj = {o: item.logprobs[o] + offsets.get(o, 0.0) for o in item.options}
    return sorted(item.options, key=lambda o: (-adj[o], item.options.index(o)))


def binary_pair(task: MicroTask) -> tuple[str, str] | None:
    """A binary task's (positive, negative) options; None for other shapes."""
    return (task.positive or "", task.negative()) if task.shape == "binary" else None


def shared_options(task: MicroTask, items: Sequence[ScoredItem]) -> list[str]:
    """The options an offset can be fitted on (see module docstring)."""
    pair = binary_pair(task)
    if pair:
        return [pair[0]]
    if task.shape == "choice":
        return ["none"]
    positions = sorted({o for i in items for o in i.options}, key=int)
    return positions[1:]  # offsets are relative: position 1 stays at 0


def _metric_value(task: MicroTask, metric: Metric, items: Sequence[ScoredItem],
                  offsets: dict[str, float]) -> float:
    scorer = Scorer(task, metric, [i.gold for i in items])
    return scorer.score([ranking_under(i, offsets) for i in items])


def _breakpoints(items: Sequence[ScoredItem], option: str,
                 offsets: dict[str, float]) -> list[float]:
    """Offsets for ``option`` at which some item's decision changes, as midpoints."""
    cuts = set()
    for item in items:
        if option not in item.options or len(item.options) < 2:
            continue
        rest = max(item.logprobs[o] + offsets.get(o, 0.0) for o in item.options if o != option)
        cuts.add(rest - item.logprobs[option])
    ordered = sorted(cuts)
    if not ordered:
        return [0.0]
    mids = [(a + b) / 2 for a, b in itertools.pairwise(ordered)]
    return [ordered[0] - 1.0, *mids, ordered[-1] + 1.0, 0.0]


def fit_offsets(task: MicroTask, fit_items: Sequence[ScoredItem], *, passes: int = 2
                ) -> dict[str, float]:
    """Offsets maximising the task's metric on ``fit_items`` (ties: closest to no offset)."""
    metric = task.metrics[0]
    offsets = dict.fromkeys(shared_options(task, fit_items), 0.0)
    if not fit_items:
        return offsets
    for _ in range(passes if len(offsets) > 1 else 1):
        for option in offsets:
            best_key: tuple[float, float] | None = None
            for value in _breakpoints(fit_items, option, offsets):
                trial = {**offsets, option: value}
                key = (_metric_value(task, metric, fit_items, trial), -abs(value))
                if best_key is None or key > best_key:
                    best_key, offsets[option] = key, value
    return offsets


# --- separation and calibration ------------------------------------------------------------

def binary_margin(task: MicroTask, item: ScoredItem) -> float:
    """``s = log P(positive) - log P(negative)`` of a binary item."""
    pos, neg = binary_pair(task) or ("", "")
    return item.logprobs[pos] - item.logprobs[neg]


def _auc_vectorized(s: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
    """Mann-Whitney AUC along ``axis`` (NaN where a resample holds one class only)."""
    ranks = sps.rankdata(s, axis=axis)
    n1 = y.sum(axis=axis)
    n0 = y.shape[axis] - n1
    u = (ranks * y).sum(axis=axis) - n1 * (n1 + 1) / 2
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where((n1 > 0) & (n0 > 0), u / (n1 * n0), np.nan)


def binary_auc(scores: Sequence[float], positive: Sequence[bool]) -> stats.Estimate:
    """ROC AUC of ``scores`` for ``positive`` with a bootstrap interval over items."""
    s = np.asarray(scores, dtype=float)
    y = np.asarray(positive, dtype=float)
    n1 = int(y.sum())
    if n1 == 0 or n1 == y.size:
        return stats.Estimate(estimate=None, low=None, high=None, method="roc auc",
                              n=int(y.size), note="one class only: AUC undefined")
    point = float(sps.mannwhitneyu(s[y == 1], s[y == 0]).statistic / (n1 * (y.size - n1)))
    low, high, method = stats.bootstrap_interval((s, y), _auc_vectorized, paired=True,
                                                 vectorized=True)
    if low is None:  # every resample separates alike (e.g. perfectly): no bootstrap spread
        placements = [float(np.mean((x > s[y == 0]) + 0.5 * (x == s[y == 0])))
                      for x in s[y == 1]]
        return _placement_interval(point, placements, "mann-whitney auc", int(y.size))
    return stats.Estimate(estimate=point, low=low, high=high,
                          method=f"mann-whitney auc; {method}", n=int(y.size))


def _placement_interval(point: float, shares: Sequence[float], name: str,
                        n: int) -> stats.Estimate:
    """An AUC's interval from its per-item placement values (the share of the other class each
    item outscores; their mean is the AUC), through ``stats.bounded_mean``: used where a
    bootstrap has no spread to show (every resample separates alike)."""
    est = stats.bounded_mean(shares)
    return est.model_copy(update={
        "estimate": point, "low": min(est.low or 0.0, point), "high": max(est.high or 1.0, point),
        "n": n, "method": f"{name}; placement values, {est.method}"})


def gold_vs_distractor_auc(items: Sequence[ScoredItem]) -> stats.Estimate:
    """Share of (item, distractor) pairs where gold outscores the distractor (ties: half)."""
    wins, pairs = [], []
    for item in items:
        g = item.logprobs[item.gold]
        others = [item.logprobs[o] for o in item.options if o != item.gold]
        wins.append(sum(1.0 if g > x else 0.5 if g == x else 0.0 for x in others))
        pairs.append(float(len(others)))
    est = stats.ratio_interval(wins, pairs)
    if est.low is None and est.estimate is not None:
        shares = [w / p for w, p in zip(wins, pairs, strict=True) if p > 0]
        return _placement_interval(est.estimate, shares, "gold-vs-distractor auc", est.n)
    return est.model_copy(update={"method": f"gold-vs-distractor auc; {est.method}"})


class CoveragePoint(BaseModel):
    """Accuracy on the ``coverage`` share of items where the model is most confident."""

    model_config = ConfigDict(frozen=True)

    coverage: float
    accuracy: stats.Estimate  # Wilson, n = the items covered


COVERAGES: tuple[float, ...] = tuple(k / 10 for k in range(1, 11))


class Calibration(BaseModel):
    """Confidence (softmax over an item's options) of the decided option against accuracy,
    and selective prediction: the risk–coverage curve and the coverage that beats τ.

    * ``brier``: mean over items of Σ_o (p_o − 1[o = gold])², in [0, 2]
      (``stats.bounded_mean``);
    * ``ece``: expected calibration error over ``ECE_BINS`` equal-width bins
      (``ece_interval``: paired BCa bootstrap over items);
    * ``curve``: accuracy on the most confident 10%, 20%, ..., 100% of items;
    * ``coverage_beating_tau``: the largest of those coverages whose Wilson lower bound is
      above τ (what a cascade needs: the model answers that share). Read off a grid of ten
      without correction for choosing among them; only when τ is an accuracy.
    """

    model_config = ConfigDict(frozen=True)

    mean_confidence: float
    accuracy: float
    gap: float  # mean confidence - accuracy: > 0 over-confident, < 0 under-confident
    ece: float  # expected calibration error, ECE_BINS equal-width bins
    ece_interval: stats.Estimate | None = None
    brier: stats.Estimate | None = None
    curve: list[CoveragePoint] = []
    tau: float | None = None
    coverage_beating_tau: float | None = None
    note: str | None = None


def expected_calibration_error(confidence: np.ndarray, hit: np.ndarray) -> float:
    """ECE over ``ECE_BINS`` equal-width bins of ``confidence``."""
    c, h = np.asarray(confidence, dtype=float), np.asarray(hit, dtype=float)
    bins = np.minimum((c * ECE_BINS).astype(int), ECE_BINS - 1)
    return float(sum(abs(c[bins == b].mean() - h[bins == b].mean()) * (bins == b).sum()
                     for b in range(ECE_BINS) if (bins == b).any()) / c.size)


def calibration(items: Sequence[ScoredItem], *, tau: float | None = None,
                metric: str = "accuracy") -> Calibration:
    """Calibration and risk–coverage of ``items``; ``tau`` (an accuracy) for the coverage."""
    conf, hit, brier = [], [], []
    for item in items:
        probs = softmax([item.logprobs[o] for o in item.options])
        top = int(np.argmax(probs))
        conf.append(float(probs[top]))
        hit.append(float(item.options[top] == item.gold))
        brier.append(float(sum((p - (o == item.gold)) ** 2
                               for p, o in zip(probs, item.options, strict=True))))
    c, h = np.asarray(conf), np.asarray(hit)
    low, high, method = stats.bootstrap_interval((c, h), expected_calibration_error, paired=True)
    order = np.argsort(-c, kind="stable")
    curve = []
    for cov in COVERAGES:
        k = max(1, int(np.ceil(cov * c.size - 1e-9)))
        curve.append(CoveragePoint(coverage=cov, accuracy=stats.wilson(int(h[order[:k]].sum()),
                                                                        k)))
    beating, note = None, None
    if tau is not None and metric == "accuracy":
        passing = [p.coverage for p in curve if decide(p.accuracy.low, tau)]
        beating = max(passing) if passing else None
    elif tau is not None:
        note = f"τ is a {metric} score, not an accuracy: no coverage is compared with it"
    ece = expected_calibration_error(c, h)
    return Calibration(mean_confidence=float(c.mean()), accuracy=float(h.mean()),
                       gap=float(c.mean() - h.mean()), ece=ece,
                       ece_interval=stats.Estimate(estimate=ece, low=low, high=high,
                                                   method=f"ece; {method}", n=int(c.size)),
                       brier=stats.bounded_mean(brier, bounds=(0.0, 2.0)), curve=curve, tau=tau,
                       coverage_beating_tau=beating, note=note)


def decision_key(task: MicroTask, item: ScoredItem, option: str) -> str:
    """What a constant-answer bias is measured on: the label, or the option's position."""
    shape = task.shape
    if shape == "choice" and option != "none":
        return f"function #{item.options.index(option) + 1}"
    return option if shape != "ranking" else f"turn {option}"


class DiagnosticCell(BaseModel):
    """One (task, model) cell of the threshold diagnostic (eval split unless named fit)."""

    model_config = ConfigDict(frozen=True)

    task: TaskName
    model: str
    n_fit: int
    n_eval: int
    auc: stats.Estimate
    offsets: dict[str, float]  # fitted on the fit split
    threshold: float | None  # binary tasks: s > threshold decides the positive option
    positive: str | None
    fit_default: float | None  # the metric on the fit split, default decision
    fit_tuned: float | None  # ... with the fitted offsets
    default: EligibilityCell  # log-prob reading, default decision
    tuned: EligibilityCell  # log-prob reading, fitted offsets
    generation: EligibilityCell | None  # greedy generation, parsed
    format_failure_rate: stats.Estimate | None
    majority_decision: str
    majority_share: float  # share of eval items given the most common (default) decision
    calibration: Calibration


def diagnose(task: MicroTask, model: str, fit: Sequence[ScoredItem], evals: Sequence[ScoredItem],
             fit_items: Sequence[AnyItem], eval_items: Sequence[AnyItem], *,
             precision: str = "unknown") -> DiagnosticCell:
    """The threshold diagnostic of one model on one task (readings joined to their items)."""
    if not evals:
        raise ConfigError(f"no eval items to diagnose for {task.name}", "raise --limit")
    metric = task.metrics[0]
    offsets = fit_offsets(task, fit)
    pair = binary_pair(task)
    if pair:
        auc = binary_auc([binary_margin(task, i) for i in evals],
                         [i.gold == pair[0] for i in evals])
    else:
        auc = gold_vs_distractor_auc(evals)
    by_id = {i.item_id: i for i in evals}
    ordered = [by_id[it.id] for it in eval_items]
    golds = [i.gold for i in ordered]
    baselines = {b.name: [b.rankings[it.id] for it in eval_items]
                 for b in task.baselines(fit_items, eval_items)}

    def cell(reading: str, rankings: list[list[str]], failures: int = 0,
             note: str | None = None) -> EligibilityCell:
        return make_cell(task=task, metric=metric, model=model, precision=precision,
                         prompt_id="p0", reading=reading,  # type: ignore[arg-type]
                         golds=golds, rankings=rankings, baselines=baselines,
                         format_failures=failures, note=note)

    default = cell("logprob", [ranking_under(i, {}) for i in ordered])
    tuned = cell("logprob", [ranking_under(i, offsets) for i in ordered],
                 note=f"offsets fitted on {len(fit)} fit items: {offsets}")
    generation, ff_rate = None, None
    if all(i.generation_ranking is not None for i in ordered):
        gens = [i.generation_ranking or [] for i in ordered]
        fails = sum(not g for g in gens)
        generation = cell("generation", gens, fails)
        ff_rate = stats.wilson(fails, len(gens))
    keys = Counter(decision_key(task, i, ranking_under(i, {})[0]) for i in ordered)
    top_key, top_count = keys.most_common(1)[0]
    pos = pair[0] if pair else None
    return DiagnosticCell(
        task=task.name, model=model, n_fit=len(fit), n_eval=len(ordered), auc=auc, offsets=offsets,
        threshold=0.0 - offsets[pos] if pos else None, positive=pos,
        fit_default=_metric_value(task, metric, fit, {}) if fit else None,
        fit_tuned=_metric_value(task, metric, fit, offsets) if fit else None,
        default=default, tuned=tuned, generation=generation, format_failure_rate=ff_rate,
        majority_decision=top_key, majority_share=top_count / len(ordered),
        calibration=calibration(ordered, tau=default.tau, metric=metric))
