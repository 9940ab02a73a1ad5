"""Part A across runtimes: does one model, served two ways, give the same agent verdicts?

One GGUF through ``llamacpp:``, ``llamaserver:`` and ``hf:`` is one model; a user who
measured it one way and deploys it another wants the verdict to carry over. Trials are
compared at T = 0 only (a seed does not carry across runtimes, so sampled transcripts are not
comparable), paired on (task, variant, temperature, seed, repeat, instance) with the model spec
left out; a task (every instance of its family) is the unit of inference. Per pair of runtimes:

- the share of paired trials with *identical transcripts* (every reply, as written) and with
  the *same outcome*, each a task-level rate (``stats.task_level_rate``: a task's variants are
  correlated);
- success paired by task (``stats.task_paired``) with its minimum detectable difference, and
  the TOST of equivalence within ``±margin`` (``stats.task_tost``: interval inclusion on the
  90% hull of the paired t and the bounded-mean posterior, the exact bound where no task
  differs, so two identical runtimes come out equivalent once there are tasks enough, 29 at
  ±10 points), with the interval that decided it;
- the verdict: ``equivalent`` (the TOST, Holm over the pairs compared together: each pair's
  "equivalent" is a claim of its own, so two identical runtimes of three need 39 tasks at ±10
  points), ``different`` (the sign test across tasks, Holm over the pairs compared together),
  else ``cannot tell``; where neither runtime solves MIN_TASKS tasks, ``both at the floor``
  (not comparable on success: two floors are within any margin by the exact bound, however
  differently they fail), which claims no equivalence and is not one of the TOSTs' family;
- against the noise floor (one runtime under two settings, :func:`against_floor`): whether
  transcripts are identical less often across the runtimes than within one, paired by task.

Trials that are never the model's (``backend_error``, ``environment_error``) drop their pair
and are counted in ``excluded``.
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict

from slmbench.agents.exclusion import excluded_as
from slmbench.agents.records import Outcome, Trial
from slmbench.agents.summary import at_floor
from slmbench.core import stats
from slmbench.core.errors import ConfigError
from slmbench.core.stats import ClusteredEstimate, TaskComparison, TostResult

__all__ = ["DEFAULT_MARGIN", "RuntimePair", "Verdict", "against_floor", "compare_runtimes",
           "holm_equivalence", "runtime_pairs"]

DEFAULT_MARGIN = 0.10
ALPHA = 0.05
Verdict = Literal["equivalent", "different", "cannot tell", "both at the floor"]
PairKey = tuple[str, str, float, int, int, int]  # task, variant, T, seed, repeat, instance


class RuntimePair(BaseModel):
    """Runtime ``a`` against runtime ``b`` (two labels: model specs, or one spec under two
    settings, e.g. 1 and 8 requests in flight) on the trials both ran."""

    model_config = ConfigDict(frozen=True)

    a: str
    b: str
    pairs: int
    excluded: int  # pairs dropped: a side ended as backend_error / environment_error
    unpaired: int  # trials only one side holds
    identical: ClusteredEstimate  # share of pairs whose every reply is the same text
    identical_by_task: dict[str, float]  # each task's share of identical transcripts
    same_outcome: ClusteredEstimate
    success_a: ClusteredEstimate
    success_b: ClusteredEstimate
    by_task: TaskComparison  # success(a) − success(b), paired by task
    equivalence: TostResult
    margin: float
    p_holm: float  # by_task's sign test, Holm over the pairs compared together
    verdict: Verdict
    # the TOST's p, Holm over the pairs compared together (None: facts written before it, or
    # both at the floor: no claim)
    equivalence_p_holm: float | None = None
    # tasks each runtime solves at least once (None: facts written before issue #60)
    solved_a: int | None = None
    solved_b: int | None = None

    @property
    def at_floor(self) -> bool:
        """Neither runtime solves MIN_TASKS tasks: not comparable on success."""
        return at_floor(self.solved_a, self.solved_b)


def _key(t: Trial) -> PairKey:
    return (t.task_id, t.variant, round(t.temperature, 4), t.seed, t.repeat, t.instance)


def _replies(t: Trial) -> list[str]:
    return [s.raw_response for s in t.steps]


def _greedy(trials: Sequence[Trial], side: str) -> dict[PairKey, Trial]:
    """A side's trials by pairing key; ConfigError if one was sampled (T > 0)."""
    if hot := next((t for t in trials if t.temperature > 0), None):
        raise ConfigError(f"{side}: trial {hot.task_id} {hot.variant} ran at T = "
                          f"{hot.temperature:g}; runtimes are compared at T = 0 only",
                          "run the agreement grid with temperatures = [0.0]: a seed does not "
                          "carry across runtimes, so sampled transcripts are not comparable")
    return {_key(t): t for t in trials}


def _rate(by_task: Mapping[str, list[bool]]) -> ClusteredEstimate:
    return stats.task_level_rate([(len(v), sum(v)) for _, v in sorted(by_task.items())])


