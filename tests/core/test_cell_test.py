"""``stats.cell_test``: every statistic a Part B cell's verdict needs, in one record, each the
one its own function gives (issue #58: the cell makes one call into ``core.stats``)."""

from __future__ import annotations

import numpy as np
import pytest

from slmbench.core import stats

RNG = np.random.default_rng(7)
N = 60
MODEL = (RNG.random(N) < 0.8).astype(float)
BASE = (RNG.random(N) < 0.6).astype(float)
GRADED = RNG.choice([0.0, 1 / 3, 0.5, 1.0], size=N)  # MRR-like values in [0, 1]
GRADED_BASE = RNG.choice([0.0, 0.5, 1.0], size=N)
ANSWERS = ["a" if v else "b" for v in MODEL]


def test_a_fixed_n_binary_cell_is_wilson_the_paired_posterior_and_their_p_values() -> None:
    got = stats.cell_test("binary", MODEL, BASE, tau=0.6, anytime=False, horizon=N,
                          answers=ANSWERS, space=3)
    assert got.score == stats.wilson(int(MODEL.sum()), N)
    assert got.diff == stats.paired_bounded_difference(MODEL, BASE)
    assert (got.p_tau, got.p_paired) == stats.fixed_p_values("binary", MODEL, BASE, 0.6)
    assert got.p_tau == stats.wilson_p_above(int(MODEL.sum()), N, 0.6)
    assert got.p_paired == stats.paired_bounded_p_above(MODEL, BASE)
    assert got.fixed_diff is None and got.fixed_p_paired is None and not got.anytime
    assert got.constant == stats.constant_share(ANSWERS, space=3, horizon=N)


def test_a_fixed_n_bounded_cell_is_the_bounded_posterior() -> None:
    got = stats.cell_test("bounded", GRADED, GRADED_BASE, tau=0.4, anytime=False, horizon=N,
                          answers=ANSWERS, space=3)
    assert got.score == stats.bounded_mean(GRADED)
    assert got.diff == stats.paired_bounded_difference(GRADED, GRADED_BASE)
    assert got.p_tau == stats.bounded_mean_p_above(GRADED, 0.4)
    assert got.p_paired == stats.paired_bounded_p_above(GRADED, GRADED_BASE)


def test_an_f1_cell_is_the_f1_posterior_and_is_never_anytime() -> None:
    gold = [bool(v) for v in BASE]
    pred, other = [bool(v) for v in MODEL], [not v for v in gold]
    got = stats.cell_test("f1", pred, other, tau=0.5, anytime=False, horizon=N,
                          answers=ANSWERS, space=3, gold=gold)
    assert got.score == stats.f1_interval(gold, pred)
    assert got.diff == stats.paired_f1_difference(gold, pred, other)
    assert (got.p_tau, got.p_paired) == (stats.f1_p_above(gold, pred, 0.5),
                                         stats.paired_f1_p_above(gold, pred, other))
    with pytest.raises(stats.StatsInputError):
        stats.cell_test("f1", pred, other, tau=0.5, anytime=True, horizon=N, answers=ANSWERS,
                        space=3, gold=gold)
    with pytest.raises(stats.StatsInputError):
        stats.fixed_p_values("f1", pred, other, 0.5)


def test_an_anytime_cell_is_decided_by_its_sequences_with_the_fixed_n_result_beside() -> None:
    got = stats.cell_test("binary", MODEL, BASE, tau=0.6, anytime=True, horizon=2 * N,
                          answers=ANSWERS, space=3)
    absolute = stats.anytime_mean(MODEL, null=0.6, horizon=2 * N)
    pair = stats.anytime_paired_binary(MODEL > 0.5, BASE > 0.5, horizon=2 * N)
    assert (got.score, got.p_tau) == (absolute.interval, absolute.p_value)
    assert (got.diff, got.p_paired) == (pair.interval, pair.p_value)
    assert got.fixed_diff == stats.paired_bounded_difference(MODEL, BASE)
    assert got.fixed_p_paired == stats.mcnemar(MODEL > 0.5, BASE > 0.5).p_value
    assert got.constant == stats.constant_share(ANSWERS, space=3, horizon=2 * N)
    graded = stats.cell_test("bounded", GRADED, GRADED_BASE, tau=0.4, anytime=True,
                             horizon=N, answers=ANSWERS, space=3)
    pair = stats.anytime_paired_difference(GRADED, GRADED_BASE, horizon=N)
    assert (graded.diff, graded.p_paired) == (pair.interval, pair.p_value)
    assert graded.fixed_p_paired == stats.paired_bounded_p_above(GRADED, GRADED_BASE)
