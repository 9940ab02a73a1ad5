"""The CI-aware pass rule: a configuration is eligible only if its 95% lower bound beats τ.

τ for a task is the best point score among the non-LLM baselines (the task baseline and the
majority / random references) on the *same items* the model saw (with a
:class:`SequentialRule`: on every item the cell could read, before it reads any). τ is set
here and nowhere else, and the rule treats it as a fixed number. Every interval and p-value
comes from :mod:`slmbench.core.stats` (its one confidence level, resample count and seed).

**One interval per cell, the one that decided it** (``EligibilityCell.interval_kind``), with
both halves' p-values, from one call of ``stats.cell_test`` (which says how each is made):
*anytime-valid* for a cell read until decided (accuracy, MRR, nDCG@5 are means of per-item
values in [0, 1]: confidence sequences of the score and of model − τ-baseline on the items
read, valid at a stop chosen on the data; the fixed-n paired result beside them, not
deciding); *fixed-n* for a cell read in full (F1 always; any cell of a run that reads every
item: Wilson, the Jeffreys Dirichlet posterior over the per-item values, or F1's over the
confusion cells; the paired difference from the same posterior). None is zero-width at
small n.

A reply that names no option (format failure) counts as wrong and is also counted apart.

**Both halves of the rule.** ``seed_rule``: the lower bound above τ; ``paired``: the paired
interval above 0. A cell is ``eligible`` only when both hold and it is not constant. Its
``verdict``: ``eligible`` only then; ``ineligible`` when the upper bound is below τ, or when
every item the cell could read is read, it is still unsettled and the paired interval lies
wholly below 0; else ``undecided`` (not shown better than the baseline, so not eligible).
Reading stops (:class:`Tracker`) when the score's sequence settles below τ (``ineligible``),
or when both halves' anytime-valid p-values are at most 0.05 / the number of configurations
tested together (Bonferroni: such a cell is eligible family-wise under Holm too). F1 is not a
mean of per-item values: an F1 cell reads every item.

**p-values and the family.** Each half has a p-value on the scale of its interval (at most
0.05 exactly when its lower bound passes the null): anytime-valid (``1 / max`` of the mixture
martingale) or fixed-n (the score test behind Wilson; twice the posterior tail). The cell's
``p_value`` is the larger (both halves must hold). :func:`family_wise` adjusts them by Holm
over every configuration (model, task, prompt, reading) tested together, on each task's
deciding metric: ``family_eligible`` is the verdict a headline may state.

**Constant.** A cell is ``constant`` only when an anytime-valid lower bound on the share of
its commonest answer, valid over the choice of that answer (Bonferroni over the
``answer_space``), is above ``CONSTANT_SHARE`` (``stats.constant_share``). A constant cell
is never eligible (a constant answer is a reference, not a decision; see
``MicroTask.constants``); until then it is read and judged like any other cell.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Literal, NamedTuple

from slmbench.core import stats
from slmbench.microtasks.baselines import Baseline
from slmbench.microtasks.cells import EligibilityCell, PromptSummary, TauSweepRow, Verdict
from slmbench.microtasks.datasets.records import AnyItem, TaskName
from slmbench.microtasks.readout import NO_LOGPROBS_NOTE, ItemReading
from slmbench.microtasks.session import ModelReadings
from slmbench.microtasks.spec import Metric, MicroTask, item_values

SEQUENTIAL_METRICS: frozenset[str] = frozenset({"accuracy", "mrr", "ndcg@5"})
CONSTANT_SHARE = stats.CONSTANT_NULL  # one answer shown above this share: a constant cell
TAU_GRID: tuple[float, ...] = (0.5, 0.6, 0.7, 0.8, 0.9)
KINDS: dict[str, stats.ScoreKind] = {"accuracy": "binary", "mrr": "bounded", "ndcg@5": "bounded",
                                     "f1": "f1"}  # what core.stats tests of each metric


# --- scores --------------------------------------------------------------------------------

class Scorer:
    """Scores a set of rankings on fixed items."""

    def __init__(self, task: MicroTask, metric: Metric, golds: Sequence[str]) -> None:
        self.positive, self.metric, self.golds = task.positive, metric, list(golds)

    def score(self, rankings: Sequence[Sequence[str]]) -> float:
        """The metric's point value on these items."""
        if self.metric == "f1":
            return stats.f1_score(*self.positives(rankings))
        return float(item_values(self.metric, self.golds, rankings).mean())

    def positives(self, rankings: Sequence[Sequence[str]]) -> tuple[list[bool], list[bool]]:
        """Per item: is the gold the positive class, is the decision (top option) positive."""
        return ([g == self.positive for g in self.golds],
                [bool(r) and r[0] == self.positive for r in rankings])


