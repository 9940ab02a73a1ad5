"""slmbench.core.stats checked against scipy/statsmodels directly and published values."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats as sps
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.proportion import proportion_confint

from slmbench.core import stats
from slmbench.core.errors import SlmbenchError

# -- proportions ---------------------------------------------------------------


@pytest.mark.parametrize("k,n", [(0, 10), (10, 10), (0, 1), (1, 1), (7, 20), (31, 45)])
def test_wilson_matches_statsmodels(k: int, n: int) -> None:
    est = stats.wilson(k, n)
    low, high = proportion_confint(k, n, method="wilson")
    assert est.estimate == pytest.approx(k / n)
    assert est.low == pytest.approx(max(0.0, low), abs=1e-12)
    assert est.high == pytest.approx(min(1.0, high), abs=1e-12)
    assert 0.0 <= est.low <= est.estimate <= est.high <= 1.0
    assert est.n == n and est.method == "wilson"


def test_wilson_published_values() -> None:
    # 0 of 10: Wilson upper bound 0.2775 (Newcombe 1998, table I style values)
    assert stats.wilson(0, 10).high == pytest.approx(0.2775, abs=1e-4)
    # 81 of 263 -> [0.2553, 0.3662] (Wallis 2013 worked example style)
    est = stats.wilson(81, 263)
    assert (est.low, est.high) == pytest.approx((0.2553, 0.3662), abs=2e-4)


@pytest.mark.parametrize("k,n", [(0, 10), (10, 10), (0, 1), (1, 1), (3, 17)])
def test_clopper_pearson_matches_statsmodels_and_closed_form(k: int, n: int) -> None:
    est = stats.clopper_pearson(k, n)
    low, high = proportion_confint(k, n, method="beta")
    assert (est.low, est.high) == pytest.approx((low, high), abs=1e-12)
    if k == 0:  # closed form: upper = 1 - (alpha/2)^(1/n)
        assert est.high == pytest.approx(1 - 0.025 ** (1 / n))
        assert est.low == 0.0
    if k == n:
        assert est.low == pytest.approx(0.025 ** (1 / n))
        assert est.high == 1.0


@pytest.mark.parametrize("k,n", [(-1, 5), (6, 5), (0, 0)])
def test_bad_counts_raise_one_line_error(k: int, n: int) -> None:
    with pytest.raises(stats.StatsInputError) as err:
        stats.wilson(k, n)
    assert isinstance(err.value, SlmbenchError) and err.value.hint


def test_binomial_test_matches_scipy() -> None:
    test, est = stats.binomial_test(3, 20, p0=0.5)
    ref = sps.binomtest(3, 20, 0.5)
    assert test.p_value == pytest.approx(ref.pvalue)
    ci = ref.proportion_ci(method="exact")
    assert (est.low, est.high) == pytest.approx((ci.low, ci.high))
    # published: two-sided exact p for 3/20 vs 0.5 is 0.002577
    assert test.p_value == pytest.approx(0.002577, abs=1e-6)
    one_sided, _ = stats.binomial_test(0, 1, p0=0.5, alternative="less")
    assert one_sided.p_value == pytest.approx(0.5)


def test_cohens_h_values() -> None:
    assert stats.cohens_h(0.5, 0.2) == pytest.approx(
        2 * math.asin(math.sqrt(0.5)) - 2 * math.asin(math.sqrt(0.2)))
    assert stats.cohens_h(1.0, 0.0) == pytest.approx(math.pi)
    assert stats.cohens_h(0.3, 0.3) == 0.0
    with pytest.raises(stats.StatsInputError):
        stats.cohens_h(30, 0.5)


def test_fisher_exact_matches_scipy_and_published() -> None:
    # scipy's documented example: [[6, 2], [1, 4]] -> odds ratio 12, p = 0.1026
    res = stats.fisher_exact(6, 8, 1, 5)
    assert res.statistic == pytest.approx(12.0)
    assert res.p_value == pytest.approx(sps.fisher_exact([[6, 2], [1, 4]])[1])
    assert res.p_value == pytest.approx(0.1026, abs=1e-4)
    # a zero cell: infinite odds ratio is reported as None with a note, p still exact
    zero = stats.fisher_exact(5, 5, 0, 5)
    assert zero.statistic is None and zero.note
    assert zero.p_value == pytest.approx(sps.fisher_exact([[5, 0], [0, 5]])[1])


def test_compare_to_best_adjusts_with_bh_and_holm() -> None:
    counts = {"a": (28, 30), "b": (20, 30), "c": (10, 30), "d": (27, 30)}
    rows = {r.model: r for r in stats.compare_to_best(counts)}
    assert {r.best for r in rows.values()} == {"a"}
    assert rows["a"].p_value == 1.0 and rows["a"].odds_ratio is None
    others = ["b", "c", "d"]
    raw = [sps.fisher_exact([[counts[m][0], 30 - counts[m][0]], [28, 2]])[1] for m in others]
    bh = multipletests(raw, method="fdr_bh")[1]
    holm = multipletests(raw, method="holm")[1]
    for m, p, pb, ph in zip(others, raw, bh, holm, strict=True):
        assert rows[m].p_value == pytest.approx(p)
        assert rows[m].p_bh == pytest.approx(pb)
        assert rows[m].p_holm == pytest.approx(ph)
        assert rows[m].cohens_h == pytest.approx(stats.cohens_h(counts[m][0] / 30, 28 / 30))
    assert rows["c"].significant_bh and not rows["d"].significant_bh
    assert rows["c"].cohens_h < 0


def test_compare_to_best_single_model_and_all_ties() -> None:
    (only,) = stats.compare_to_best({"solo": (0, 3)})
    assert only.best == "solo" and only.p_bh == 1.0
    tied = stats.compare_to_best({"x": (5, 10), "y": (5, 10)})
    assert all(r.p_value == pytest.approx(1.0) and not r.significant_bh for r in tied)
    assert stats.compare_to_best({}) == []


# -- bootstrap ---------------------------------------------------------------------


def test_bootstrap_interval_reproduces_scipy_bootstrap() -> None:
    values = [0.0, 1.0, 1.0, 0.5, 0.25, 1.0, 0.0, 0.75]
    low, high, method = stats.bootstrap_interval((values,), np.mean, vectorized=True, seed=7)
    ref = sps.bootstrap((np.array(values),), np.mean, n_resamples=10_000,
                        rng=np.random.default_rng(7), method="BCa")
    assert (low, high) == pytest.approx((ref.confidence_interval.low,
                                         ref.confidence_interval.high))
    assert "10000 resamples" in method
    # same seed, same interval: reproducible
    assert stats.bootstrap_interval((values,), np.mean, vectorized=True, seed=7) == (
        low, high, method)


def test_a_bootstrap_of_equal_values_gives_no_interval_not_a_zero_width_one() -> None:
    low, high, method = stats.bootstrap_interval(([1.0, 1.0, 1.0, 1.0],), np.mean,
                                                 vectorized=True)
    assert (low, high) == (None, None) and "degenerate" in method


@pytest.mark.parametrize("k,n", [(0, 3), (2, 8), (8, 8), (13, 20)])
def test_bounded_mean_of_0_1_values_is_the_jeffreys_interval(k: int, n: int) -> None:
    est = stats.bounded_mean([1.0] * k + [0.0] * (n - k))
    jeffreys = sps.beta(k + 0.5, n - k + 0.5)
    assert est.estimate == pytest.approx(k / n) and est.n == n
    # simulated quantiles of Beta(k + 1/2, n - k + 1/2), up to the simulation's error
    assert est.low == pytest.approx(min(jeffreys.ppf(0.025), k / n), abs=0.01)
    assert est.high == pytest.approx(max(jeffreys.ppf(0.975), k / n), abs=0.01)


def test_bounded_mean_stays_open_when_every_item_has_the_same_value() -> None:
    top = stats.bounded_mean([1.0] * 20)
    assert top.estimate == 1.0 and top.low is not None and top.low < 1.0 == top.high
    half = stats.bounded_mean([0.5] * 8)
    assert half.low is not None and half.high is not None and half.low < 0.5 < half.high
    brier = stats.bounded_mean([0.0] * 5, bounds=(0.0, 2.0))
    assert brier.low == 0.0 and brier.high is not None and 0.0 < brier.high < 2.0
    with pytest.raises(stats.StatsInputError):
        stats.bounded_mean([0.5, 1.5])
    with pytest.raises(stats.StatsInputError):
        stats.bounded_mean([])


def test_paired_bounded_difference_stays_open_when_both_agree_on_every_item() -> None:
    same = [1.0, 0.5, 1 / 3, 0.0, 1.0, 0.25, 1.0, 0.5]
    est = stats.paired_bounded_difference(same, same)
    assert est.estimate == 0.0 and est.low is not None and est.high is not None
    assert est.low < 0.0 < est.high
    hits_a = [True, True, False, True, False, True, True, False]
    hits_b = [True, False, False, True, True, False, False, False]
    assert stats.paired_bounded_difference([float(h) for h in hits_a],
                                           [float(h) for h in hits_b]) == \
        stats.paired_difference(hits_a, hits_b)
    with pytest.raises(stats.StatsInputError):
        stats.paired_bounded_difference([1, 0], [1])


# -- correlation ---------------------------------------------------------------------


@pytest.mark.parametrize("method", ["pearson", "spearman"])
def test_correlation_matches_scipy(method: str) -> None:
    x = [0.135, 0.5, 1.5, 3.0, 7.0, 8.0, 9.0, 12.0, 14.0, 32.0]
    y = [0.10, 0.32, 0.41, 0.60, 0.55, 0.71, 0.5, 0.8, 0.62, 0.9]
    res = stats.correlation(x, y, method=method)  # type: ignore[arg-type]
    ref = sps.pearsonr(x, y) if method == "pearson" else sps.spearmanr(x, y)
    assert res.estimate == pytest.approx(ref.statistic)
    assert res.p_value == pytest.approx(ref.pvalue)  # n = 10: scipy's t-based p-value
    assert res.meaningful and res.n == 10
    if method == "pearson":  # the interval is scipy's paired BCa bootstrap, same seed
        boot = sps.bootstrap((np.array(x), np.array(y)),
                             lambda u, v, axis=-1: sps.pearsonr(u, v, axis=axis).statistic,
                             paired=True, n_resamples=10_000,
                             rng=np.random.default_rng(stats.SEED))
        assert (res.low, res.high) == pytest.approx(
            (boot.confidence_interval.low, boot.confidence_interval.high))
    assert res.low is not None and res.high is not None
    assert -1.0 <= res.low <= res.high <= 1.0


@pytest.mark.parametrize("method", ["pearson", "spearman"])
def test_correlation_small_n_p_value_is_exact(method: str) -> None:
    # 4 points in perfect order: 2 of the 24 orderings are as extreme -> p = 1/12
    res = stats.correlation([0.5, 1.5, 3.0, 7.0], [0.1, 0.3, 0.5, 0.9],
                            method=method)  # type: ignore[arg-type]
    if method == "spearman":
        assert res.estimate == pytest.approx(1.0)
        assert res.p_value == pytest.approx(1 / 12)
    ref = sps.pearsonr(*((sps.rankdata(v) for v in ([0.5, 1.5, 3.0, 7.0], [0.1, 0.3, 0.5, 0.9]))
                         if method == "spearman" else
                         ([0.5, 1.5, 3.0, 7.0], [0.1, 0.3, 0.5, 0.9])),
                       method=sps.PermutationMethod(n_resamples=24))
    assert res.p_value == pytest.approx(ref.pvalue)


def test_correlation_small_n_and_constant_input() -> None:
    small = stats.correlation([1, 2, 3], [2, 1, 3])
    assert not small.meaningful and "at least 4" in (small.note or "")
    const = stats.correlation([1, 2, 3, 4], [0.5, 0.5, 0.5, 0.5], method="spearman")
    assert const.estimate is None and const.p_value is None and "constant" in (const.note or "")
    two = stats.correlation([1, 2], [3, 4])
    assert two.estimate is None and not two.meaningful


def test_correlation_bootstrap_survives_degenerate_resamples() -> None:
    # with 4 points some resamples repeat one point 4 times: r undefined there
    res = stats.correlation([1, 2, 3, 4], [1, 3, 2, 4])
    assert res.low is not None and res.high is not None
    assert res.low <= res.estimate <= res.high  # type: ignore[operator]


# -- McNemar and TOST -------------------------------------------------------------------


def test_mcnemar_exact_equals_binomial_on_discordant_pairs() -> None:
    a = [1] * 10 + [1] * 6 + [0] * 1 + [0] * 3
    b = [1] * 10 + [0] * 6 + [1] * 1 + [0] * 3
    res = stats.mcnemar(a, b)
    assert (res.both, res.only_a, res.only_b, res.neither) == (10, 6, 1, 3)
    assert res.method == "mcnemar exact"
    assert res.p_value == pytest.approx(sps.binomtest(1, 7, 0.5).pvalue)


def test_mcnemar_large_counts_use_corrected_chi2() -> None:
    # Agresti's presidential approval table: [[794, 150], [86, 570]]
    a = [1] * 794 + [1] * 150 + [0] * 86 + [0] * 570
    b = [1] * 794 + [0] * 150 + [1] * 86 + [0] * 570
    res = stats.mcnemar(a, b)
    assert res.statistic == pytest.approx((abs(150 - 86) - 1) ** 2 / (150 + 86))
    assert res.p_value == pytest.approx(sps.chi2.sf(res.statistic, 1))
    assert "chi2" in res.method


def test_mcnemar_all_ties_gives_p_one() -> None:
    res = stats.mcnemar([1, 0, 1], [1, 0, 1])
    assert res.p_value == 1.0 and res.only_a == res.only_b == 0
    single = stats.mcnemar([True], [False])
    assert single.p_value == pytest.approx(1.0)


def test_tost_of_paired_items_bounds_the_discordant_shares_exactly() -> None:
    """0/1 outcomes of two sides on the same items: the items only one side got right are the
    units that differ, each by 1; p is the binomial at the margin of the larger count."""
    from scipy.stats import binom

    a = [1, 0, 1, 1, 0, 1, 1, 1, 0, 1] * 5
    b = [1, 0, 1, 0, 0, 1, 1, 1, 1, 1] * 5  # 5 items only a, 5 only b, of 50
    res = stats.tost([x - y for x, y in zip(a, b, strict=True)], margin=0.2)
    assert res.mean_difference == pytest.approx(0.0)
    assert res.p_value == pytest.approx(binom.cdf(5, 50, 0.2)) and res.equivalent
    assert res.interval is not None and res.interval[0] > -0.2 and res.interval[1] < 0.2
    assert not stats.tost([0.0] * 40, margin=0.05).equivalent  # 0.95^40 > 0.05: too few
    with pytest.raises(stats.StatsInputError):
        stats.tost([0.0], margin=0.0)


# -- pass@k, pass^k, flips --------------------------------------------------------------


def _enumerate(n: int, c: int, k: int, every: bool) -> float:
    runs = [True] * c + [False] * (n - c)
    draws = list(itertools.combinations(runs, k))
    hits = sum(all(d) if every else any(d) for d in draws)
    return hits / len(draws)


@pytest.mark.parametrize("n,c,k", [(4, 2, 2), (5, 0, 3), (5, 5, 3), (3, 1, 1), (1, 1, 1),
                                   (6, 4, 6)])
def test_pass_k_items_equal_enumeration(n: int, c: int, k: int) -> None:
    assert stats.pass_hat_k_item(n, c, k) == pytest.approx(_enumerate(n, c, k, every=True))
    assert stats.pass_at_k_item(n, c, k) == pytest.approx(_enumerate(n, c, k, every=False))


def test_pass_hat_k_over_tasks_with_interval() -> None:
    counts = [(4, 4), (4, 2), (4, 0), (4, 3), (4, 1), (4, 4)]
    est = stats.pass_hat_k(counts, 2)
    expected = np.mean([1, 1 / 6, 0, 0.5, 0, 1])
    assert est.estimate == pytest.approx(expected)
    assert est.low is not None and est.high is not None
    assert est.low <= est.estimate <= est.high and est.n == 6
    assert est.method.startswith("pass^2")
    at = stats.pass_at_k(counts, 2)
    assert at.estimate >= est.estimate  # at least one of k passes >= all k pass
    # pass^1 == pass@1 == plain success rate
    assert stats.pass_hat_k(counts, 1).estimate == pytest.approx(14 / 24)
    assert stats.pass_at_k(counts, 1).estimate == pytest.approx(14 / 24)


def test_pass_k_rejects_too_few_repeats() -> None:
    with pytest.raises(stats.StatsInputError, match="fewer than k=3"):
        stats.pass_hat_k([(2, 1)], 3)
    with pytest.raises(stats.StatsInputError):
        stats.pass_at_k([], 1)


def test_flip_rate() -> None:
    res = stats.flip_rate({"t1": [True, True, True], "t2": [True, False, True],
                           "t3": [False, False, False], "t4": [False, True], "t5": [True]})
    assert res.items == 4  # t5 has one repeat: not counted
    assert res.flipped == ["t2", "t4"]
    assert res.rate.estimate == pytest.approx(0.5)
    assert res.rate == stats.wilson(2, 4)
    assert res.per_item["t2"] == pytest.approx(1 / 3) and res.per_item["t1"] == 0.0
    with pytest.raises(stats.StatsInputError):
        stats.flip_rate({"t": [True]})


def test_composite_interval_resamples_clusters_in_each_group() -> None:
    # per group: successes and trials per task; score = per-trial rate of the group
    groups = [([3, 1, 0, 2], [3, 3, 3, 3]), ([1, 2, 2], [3, 3, 6]), ([2, 3], [3, 3]),
              ([0, 1, 1, 2, 3], [3, 3, 3, 3, 3])]
    est = stats.composite_interval(groups)
    rates = [sum(n) / sum(d) for n, d in groups]
    assert est.estimate == pytest.approx(np.mean(rates))

    def ref_stat(*idx, axis=-1):  # type: ignore[no-untyped-def]
        return sum(np.array(n)[i.astype(int)].sum(axis=axis)
                   / np.array(d)[i.astype(int)].sum(axis=axis)
                   for (n, d), i in zip(groups, idx, strict=True)) / 4

    ref = sps.bootstrap(tuple(np.arange(len(n), dtype=float) for n, _ in groups), ref_stat,
                        n_resamples=10_000, rng=np.random.default_rng(stats.SEED))
    assert (est.low, est.high) == pytest.approx(
        (ref.confidence_interval.low, ref.confidence_interval.high))
    assert est.low <= est.estimate <= est.high  # type: ignore[operator]


def test_ratio_interval_and_edge_cases() -> None:
    one = stats.ratio_interval([2, 0, 3, 1], [3, 3, 3, 3])
    assert one.estimate == pytest.approx(0.5) and one.method.startswith("cluster bootstrap")
    held = stats.composite_interval([([1], [2]), ([0, 3, 3], [3, 3, 3])])
    assert held.estimate == pytest.approx((0.5 + 2 / 3) / 2) and held.note
    assert held.low is not None and held.low <= held.estimate <= held.high  # type: ignore[operator]
    # clusters that all agree: no spread to resample, so no interval (never [v, v])
    zeros = stats.ratio_interval([0, 0, 0], [3, 3, 3])
    assert (zeros.estimate, zeros.low, zeros.high) == (0.0, None, None)
    alike = stats.ratio_interval([2, 2, 2], [9, 9, 9])
    assert alike.low is None and alike.high is None and "no spread" in (alike.note or "")
    single = stats.composite_interval([([1], [3]), ([2], [2])])
    assert single.low is None and single.estimate == pytest.approx(2 / 3)
    with pytest.raises(stats.StatsInputError):
        stats.composite_interval([([1], [0])])
    with pytest.raises(stats.StatsInputError):
        stats.composite_interval([([], [])])


def test_an_estimate_prints_with_its_interval_or_says_it_is_undefined() -> None:
    est = stats.Estimate(estimate=0.62, low=0.481, high=0.742, method="wilson", n=50)
    assert est.formatted() == "62.0 [48.1, 74.2]"
    assert est.formatted(unit="%") == "62.0% [48.1, 74.2]"
    assert est.formatted(percent=False, digits=3) == "0.620 [0.481, 0.742]"
    undefined = stats.Estimate(estimate=None, low=None, high=None, method="pearson", n=2)
    assert undefined.formatted() == "–" and undefined.formatted(missing="--") == "--"
