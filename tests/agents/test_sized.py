"""A claim of an effect of a stated size is tested one-sided at that size (issue #60)."""

from __future__ import annotations

import numpy as np

from slmbench.agents.paired import holm_at_sizes, sized_tests
from slmbench.core import stats


def test_sized_tests_are_the_one_sided_halves_of_the_tost_at_each_size() -> None:
    rng = np.random.default_rng(7)
    d = list(np.clip(rng.normal(-0.01, 0.12, 62), -1, 1))
    sized = sized_tests(d, points=(6, 8, 10))
    for s, fall, rise in zip(sized.points, sized.fall, sized.rise, strict=True):
        tost = stats.task_tost(d, s / 100)
        assert (fall, rise) == (tost.p_lower, tost.p_upper)
    assert sized.fall == sorted(sized.fall, reverse=True)  # a larger drop: easier to exclude
    assert sized.fall_p(8) == sized.fall[1] and sized.fall_p(7) is None


def test_holm_at_sizes_adjusts_each_size_with_the_others_at_their_own() -> None:
    family = [[0.046, 0.023, 0.013], [0.03, 0.01, 0.001], [0.5, 0.4, 0.3]]
    held = holm_at_sizes(family)
    heads = stats.adjust_pvalues([0.046, 0.03, 0.5], "holm")
    assert [row[0] for row in held] == heads  # the stated sizes: plain Holm
    assert held[0][1] == stats.adjust_pvalues([0.023, 0.03, 0.5], "holm")[0]
    assert all(row == sorted(row, reverse=True) for row in held)
    assert holm_at_sizes([[0.046, 0.01]]) == [[0.046, 0.01]]  # a family of one


def _designs() -> list[list[tuple[int, int]]]:
    rng = np.random.default_rng(11)
    out = []
    for tasks, trials in ((6, 3), (14, 3), (31, 9)):
        for rate in (0.1, 0.45, 0.75, 0.95):
            out.append([(trials, int(rng.binomial(trials, rate))) for _ in range(tasks)])
    return out


def test_a_rate_past_a_bar_is_tested_one_sided_on_its_intervals_scale() -> None:
    """p ≤ 0.05 exactly when the task-level 90% interval lies past the bar, and the
    interval at 1 − 2p is the last one past the bar."""
    from slmbench.agents.dimensions import rate_p_past

    for counts in _designs():
        at90 = stats.task_level_rate(counts, confidence=0.90)
        for bar in (0.2, 0.5, 0.9):
            up, down = rate_p_past(counts, bar, above=True), rate_p_past(counts, bar, above=False)
            assert (up < 0.05) == (at90.low is not None and at90.low > bar)
            assert (down < 0.05) == (at90.high is not None and at90.high < bar)
            # the interval at 1 − 2p is the last one past the bar: a hair wider reaches it
            # (the task-level bound is a quantile of simulated draws, so it may step over the
            # bar rather than land on it)
            for p, bound in ((up, "low"), (down, "high")):
                if 1e-6 < p < 0.5:
                    sign = 1 if bound == "low" else -1
                    at = getattr(stats.task_level_rate(counts, confidence=1 - 2 * p), bound)
                    wider = getattr(stats.task_level_rate(
                        counts, confidence=min(1 - 2 * p + 1e-6, 1 - 1e-9)), bound)
                    assert sign * (at - bar) > 0 >= sign * (wider - bar)
