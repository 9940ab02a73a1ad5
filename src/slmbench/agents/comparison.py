"""Two harness settings on the same trials, paired: old vs new prompt, react vs native.

Two runs of one grid (same models, tasks, variants, temperatures, seeds and
repeats) under two settings pair trial by trial on the trial's identity.
:func:`compare_trials` gives each side's success rate (Wilson), the paired
difference ``a − b`` with a paired interval (``stats.paired_difference``), and McNemar's test.
Trials that are never the model's (``backend_error``, ``environment_error``)
drop their pair and are counted in ``excluded``.

The scaffold comparison is :func:`compare_runs` on a ``--scaffold react`` and a
``--scaffold native`` run of one model; native needs a backend with tool-call
parsing (``Model.supports_native_tools``).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from slmbench.agents.records import NOT_THE_MODELS, Outcome, Trial
from slmbench.core import stats
from slmbench.core.errors import ConfigError
from slmbench.core.stats import Estimate, McNemarResult

__all__ = ["PairedComparison", "compare_runs", "compare_trials", "pair_trials"]

TrialId = tuple[str, str, str, float, int, int]


class PairedComparison(BaseModel):
    """Setting ``a`` against setting ``b`` on the trials both ran."""

    model_config = ConfigDict(frozen=True)

    a: str
    b: str
    pairs: int
    excluded: int  # pairs dropped: a side ended as backend_error / environment_error
    unpaired: int  # trials only one side holds
    success_a: Estimate
    success_b: Estimate
    difference: Estimate  # success(a) − success(b), Jeffreys posterior of the 2×2 cells
    mcnemar: McNemarResult | None  # None with no pairs


def _identity(t: Trial) -> TrialId:
    return (t.model, t.task_id, t.variant, round(t.temperature, 4), t.seed, t.repeat)


def pair_trials(a: Sequence[Trial], b: Sequence[Trial]) -> tuple[list[tuple[Trial, Trial]], int]:
    """Pairs of the same trial under both settings, in a stable order; and how many are unpaired.
    """
    left = {_identity(t): t for t in a}
    right = {_identity(t): t for t in b}
    shared = sorted(set(left) & set(right))
    return [(left[k], right[k]) for k in shared], len(set(left) ^ set(right))


def compare_trials(a: Sequence[Trial], b: Sequence[Trial], *, label_a: str = "a",
                   label_b: str = "b") -> PairedComparison:
    """Success of ``a`` and ``b`` on their shared trials, and the paired difference."""
    pairs, unpaired = pair_trials(a, b)
    kept = [(x, y) for x, y in pairs if x.outcome not in NOT_THE_MODELS
            and y.outcome not in NOT_THE_MODELS]
    wins_a = [x.outcome == Outcome.SUCCESS for x, _ in kept]
    wins_b = [y.outcome == Outcome.SUCCESS for _, y in kept]
    if kept:
        difference = stats.paired_difference(wins_a, wins_b)
        test: McNemarResult | None = stats.mcnemar(wins_a, wins_b)
    else:
        difference = Estimate(estimate=None, low=None, high=None, method="paired difference",
                              n=0, note="no shared trials")
        test = None
    return PairedComparison(
        a=label_a, b=label_b, pairs=len(kept), excluded=len(pairs) - len(kept),
        unpaired=unpaired, success_a=_rate(sum(wins_a), len(kept)),
        success_b=_rate(sum(wins_b), len(kept)), difference=difference, mcnemar=test)


def _rate(k: int, n: int) -> Estimate:
    if n == 0:
        return Estimate(estimate=None, low=None, high=None, method="wilson", n=0,
                        note="no shared trials")
    return stats.wilson(k, n)


def compare_runs(run_a: str | Path, run_b: str | Path, *, label_a: str | None = None,
                 label_b: str | None = None) -> PairedComparison:
    """:func:`compare_trials` on the trials stored in two run directories."""
    from slmbench.agents.analysis import load_trials

    a, b = load_trials(run_a), load_trials(run_b)
    if not pair_trials(a, b)[0]:
        raise ConfigError(f"{run_a} and {run_b} share no trial",
                          "compare two runs of the same grid (same tasks, seeds, repeats)")
    return compare_trials(a, b, label_a=label_a or str(run_a), label_b=label_b or str(run_b))