def _pair(sides: Mapping[str, Sequence[Trial]], a: str, b: str, margin: float
          ) -> RuntimePair:
    """The pair ``a``/``b`` with its own (unadjusted) sign-test and TOST p-values as
    ``p_holm`` and ``equivalence_p_holm`` (:func:`compare_runtimes` adjusts them)."""
    left, right = _greedy(sides[a], a), _greedy(sides[b], b)
    shared = sorted(set(left) & set(right))
    kept = [(left[k], right[k]) for k in shared
            if excluded_as(left[k]) is None and excluded_as(right[k]) is None]
    if not kept:
        raise ConfigError(f"{a} and {b} share no trial both measured",
                          "run the same grid on both specs (slmbench agree does)")
    same: dict[str, list[bool]] = defaultdict(list)
    outcome: dict[str, list[bool]] = defaultdict(list)
    ok_a: dict[str, list[bool]] = defaultdict(list)
    ok_b: dict[str, list[bool]] = defaultdict(list)
    for x, y in kept:
        same[x.task_id].append(_replies(x) == _replies(y))
        outcome[x.task_id].append(x.outcome == y.outcome)
        ok_a[x.task_id].append(x.outcome == Outcome.SUCCESS)
        ok_b[x.task_id].append(y.outcome == Outcome.SUCCESS)
    tasks = sorted(ok_a)
    diffs = [(sum(ok_a[k]) - sum(ok_b[k])) / len(ok_a[k]) for k in tasks]
    test = stats.task_paired(diffs, cells=len(kept))
    tost = stats.task_tost(diffs, margin)
    p = test.sign_test.p_value
    solved = (sum(any(v) for v in ok_a.values()), sum(any(v) for v in ok_b.values()))
    floor = at_floor(*solved)
    return RuntimePair(a=a, b=b, pairs=len(kept), excluded=len(shared) - len(kept),
                       unpaired=len(set(left) ^ set(right)), identical=_rate(same),
                       identical_by_task={k: sum(v) / len(v) for k, v in sorted(same.items())},
                       same_outcome=_rate(outcome), success_a=_rate(ok_a),
                       success_b=_rate(ok_b), by_task=test, equivalence=tost, margin=margin,
                       p_holm=p, verdict=_verdict(None if floor else tost.p_value, p, floor),
                       equivalence_p_holm=None if floor else tost.p_value,
                       solved_a=solved[0], solved_b=solved[1])


def _verdict(tost_p_holm: float | None, p_holm: float, floor: bool = False) -> Verdict:
    if tost_p_holm is not None and tost_p_holm < ALPHA:
        return "equivalent"
    if p_holm < ALPHA:
        return "different"
    return "both at the floor" if floor else "cannot tell"


def runtime_pairs(labels: Sequence[str]) -> list[tuple[str, str]]:
    """Every pair of distinct labels, in the order given."""
    return list(itertools.combinations(dict.fromkeys(labels), 2))


def compare_runtimes(sides: Mapping[str, Sequence[Trial]], *,
                     margin: float = DEFAULT_MARGIN) -> list[RuntimePair]:
    """One :class:`RuntimePair` per pair of ``sides`` (a label, e.g. the model spec, → that
    runtime's trials of one grid), the sign tests Holm-adjusted together, and the TOSTs.
    ConfigError if fewer than two sides, a trial was sampled, or a pair shares no measured
    trial."""
    pairs = runtime_pairs(list(sides))
    if not pairs:
        raise ConfigError(f"agreement needs two runtimes (got {list(sides)})",
                          "pass two or more model specs of the same model")
    computed = [_pair(sides, a, b, margin) for a, b in pairs]
    holm = stats.adjust_pvalues([r.p_holm for r in computed], "holm")
    return holm_equivalence([r.model_copy(update={"p_holm": float(p)})
                             for r, p in zip(computed, holm, strict=True)])


def holm_equivalence(pairs: Sequence[RuntimePair]) -> list[RuntimePair]:
    """``pairs`` with each TOST's p Holm-adjusted over all of them and the verdicts given
    again: every pair whose verdict one page states is one family (the cross-runtime pairs
    and the noise floors together). A pair both at the floor is no claim of equivalence and
    is left out of the family."""
    tested = [not r.at_floor for r in pairs]
    adjusted = iter(stats.adjust_pvalues(
        [r.equivalence.p_value for r, t in zip(pairs, tested, strict=True) if t], "holm"))
    out = []
    for r, t in zip(pairs, tested, strict=True):
        q = float(next(adjusted)) if t else None
        out.append(r.model_copy(update={"equivalence_p_holm": q,
                                        "verdict": _verdict(q, r.p_holm, r.at_floor)}))
    return out


def against_floor(cross: RuntimePair, floor: RuntimePair) -> TaskComparison:
    """Whether two runtimes' transcripts are identical less often than one runtime's under
    two settings (``floor``: the noise floor, e.g. 1 and 8 requests in flight): each shared
    task's identical share within the floor minus across the runtimes, paired by task
    (``stats.task_paired``; a positive mean: the runtimes differ beyond the floor).
    ConfigError if the two share no task."""
    tasks = sorted(set(cross.identical_by_task) & set(floor.identical_by_task))
    if not tasks:
        raise ConfigError(f"{cross.a} / {cross.b} and the noise floor {floor.a} / {floor.b} "
                          "share no task", "run the noise floor on the same grid")
    return stats.task_paired([floor.identical_by_task[k] - cross.identical_by_task[k]
                              for k in tasks])
