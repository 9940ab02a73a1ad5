"""Variance components of nested data and the planned minimum detectable difference: the
mean squares against statsmodels, unbiasedness and the planned power by simulation."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import statsmodels.formula.api as smf
from scipy import stats as sps
from statsmodels.stats.anova import anova_lm

from slmbench.core.stats import (
    StatsInputError,
    VarianceComponents,
    planned_mdd,
    variance_components,
)


def _draw(rng: np.random.Generator, families: int, sizes: list[list[int]], sd: tuple[float, ...],
          mean: float = 0.0) -> list[list[np.ndarray]]:
    sd_f, sd_i, sd_t = sd
    out = []
    for f in range(families):
        u = mean + rng.normal(0, sd_f)
        out.append([u + rng.normal(0, sd_i) + rng.normal(0, sd_t, size=t) for t in sizes[f]])
    return out


def test_mean_squares_equal_statsmodels_anova_of_the_nested_model() -> None:
    rng = np.random.default_rng(3)
    sizes = [[2, 3], [1, 4, 2], [3], [2, 2, 2, 1]]
    data = _draw(rng, 4, sizes, (1.0, 0.5, 0.3))
    rows = [(f, f"{f}.{i}", y) for f, fam in enumerate(data) for i, c in enumerate(fam)
            for y in c]
    frame = pd.DataFrame(rows, columns=["family", "instance", "y"])
    table = anova_lm(smf.ols("y ~ C(instance)", data=frame).fit())  # instances nest families
    ms_w = float(table.loc["Residual", "mean_sq"])
    got = variance_components(data)
    assert got.trial == pytest.approx(ms_w, rel=1e-9)
    assert got.families == 4 and got.instances == pytest.approx(10 / 4)


def test_components_are_unbiased_before_truncation_on_an_unbalanced_design() -> None:
    rng = np.random.default_rng(11)
    truth = (0.4, 0.3, 0.5)
    sizes = [[int(rng.integers(1, 4)) for _ in range(int(rng.integers(2, 6)))]
             for _ in range(30)]
    est = np.array([[c.family, c.instance, c.trial] for c in
                    (variance_components(_draw(rng, 30, sizes, truth)) for _ in range(400))])
    means = est.mean(axis=0)
    # truncation at 0 biases a small component up; these are far enough from 0 to be within 15%
    assert means == pytest.approx([s ** 2 for s in truth], rel=0.15)


def test_one_instance_per_family_leaves_the_instance_term_inside_the_family_term() -> None:
    rng = np.random.default_rng(5)
    got = variance_components(_draw(rng, 20, [[6]] * 20, (0.3, 0.4, 0.5)))
    assert got.instance is None
    assert got.family == pytest.approx(0.3 ** 2 + 0.4 ** 2, abs=0.15)
    assert got.family_sd(5, 1) == pytest.approx(got.family_sd(1, 5))  # instances cannot help


@pytest.mark.parametrize("design", [(31, 1, 6), (31, 5, 1), (62, 3, 2)])
def test_the_planned_mdd_is_detected_with_its_power(design: tuple[int, int, int]) -> None:
    families, instances, trials = design
    comps = VarianceComponents(family=0.04, instance=0.06, trial=0.3, families=families,
                               instances=instances, trials=trials)
    mdd = planned_mdd(comps, families=families, instances=instances, trials=trials)
    assert mdd is not None and 0 < mdd < 1
    rng = np.random.default_rng(7)
    sd = (0.2, 0.06 ** 0.5, 0.3 ** 0.5)
    hits = 0
    sims = 2000
    for _ in range(sims):
        fam_means = [np.mean(np.concatenate(f)) for f in
                     _draw(rng, families, [[trials] * instances] * families, sd, mean=mdd)]
        hits += sps.ttest_1samp(fam_means, 0.0).pvalue < 0.05
    assert hits / sims == pytest.approx(0.8, abs=0.03)


def test_the_mdd_of_a_design_with_less_data_is_larger() -> None:
    comps = VarianceComponents(family=0.02, instance=0.05, trial=0.2, families=31,
                               instances=1, trials=6)
    small = planned_mdd(comps, families=31, instances=1, trials=6)
    more = planned_mdd(comps, families=31, instances=5, trials=1)
    most = planned_mdd(comps, families=62, instances=5, trials=1)
    assert small is not None and more is not None and most is not None
    assert small > more > most


def test_too_little_data_is_refused_with_a_hint() -> None:
    with pytest.raises(StatsInputError, match="≥ 2 families"):
        variance_components([[[1.0, 0.0]]])
    with pytest.raises(StatsInputError):
        variance_components([[[1.0]], [[0.0]]])