def interval(scorer: Scorer, rankings: Sequence[Sequence[str]]) -> stats.Estimate:
    """The score with its 95% interval (see the module docstring for the method per metric)."""
    n = len(scorer.golds)
    if scorer.metric == "accuracy":
        return stats.wilson(round(scorer.score(rankings) * n), n)
    if scorer.metric == "f1":
        gold, pred = scorer.positives(rankings)
        return stats.f1_interval(gold, pred)
    return stats.bounded_mean(item_values(scorer.metric, scorer.golds, rankings))


# --- cells ----------------------------------------------------------------------------------

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


def answer_space(options: Sequence[Sequence[str]]) -> int:
    """How many answers a decision could be over items with these ``options``: every option
    named, plus the format failure."""
    return len({o for opts in options for o in opts}) + 1


def make_cell(*, task: MicroTask, metric: Metric, model: str, precision: str, prompt_id: str,
              reading: Literal["generation", "logprob"], golds: Sequence[str],
              rankings: Sequence[Sequence[str]], baselines: dict[str, Sequence[Sequence[str]]],
              format_failures: int = 0, note: str | None = None,
              rule: SequentialRule | None = None, space: int | None = None) -> EligibilityCell:
    """Score one configuration against τ = the best baseline's point score on the same items.

    With a ``rule`` (sequential reading), τ is the rule's (fixed on every item the cell could
    read) and, for a sequential metric, both halves of the verdict are anytime-valid: the
    confidence sequence of the score against τ and the empirical-Bernstein sequence of model −
    τ-baseline on the items read (these are the cell's ``score`` and ``diff``). Otherwise
    (F1, or every item read by design) both are fixed-n. ``space``: how many answers a
    decision could be (:func:`answer_space`; default: the options the rankings name, plus
    the format failure), for the union bound of "constant".
    """
    scorer = Scorer(task, metric, golds)
    base_scores = {name: scorer.score(r) for name, r in baselines.items()}
    anchor = max(base_scores, key=lambda k: base_scores[k])
    tau, tau_interval, horizon = base_scores[anchor], None, len(golds)
    if rule is not None:
        anchor, tau, tau_interval, horizon = rule.anchor, rule.tau, rule.interval, rule.horizon
    anytime = rule is not None and rule.sequential
    ours: Sequence[float] | Sequence[bool]
    theirs: Sequence[float] | Sequence[bool]
    if metric == "f1":  # the predictions of the positive class, and the truth
        gold, ours = scorer.positives(rankings)
        theirs = scorer.positives(baselines[anchor])[1]
    else:  # the per-item values
        gold, ours = None, item_values(metric, golds, rankings)
        theirs = item_values(metric, golds, baselines[anchor])
    space = space or (rule.space if rule is not None else None) or answer_space(rankings)
    got = stats.cell_test(KINDS[metric], ours, theirs, tau=tau, anytime=anytime,
                          horizon=horizon, answers=[r[0] if r else "" for r in rankings],
                          space=space, share=CONSTANT_SHARE, gold=gold)
    score, diff, p_tau, p_paired = got.score, got.diff, got.p_tau, got.p_paired
    shown = got.constant
    constant = shown.shown
    settled = settle(score.low, score.high, tau)
    seed_rule = settled == "eligible" and not constant
    paired = p_paired <= 1.0 - stats.CONFIDENCE if anytime else above_zero(diff)
    verdict = cell_verdict(settled, diff, complete=rule is None or len(golds) >= rule.horizon)
    stop_met = None if not anytime or rule is None else (
        settled == "ineligible" or max(p_tau, p_paired) <= rule.level)
    return EligibilityCell(
        task=task.name, model=model, precision=precision, prompt_id=prompt_id, reading=reading,
        metric=metric, n_items=len(golds), score=score, tau=tau, tau_anchor=anchor,
        tau_interval=tau_interval or interval(scorer, baselines[anchor]),
        baseline_scores=base_scores, diff=diff, format_failures=format_failures,
        eligible=seed_rule and paired, seed_rule=seed_rule, paired=paired, note=note,
        top_share=top_share(rankings), constant=constant, constant_p=shown.p_value,
        answer_space=shown.space, verdict=verdict,
        interval_kind="anytime-valid" if anytime else "fixed-n",
        n_split=rule.horizon if rule is not None else None, p_tau=p_tau, p_paired=p_paired,
        p_value=1.0 if constant else max(p_tau, p_paired),
        stop_level=rule.level if anytime and rule is not None else None,
        stop_rule_met=stop_met, fixed_diff=got.fixed_diff,
        fixed_p_paired=got.fixed_p_paired)


