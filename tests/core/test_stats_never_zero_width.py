"""No interval of ``core.stats`` is zero-width at n < 30 (issue #16: "never [0, 0]").

A property test over every outcome a small sample can have: each interval function of
``core.stats`` returns ``low < high``, whatever the data. The bootstrap-based ones, which
cannot show a spread their sample does not have, return no interval at all (None, with the
method saying why) rather than a zero-width one; the pages print that as "–".
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from slmbench.core import stats

SMALL_N = st.integers(min_value=1, max_value=29)
DRAWS = 400  # posterior draws per interval: enough to tell an open interval from a point
FAST = settings(max_examples=60, deadline=None, derandomize=True)


def _open(e: stats.Estimate) -> None:
    assert e.low is not None and e.high is not None, e
    assert e.low < e.high, e
    if e.estimate is not None:
        assert e.low <= e.estimate <= e.high, e


def test_every_proportion_interval_is_open_for_every_count_below_30() -> None:
    """Exhaustive: every k of every n < 30."""
    for n in range(1, 30):
        for k in range(n + 1):
            for e in (stats.wilson(k, n), stats.clopper_pearson(k, n),
                      stats.binomial_test(k, n)[1]):
                _open(e)


def test_a_confidence_sequence_is_open_for_every_count_below_30() -> None:
    """Exhaustive over k of n < 30, the k successes spread evenly through the n values (an
    order the sequence's running intersection cannot be led astray by: that is a 5% event
    the bound itself allows)."""
    for n in range(1, 30):
        for k in range(n + 1):
            values = [float((i + 1) * k // n - i * k // n) for i in range(n)]
            e = stats.confidence_sequence(values, horizon=n)
            assert e.low is not None and e.high is not None and e.low < e.high, (k, n, e)


VALUES = st.sampled_from([0.0, 1.0, 0.5, 1 / 3, 0.25, 0.2, 1 / np.log2(3)])


@FAST
@given(st.lists(VALUES, min_size=1, max_size=29))
def test_a_bounded_mean_is_open_whatever_the_values(values: list[float]) -> None:
    _open(stats.bounded_mean(values, draws=DRAWS))


@FAST
@given(SMALL_N.flatmap(lambda n: st.tuples(st.lists(VALUES, min_size=n, max_size=n),
                                           st.lists(VALUES, min_size=n, max_size=n))))
def test_a_paired_bounded_difference_is_open_whatever_the_pairs(
        pair: tuple[list[float], list[float]]) -> None:
    a, b = pair
    _open(stats.paired_bounded_difference(a, b, draws=DRAWS))
    _open(stats.paired_bounded_difference(a, a, draws=DRAWS))  # the two agree everywhere


@FAST
@given(SMALL_N.flatmap(lambda n: st.lists(st.tuples(st.booleans(), st.booleans(),
                                                    st.booleans()), min_size=n, max_size=n)))
def test_f1_and_paired_intervals_are_open_whatever_the_table(
        rows: list[tuple[bool, bool, bool]]) -> None:
    gold, a, b = (list(c) for c in zip(*rows, strict=True))
    _open(stats.f1_interval(gold, a, draws=DRAWS))
    _open(stats.paired_f1_difference(gold, a, b, draws=DRAWS))
    _open(stats.paired_difference(a, b, draws=DRAWS))
    _open(stats.paired_difference(a, a, draws=DRAWS))


@FAST
@given(st.lists(SMALL_N.flatmap(lambda n: st.tuples(st.just(max(n, 3)),
                                                    st.integers(0, max(n, 3)))),
                min_size=1, max_size=6))
def test_repeat_rates_and_the_composite_are_open_whatever_the_counts(
        counts: list[tuple[int, int]]) -> None:
    _open(stats.per_task_rate(counts, draws=DRAWS))
    _open(stats.pass_at_k(counts, 3, draws=DRAWS))
    _open(stats.pass_hat_k(counts, 3, draws=DRAWS))
    draws = [stats.confidence_draws(c, n, draws=DRAWS, stream=i)
             for i, (n, c) in enumerate(counts)]
    _open(stats.mean_of_draws([c / n for n, c in counts], draws, n=len(counts),
                              method="composite"))


@FAST
@given(st.dictionaries(st.text(min_size=1, max_size=3),
                       st.lists(st.booleans(), min_size=2, max_size=5), min_size=1,
                       max_size=29))
def test_a_flip_rate_is_open(outcomes: dict[str, list[bool]]) -> None:
    _open(stats.flip_rate(outcomes).rate)


@FAST
@given(st.lists(st.sampled_from([0.0, 1.0, 2.0, 3.0]), min_size=2, max_size=29))
def test_a_bootstrap_is_open_or_gives_no_interval_never_a_point(values: list[float]) -> None:
    low, high, method = stats.bootstrap_interval((values,), np.mean, vectorized=True,
                                                 n_resamples=500)
    assert (low is None and high is None and "no interval" in method) or (
        low is not None and high is not None and low < high)
    ratio = stats.ratio_interval(values, [3.0] * len(values), n_resamples=500)
    assert (ratio.low is None and ratio.high is None) or ratio.low < ratio.high  # type: ignore[operator]
