"""Part A's task-level inference (issue #37): trials repeat tasks, so the task is the unit.

Coverage grid (the issue's): tasks ∈ {8, 14, 31}, repeats ∈ {1, 3, 6}, ICC ∈ {0, 0.2, 0.4, 0.6},
mean ∈ {0.02, 0.15, 0.5}; each task's success chance drawn from the Beta of that mean and ICC
(a point mass at the mean when ICC = 0), 1,000 draws a point, fixed seed. The interval under
test is computed by the same vectorised code ``stats.task_level_rate`` calls. A second grid
(issue #39) nests trials in instances in families and clusters at the family. The sparse grid
and monotonicity of issue #60 are in test_task_level_sparse.py.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy import stats as sps
from statsmodels.stats.power import TTestPower
from statsmodels.stats.proportion import proportion_confint

from slmbench.core import stats
from slmbench.core.stats import pairs as paired_section
from slmbench.core.stats import task_level

TASKS = (8, 14, 31)
REPEATS = (1, 3, 6)
ICCS = (0.0, 0.2, 0.4, 0.6)
MEANS = (0.02, 0.15, 0.5)
DRAWS = 1_000
GRID = list(itertools.product(TASKS, REPEATS, ICCS, MEANS))


def _chances(rng: np.random.Generator, tasks: int, icc: float, mean: float,
             draws: int = DRAWS) -> np.ndarray:
    """Per-task success chances: Beta with mean ``mean`` and intraclass correlation ``icc``."""
    if icc == 0:
        return np.full((draws, tasks), mean)
    s = (1 - icc) / icc
    return rng.beta(mean * s, (1 - mean) * s, size=(draws, tasks))


def _coverage(interval: str) -> dict[tuple[int, int, float, float], float]:
    rng = np.random.default_rng(37)
    out = {}
    for tasks, m, icc, mean in GRID:
        k = rng.binomial(m, _chances(rng, tasks, icc, mean)).astype(float)
        n = np.full_like(k, m)
        if interval == "task":
            rows = task_level._task_level_rows(k, n)
            low, high = rows["low"], rows["high"]
        else:  # Wilson over the trials, as if they were independent
            low, high = proportion_confint(k.sum(axis=1), n.sum(axis=1), method="wilson")
        out[(tasks, m, icc, mean)] = float(np.mean((low <= mean) & (mean <= high)))
    return out


def _summary(name: str, grid: dict[tuple[int, int, float, float], float]) -> str:
    mean = float(np.mean(list(grid.values())))
    w14 = min((p for p in grid if p[0] >= 14), key=grid.__getitem__)
    w8 = min((p for p in grid if p[0] == 8), key=grid.__getitem__)
    return (f"{name}: mean coverage {mean:.3f} over {len(grid)} points; worst at >= 14 tasks "
            f"{grid[w14]:.3f} (tasks, repeats, ICC, mean = {w14}); worst at 8 tasks "
            f"{grid[w8]:.3f} ({w8})")


def test_task_level_interval_covers_95_percent_where_wilson_over_trials_fails() -> None:
    task, trials = _coverage("task"), _coverage("trials")
    text = _summary("task-level", task) + "\n" + _summary("Wilson over trials", trials)
    print(text)
    # issue #60: the Bayesian bootstrap over tasks errs wide (Clopper-Pearson at one trial per
    # task): 98.6% on average, 95.8% at worst from 14 tasks, where the interval it replaced
    # read 96.1% and 91.8% here but fell to 89.6% at sparse rates
    # (tests/core/test_task_level_sparse.py)
    mean = float(np.mean(list(task.values())))
    assert 0.95 <= mean <= 0.99, text
    assert min(c for p, c in task.items() if p[0] >= 14) >= 0.93, text
    # the same grid sinks the trial-level interval, so this test can fail
    naive_mean = float(np.mean(list(trials.values())))
    assert naive_mean < 0.93 and trials[(31, 6, 0.4, 0.15)] < 0.80, text


def test_one_trial_per_task_is_clopper_pearson_over_the_trials() -> None:
    """Dirichlet(1, …, 1) weights summed over k of 31 tasks plus the pseudo-task are
    Clopper-Pearson's Beta(k, 32 − k) and Beta(k + 1, 31 − k): equal up to the simulation's
    error (20,000 draws: within 0.01)."""
    for k in (0, 1, 5, 31):
        est = stats.task_level_rate([(1, 1)] * k + [(1, 0)] * (31 - k))
        ref = stats.clopper_pearson(k, 31)
        assert (est.low, est.high) == pytest.approx((ref.low, ref.high), abs=0.01)
        assert est.design_effect == 1 and est.effective_n == 31
        assert est.high > est.low


def test_clustered_successes_widen_the_interval_and_carry_the_design() -> None:
    """27 successes from 9 of 31 tasks (6 trials each): the 1.5B's shape on the v2 page."""
    counts = [(6, 3)] * 9 + [(6, 0)] * 22
    est = stats.task_level_rate(counts)
    naive = stats.wilson(27, 186)
    assert est.estimate == pytest.approx(27 / 186)
    assert est.low < naive.low and est.high > naive.high  # type: ignore[operator]
    assert est.tasks == 31 and est.n == 186 and est.trials_per_task == 6
    assert est.icc is not None and 0 < est.icc < 1
    assert est.effective_n == pytest.approx(186 / (1 + 5 * est.icc))
    assert "31 tasks × 6 trials" in est.design()