class SequentialRule:
    """τ fixed on every item a cell could read, and the stop test for reading until decided.

    ``golds`` and ``baselines`` (name -> rankings) cover all ``horizon`` items, in reading
    order; ``space`` is how many answers a decision could be on them (:func:`answer_space`).
    ``family``: how many configurations are tested together (the run's, or the study's): an
    "eligible" stop waits until both halves' anytime-valid p-values are at most
    ``0.05 / family`` (Bonferroni, :attr:`level`), so a cell that stops "eligible" is eligible
    family-wise under Holm too; an "ineligible" stop (the upper bound below τ) needs no
    correction. F1 (not a mean of bounded per-item values) never settles before the last item.
    """

    def __init__(self, task: MicroTask, metric: Metric, golds: Sequence[str],
                 baselines: dict[str, Sequence[Sequence[str]]], space: int | None = None,
                 family: int = 1) -> None:
        scorer = Scorer(task, metric, golds)
        scores = {name: scorer.score(r) for name, r in baselines.items()}
        self.task, self.metric, self.golds, self.space = task, metric, list(golds), space
        self.level = (1.0 - stats.CONFIDENCE) / max(1, family)
        self.anchor = max(scores, key=lambda k: scores[k])
        self.tau, self.horizon = scores[self.anchor], len(golds)
        self.interval = interval(scorer, baselines[self.anchor])  # the τ-baseline's, fixed-n
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
        return "eligible" if self._shown() else "undecided"

    def _shown(self) -> bool:
        """Both halves' anytime-valid p-values (:func:`make_cell`'s ``p_tau`` and ``p_paired``)
        are at most the rule's family-wise level."""
        assert self.rule.anchor_values is not None  # feed() reaches here only if sequential
        level, horizon = self.rule.level, self.rule.horizon
        if stats.anytime_p_above(self.values, self.rule.tau, horizon=horizon) > level:
            return False
        paired = (stats.anytime_paired_binary_p if self.rule.metric == "accuracy"
                  else stats.anytime_paired_p)
        return paired(self.values, self.rule.anchor_values[:self.n], horizon=horizon) <= level


def sequential_rules(task: MicroTask, items: Sequence[AnyItem], baselines: Sequence[Baseline],
                     family: int) -> dict[str, SequentialRule]:
    """Per metric of ``task``: its :class:`SequentialRule`, τ fixed on all of ``items`` (the
    reading order; ``baselines``: the task's, on those items)."""
    golds = [task.gold(i) for i in items]
    base = {b.name: [b.rankings[i.id] for i in items] for b in baselines}
    space = answer_space([task.options_for(i) for i in items])
    return {m: SequentialRule(task, m, golds, base, space, family) for m in task.metrics}


def deciding_metrics(cells: Sequence[EligibilityCell]) -> dict[str, str]:
    """Each task's deciding metric: its first metric (a matrix writes its cells in the task's
    metric order), read from the cells, so a stored run needs no registry."""
    out: dict[str, str] = {}
    for c in cells:
        out.setdefault(c.task, c.metric)
    return out


