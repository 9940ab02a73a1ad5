"""Do the intervals Part A prints cover the truth 95% of the time at our sample sizes?

Grid (from issue #16): true p in {0.02, 0.1, 0.3, 0.5, 0.7, 0.9, 0.98}, n in {3, 10, 30, 100},
2,000 binomial draws per point, fixed seed. Mean coverage over the grid must land in 93-97%.
"""

from __future__ import annotations

import numpy as np
import pytest

from slmbench.core import stats

PS = (0.02, 0.1, 0.3, 0.5, 0.7, 0.9, 0.98)
NS = (3, 10, 30, 100)
DRAWS = 2_000


def _coverage(interval: dict[int, stats.Estimate], p: float, ks: np.ndarray) -> float:
    hits = {k: e.low <= p <= e.high for k, e in interval.items()}  # type: ignore[operator]
    return float(np.mean([hits[int(k)] for k in ks]))


def test_wilson_dimension_intervals_cover_95_percent_over_the_grid() -> None:
    rng = np.random.default_rng(16)
    grid = {}
    for n in NS:
        wilson = {k: stats.wilson(k, n) for k in range(n + 1)}
        for p in PS:
            grid[(p, n)] = _coverage(wilson, p, rng.binomial(n, p, size=DRAWS))
    worst = min(grid, key=grid.__getitem__)
    mean = float(np.mean(list(grid.values())))
    print(f"Wilson: mean coverage {mean:.3f}; worst p={worst[0]}, n={worst[1]}: "
          f"{grid[worst]:.3f}")
    assert 0.93 <= mean <= 0.97
    assert all(e.high > e.low for e in (stats.wilson(0, 3), stats.wilson(3, 3)))
    assert stats.wilson(0, 3).high == pytest.approx(0.5615, abs=1e-4)  # 0 of 3: [0, 0.56]


def test_composite_interval_never_undercovers_the_mean_of_four_dimensions() -> None:
    """Four dimensions at the same true p, n trials each; the composite is their mean.

    The same p values, n in {3, 10, 30}, 100 draws per point (the interval is simulated per
    draw, 2,000 draws each). The method errs wide: no grid point below 93%.
    """
    rng = np.random.default_rng(17)
    grid = {}
    for n in (3, 10, 30):
        for p in PS:
            hits = 0
            for _ in range(100):
                ks = [int(k) for k in rng.binomial(n, p, size=4)]
                draws = [stats.confidence_draws(k, n, draws=2_000, stream=i)
                         for i, k in enumerate(ks)]
                est = stats.mean_of_draws([k / n for k in ks], draws, n=4 * n,
                                          method="composite")
                assert est.high > est.low  # type: ignore[operator]
                hits += est.low <= p <= est.high  # type: ignore[operator]
            grid[(p, n)] = hits / 100
    worst = min(grid, key=grid.__getitem__)
    mean = float(np.mean(list(grid.values())))
    print(f"composite: mean coverage {mean:.3f}; worst p={worst[0]}, n={worst[1]}: "
          f"{grid[worst]:.3f}")
    assert grid[worst] >= 0.93 and mean >= 0.95