def test_the_interval_does_not_depend_on_the_order_of_the_tasks() -> None:
    """Simulated, yet the same counts in any order give the same interval (each task's
    successes are sorted within its size before the weights apply)."""
    rng = np.random.default_rng(5)
    sizes = rng.integers(1, 7, size=12)
    counts = [(int(n), int(rng.integers(0, n + 1))) for n in sizes]
    est = stats.task_level_rate(counts)
    for _ in range(5):
        shuffled = stats.task_level_rate([counts[i] for i in rng.permutation(len(counts))])
        assert (shuffled.low, shuffled.high) == (est.low, est.high)  # exactly
        assert shuffled.icc == pytest.approx(est.icc)  # the ANOVA's sums: up to round-off


def test_no_spread_is_bounded_at_the_tasks_never_a_zero_width_interval() -> None:
    """0 of 31 tasks × 6: the upper bound is Clopper-Pearson's at 0 of 31 tasks (11%, not
    Wilson(0, 186)'s 2%), up to simulation error; the design shows the worst case ICC."""
    floor = stats.task_level_rate([(6, 0)] * 31)
    assert floor.icc is None and floor.effective_n == pytest.approx(31)
    assert floor.high == pytest.approx(stats.clopper_pearson(0, 31).high, rel=0.03)
    assert floor.note and "not estimable" in floor.note


def test_icc_is_the_one_way_anova_estimator() -> None:
    # balanced: ICC = (MSB − MSW) / (MSB + (m − 1)·MSW)
    k = np.array([[3.0, 0.0, 6.0, 1.0]])
    n = np.full_like(k, 6.0)
    p_i, p = k / 6, k.sum() / 24
    msb = 6 * ((p_i - p) ** 2).sum() / 3
    msw = (6 * p_i * (1 - p_i)).sum() / (24 - 4)
    assert task_level._icc_rows(k, n)[0] == pytest.approx((msb - msw) / (msb + 5 * msw))


def test_sign_test_is_scipys_exact_binomial() -> None:
    for nz in range(1, 25):
        for ahead in range(nz + 1):
            ref = sps.binomtest(ahead, nz, 0.5).pvalue
            assert paired_section._sign_p(np.asarray(ahead), np.asarray(nz)) == pytest.approx(ref)