def family_wise(cells: Sequence[EligibilityCell]) -> list[EligibilityCell]:
    """``cells`` with their family-wise verdict: one hypothesis per configuration (model,
    task, prompt, reading) on its task's deciding metric (:func:`deciding_metrics`), Holm
    over all of them (``stats.adjust_pvalues``), at the level of the 95% intervals. A cell is
    ``family_eligible`` when it is eligible and its Holm-adjusted p-value is at most 0.05;
    a secondary metric's cell gets no family verdict (None)."""
    deciding = deciding_metrics(cells)
    tested = [i for i, c in enumerate(cells) if deciding.get(c.task) == c.metric]
    adjusted = stats.adjust_pvalues([cells[i].p_value for i in tested], "holm")
    holm = dict(zip(tested, adjusted, strict=True))
    alpha = 1.0 - stats.CONFIDENCE
    out = []
    for i, c in enumerate(cells):
        if i in holm:
            out.append(c.model_copy(update={
                "family": len(tested), "p_holm": holm[i],
                "family_eligible": c.eligible and holm[i] <= alpha}))
        else:
            out.append(c.model_copy(update={"family": None, "p_holm": None,
                                            "family_eligible": None}))
    return out


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


def by_prompt(cells: Sequence[EligibilityCell]) -> list[PromptSummary]:
    """How many configurations pass under each prompt (frozen p0 and its paraphrases)."""
    ids = sorted({c.prompt_id for c in cells})
    return [PromptSummary(prompt_id=p, eligible=sum(c.eligible for c in cells if c.prompt_id == p),
                          family_eligible=sum(bool(c.family_eligible) for c in cells
                                              if c.prompt_id == p),
                          total=sum(c.prompt_id == p for c in cells)) for p in ids]


def block_cells(spec: str, precision: str, task: MicroTask, prompt_id: str,
                golds: list[str], got: Sequence[ItemReading], baselines: Sequence[Baseline],
                rules: dict[str, SequentialRule] | None = None) -> list[EligibilityCell]:
    """The cells of one (model, task, prompt) block as read: per metric of ``task``, in its
    order, the generation reading's cell and, where every reading has log-probabilities, the
    log-prob reading's (else the generation cell says why there is none)."""
    base = {b.name: [b.rankings[r.item_id] for r in got] for b in baselines}
    fails = sum(r.format_failure for r in got)
    space = None if rules else answer_space([r.options for r in got])
    out = []
    for metric in task.metrics:
        common = dict(task=task, metric=metric, model=spec, precision=precision,
                      prompt_id=prompt_id, golds=golds, baselines=base,
                      rule=rules[metric] if rules else None, space=space)
        out.append(make_cell(**common, reading="generation",
                             rankings=[r.generation_ranking for r in got],
                             format_failures=fails))
        if all(r.logprob_ranking is not None for r in got):
            out.append(make_cell(**common, reading="logprob",
                                 rankings=[r.logprob_ranking or [] for r in got]))
        else:
            out[-1] = out[-1].model_copy(update={"note": NO_LOGPROBS_NOTE})
    return out


class Judged(NamedTuple):
    """A matrix's verdicts (:func:`judge`): the cells, family-wise; each baseline's score per
    task on its deciding metric; the τ sweep and the counts per prompt."""

    cells: list[EligibilityCell]
    baseline_scores: dict[str, dict[str, float]]
    tau_sweep: list[TauSweepRow]
    by_prompt: list[PromptSummary]


def judge(read: Sequence[ModelReadings], precisions: Mapping[str, str],
          tasks: Sequence[MicroTask], chosen: Mapping[TaskName, Sequence[AnyItem]],
          baselines: Mapping[TaskName, Sequence[Baseline]],
          rules: Mapping[TaskName, dict[str, SequentialRule]]) -> Judged:
    """The cells of every block each model spec read (:func:`block_cells`; ``rules``: a
    sequential run's, per task), family-wise; the baselines' scores on the ``chosen`` items."""
    cells: list[EligibilityCell] = []
    for got in read:
        for block in got.blocks:
            task = block.block.task
            cells.extend(block_cells(got.spec, precisions[got.spec], task,
                                     block.block.prompt_id, [task.gold(i) for i in block.items],
                                     block.readings, baselines[task.name], rules.get(task.name)))
    cells = family_wise(cells)  # each task's deciding metric: its first, as written above
    scores = {}
    for task in tasks:
        mine = chosen[task.name]
        scorer = Scorer(task, task.metrics[0], [task.gold(i) for i in mine])
        scores[task.name] = {b.name: scorer.score([b.rankings[i.id] for i in mine])
                             for b in baselines[task.name]}
    return Judged(cells, scores, tau_sweep(cells), by_prompt(cells))