def test_paired_task_test_keeps_its_false_positive_rate_at_no_difference() -> None:
    """Two sides with the same per-task chances, run independently: the exact sign test across
    tasks rejects at most 5% of the time at every grid point (it is exact given the ties), and
    the paired t interval excludes 0 about 5% of the time."""
    rng = np.random.default_rng(38)
    draws, sign_fp, t_fp = 2_000, {}, {}
    for tasks, m, icc, mean in GRID:
        p = _chances(rng, tasks, icc, mean, draws)
        d = (rng.binomial(m, p) - rng.binomial(m, p)) / m
        ahead, behind = (d > 0).sum(axis=1), (d < 0).sum(axis=1)
        sign_fp[(tasks, m, icc, mean)] = float(np.mean(paired_section._sign_p(ahead, ahead + behind)
                                                       < 0.05))
        sd = d.std(axis=1, ddof=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            tstat = np.abs(d.mean(axis=1)) / (sd / np.sqrt(tasks))
        t_fp[(tasks, m, icc, mean)] = float(np.mean((sd > 0) & (tstat > sps.t.ppf(
            0.975, tasks - 1))))
    slack = 3 * np.sqrt(0.05 * 0.95 / draws)
    worst_sign = max(sign_fp, key=sign_fp.__getitem__)
    worst_t = max(t_fp, key=t_fp.__getitem__)
    text = (f"sign test: mean false-positive rate {np.mean(list(sign_fp.values())):.4f}, worst "
            f"{sign_fp[worst_sign]:.4f} at {worst_sign}; paired t: mean "
            f"{np.mean(list(t_fp.values())):.4f}, worst {t_fp[worst_t]:.4f} at {worst_t}")
    print(text)
    assert np.mean(list(sign_fp.values())) <= 0.05, text
    assert sign_fp[worst_sign] <= 0.05 + slack, text
    assert np.mean(list(t_fp.values())) <= 0.05 + slack, text


def test_paired_comparison_counts_tasks_and_prints_its_mdd() -> None:
    """9 tasks where a solves half its trials, 22 where neither solves any: 9 : 0, p 0.0039."""
    c = stats.task_paired([0.5] * 9 + [0.0] * 22, cells=31)
    assert (c.a_ahead, c.b_ahead, c.ties) == (9, 0, 22)
    assert c.sign_test.p_value == pytest.approx(2 / 2 ** 9)
    effect = TTestPower().solve_power(effect_size=None, nobs=31, alpha=0.05, power=0.8)
    assert c.mdd == pytest.approx(effect * c.sd)
    assert c.difference.low is not None and 0 < c.difference.low < c.mean_difference


def test_two_identical_sides_get_an_open_interval_and_no_mdd() -> None:
    c = stats.task_paired([0.0] * 31)
    assert c.sign_test.p_value == 1 and c.mdd is None
    assert c.difference.low < 0 < c.difference.high  # type: ignore[operator]
    assert c.difference.high == pytest.approx(1 - 0.025 ** (1 / 31))


@pytest.mark.parametrize(("kind", "tasks", "truth"), [
    ("sparse, one way", 31, 0.1), ("sparse, one way", 62, 0.05), ("sparse, both ways", 31, 0.1),
    ("3 instances a task", 31, 0.1), ("dense", 31, 0.05)])
def test_paired_interval_covers_95_percent_where_a_t_interval_alone_fails(
        kind: str, tasks: int, truth: float) -> None:
    """The printed 95% interval of a − b by task covers the true difference 95% of the time
    (less 3 Monte Carlo standard errors). The paired t interval alone covers ~86% on sparse
    one-way differences (checked here, so the case stays the hard one); the bounded-mean
    posterior alone ~92% where 62 tasks all differ a little (the dense case runs at 31 tasks
    here, for the suite's time); the hull holds in all five."""
    draws = 400
    sims = _boundary_draws(kind, tasks, truth, np.random.default_rng(43), draws)
    covered = np.mean([c.difference.low <= truth <= c.difference.high  # type: ignore[operator]
                       for c in (stats.task_paired(d) for d in sims)])
    slack = 3 * np.sqrt(0.05 * 0.95 / draws)
    assert covered >= 0.95 - slack, (kind, tasks, covered)
    if kind == "sparse, one way" and tasks == 31:
        t_covered = np.mean([(lambda ci: ci.low <= truth <= ci.high)(
            sps.ttest_1samp(d, 0.0).confidence_interval(0.95)) for d in sims if d.std() > 0])
        assert t_covered < 0.95 - slack, t_covered


def test_tost_calls_two_identical_sides_equivalent_when_the_tasks_allow() -> None:
    """Exact: equivalent within ±0.1 once 0.9^n < 0.05 (n >= 29 tasks), with the interval
    that decided inside the margin."""
    same = stats.tost([0.0] * 31, 0.1)
    assert same.equivalent and same.p_value == pytest.approx(0.9 ** 31)
    assert same.interval == pytest.approx((-(1 - 0.05 ** (1 / 31)), 1 - 0.05 ** (1 / 31)))
    assert same.formatted_interval() == "90% CI [-9.2, 9.2]"
    assert not stats.tost([0.0] * 14, 0.1).equivalent
    assert not stats.tost([0.2] * 31, 0.1).equivalent
    one_ahead = stats.tost([1.0] + [0.0] * 61, 0.1)
    assert one_ahead.equivalent and one_ahead.interval[1] > one_ahead.mean_difference  # type: ignore[index]
    # direction, not size, is what the bound can see: many small two-way differences decide
    # nothing (the documented price of exactness)
    assert not stats.tost([0.02, -0.02] * 20, 0.1).equivalent
    with pytest.raises(stats.StatsInputError):
        stats.tost([1.5, 0.0], 0.1)


def test_tost_decides_exactly_when_its_interval_lies_inside_the_margin() -> None:
    rng = np.random.default_rng(40)
    for _ in range(300):
        n = int(rng.integers(1, 80))
        d = rng.choice([-1.0, -1 / 3, 0.0, 0.0, 0.0, 1 / 3, 1.0], size=n)
        margin = float(rng.choice([0.05, 0.1, 0.2]))
        r = stats.tost(d, margin)
        low, high = r.interval  # type: ignore[misc]
        assert r.equivalent == (-margin < low and high < margin), (d, margin, r)
        assert low <= r.mean_difference <= high


def _boundary_draws(kind: str, n: int, margin: float, rng: np.random.Generator,
                    draws: int) -> np.ndarray:
    """``draws`` designs of ``n`` per-task differences whose true mean is exactly ``margin``."""
    if kind == "sparse, one way":  # the worst case for a t interval: few tasks differ, all up
        return (rng.random((draws, n)) < margin).astype(float)
    if kind == "sparse, both ways":
        u = rng.random((draws, n))
        return np.where(u < margin + 0.05, 1.0, 0.0) - np.where(u > 0.95, 1.0, 0.0)
    if kind == "3 instances a task":
        return (rng.random((draws, n, 3)) < margin).mean(axis=2)
    # dense: every task differs a little, around the margin
    return np.clip(rng.uniform(margin - 0.3, margin + 0.3, size=(draws, n)), -1, 1)


@pytest.mark.parametrize("kind", ["sparse, one way", "sparse, both ways", "3 instances a task",
                                  "dense"])
def test_tost_claims_equivalence_at_the_margin_at_most_alpha_of_the_time(kind: str) -> None:
    """At a true difference of exactly +margin (and, mirrored, -margin) equivalence may be
    claimed at most 5% of the time (plus Monte Carlo slack), and the 90% interval covers the
    true difference at least 90% of the time. A paired t TOST fails the first: 18% on sparse
    one-way differences at 31 tasks."""
    rng = np.random.default_rng(41)
    draws, margin = 2_000, 0.1
    for n in (14, 31, 62):
        for sign in (1.0, -1.0):
            sims = sign * _boundary_draws(kind, n, margin, rng, draws)
            results = [stats.tost(d, margin) for d in sims]
            claimed = np.mean([r.equivalent for r in results])
            covered = np.mean([r.interval[0] <= sign * margin <= r.interval[1]  # type: ignore[index]
                               for r in results])
            slack = 3 * np.sqrt(0.05 * 0.95 / draws)
            assert claimed <= 0.05 + slack, (kind, n, sign, claimed)
            assert covered >= 0.90 - slack, (kind, n, sign, covered)


@pytest.mark.parametrize("kind", ["sparse, one way", "sparse, both ways", "3 instances a task",
                                  "dense"])
def test_task_tost_keeps_alpha_at_the_margin_and_sees_small_differences(kind: str) -> None:
    """The interval-inclusion TOST on the 90% hull: at a true difference of exactly +margin
    it claims equivalence at most 5% of the time (plus Monte Carlo slack; its methods are
    symmetric, so −margin is the mirror image), as the exact sign bound does. Where every task
    differs a little (dense), it shows a true zero equivalent nearly always on 62 tasks, where
    the sign bound never can: the reason to use it for per-task differences of rates."""
    rng = np.random.default_rng(47)
    draws, margin = 300, 0.1
    slack = 3 * np.sqrt(0.05 * 0.95 / draws)
    for n in (31, 62):
        sims = _boundary_draws(kind, n, margin, rng, draws)
        results = [stats.task_tost(d, margin) for d in sims]
        claimed = np.mean([r.equivalent for r in results])
        assert claimed <= 0.05 + slack, (kind, n, claimed)
        assert all(r.equivalent == (-margin < r.interval[0] and r.interval[1] < margin)
                   for r in results)  # type: ignore[index]  # the interval decides
    if kind == "dense":
        zero = _boundary_draws(kind, 62, margin, rng, 100) - margin
        assert np.mean([stats.task_tost(d, margin).equivalent for d in zero]) >= 0.9
        assert not any(stats.tost(d, margin).equivalent for d in zero)


def test_task_tost_with_no_spread_is_the_exact_bound() -> None:
    """Every task differs by the same c: p = ((1 − margin)/(1 − |c|))^n, the interval the
    exact bound of task_paired at 90%."""
    same = stats.task_tost([0.0] * 31, 0.1)
    assert same.equivalent and same.p_value == pytest.approx(0.9 ** 31)
    assert not stats.task_tost([0.0] * 28, 0.1).equivalent  # (0.9)^28 = 0.052
    shifted = stats.task_tost([0.05] * 62, 0.1)
    assert shifted.equivalent and shifted.p_value == pytest.approx((0.9 / 0.95) ** 62)
    assert shifted.interval is not None and 0 <= shifted.interval[0] < 0.05 < shifted.interval[1]
    assert not stats.task_tost([0.2] * 62, 0.1).equivalent


def test_task_level_rate_is_never_zero_width_on_small_designs() -> None:
    """Every outcome of up to 4 tasks × 3 trials (and uneven sizes): low < high."""
    for tasks in range(1, 5):
        for sizes in {(m,) * tasks for m in (1, 2, 3)} | {tuple(range(1, tasks + 1))}:
            for wins in itertools.product(*(range(m + 1) for m in sizes)):
                est = stats.task_level_rate(list(zip(sizes, wins, strict=True)))
                assert est.low < est.high, (sizes, wins, est)  # type: ignore[operator]
                assert est.low <= est.estimate <= est.high  # type: ignore[operator]


def _nested(rng: np.random.Generator, families: int, instances: int, trials: int,
            mean: float, draws: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Successes of ``draws`` designs of trials nested in instances nested in families: a
    family's chance from the Beta of ``mean`` and family ICC 0.2, each instance's from a Beta
    around it (concentration 3: a third of a family's spread again between its worlds).
    Returns successes per (draw, family, instance) and the family-level (k, n) arrays."""
    p_f = np.clip(_chances(rng, families, 0.2, mean, draws), 1e-6, 1 - 1e-6)
    p_fi = rng.beta(3 * p_f[..., None], 3 * (1 - p_f[..., None]),
                    size=(draws, families, instances))
    k = rng.binomial(trials, p_fi).astype(float)
    return k, k.sum(axis=2), np.full((draws, families), float(instances * trials))


NESTED = list(itertools.product((14, 31), (3, 5), (1, 3), (0.15, 0.5)))


def test_clustered_at_the_family_the_interval_covers_with_instance_variance_present() -> None:
    """Issue #39: trials in instances in families. The task-level interval with the family as
    the cluster (every instance and repeat of a family pooled, as the analysis does) covers the
    true mean at 93–99.5% at every point (it errs wide, issue #60); clustered at the instance
    instead (each world its own task) it does not, so this test can fail."""
    rng = np.random.default_rng(39)
    draws = 2_000
    family, instance = {}, {}
    for families, instances, trials, mean in NESTED:
        cells, k, n = _nested(rng, families, instances, trials, mean, draws)
        rows = task_level._task_level_rows(k, n)
        family[(families, instances, trials, mean)] = float(
            np.mean((rows["low"] <= mean) & (mean <= rows["high"])))
        flat = cells.reshape(draws, families * instances)
        by_world = task_level._task_level_rows(flat, np.full_like(flat, float(trials)))
        instance[(families, instances, trials, mean)] = float(
            np.mean((by_world["low"] <= mean) & (mean <= by_world["high"])))
    text = (f"family-clustered: {min(family.values()):.3f}..{max(family.values()):.3f} "
            f"(mean {np.mean(list(family.values())):.3f}); instance-clustered: "
            f"{min(instance.values()):.3f}..{max(instance.values()):.3f}")
    print(text)
    assert all(0.93 <= c <= 0.995 for c in family.values()), (text, family)
    assert min(instance.values()) < 0.90, text


def _bisected_p_past(counts: list[tuple[int, int]], bar: float, above: bool) -> float:
    """The p of a rate past ``bar`` as a 40-step bisection over the confidence of
    ``task_level_rate``'s interval finds it (how slmbench computed it before issue #60's
    one-draw p): the level at which the one-sided bound reaches the bar."""
    est = stats.task_level_rate(counts)
    if est.estimate is None or (est.estimate <= bar if above else est.estimate >= bar):
        return 1.0

    def past(confidence: float) -> bool:
        e = stats.task_level_rate(counts, confidence=confidence)
        return e.low > bar if above else e.high < bar  # type: ignore[operator]

    lo, hi = 1e-9, 1.0 - 1e-9
    if past(hi):
        return (1.0 - hi) / 2
    if not past(lo):
        return 1.0
    for _ in range(40):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if past(mid) else (lo, mid)
    return (1.0 - lo) / 2


@pytest.mark.parametrize(("counts", "bar", "above"), [
    ([(3, 2), (3, 3), (3, 1), (3, 3), (3, 2), (3, 3), (3, 0), (3, 3)], 0.5, True),
    ([(9, 1), (9, 0), (9, 2), (9, 0), (9, 0), (9, 1)] * 3, 0.2, False),
    ([(3, 2), (2, 1), (3, 3)], 0.5, True),
    ([(5, 5)] * 12, 0.1, True),  # every draw past the bar: the narrowest level
    ([(5, 3), (6, 3), (9, 9), (7, 2), (6, 5)], 0.66, True),  # the draws' centre not past: 1
    ([(3, 1)] * 8, 0.5, True),  # the estimate not past: 1
])
def test_p_past_a_bar_is_read_off_one_set_of_draws_as_the_bisection_finds_it(
        counts: list[tuple[int, int]], bar: float, above: bool) -> None:
    p = stats.task_level_p_past(counts, bar, above=above)
    assert p == pytest.approx(_bisected_p_past(counts, bar, above), abs=1e-12)
    if 1e-6 < p < 0.5:  # the interval at 1 − 2p is past the bar; a hair wider is not
        bound = "low" if above else "high"
        sign = 1 if above else -1
        at = getattr(stats.task_level_rate(counts, confidence=1 - 2 * p), bound)
        wider = getattr(stats.task_level_rate(counts, confidence=1 - 2 * p + 1e-9), bound)
        assert sign * (at - bar) > 0 >= sign * (wider - bar)
