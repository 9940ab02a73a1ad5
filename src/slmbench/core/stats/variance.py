"""Variance components (nested ANOVA, method of moments) and the planned minimum detectable
difference.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from slmbench.core.stats.pairs import minimum_detectable_difference
from slmbench.core.stats.results import StatsInputError, _Record
from slmbench.core.stats.task_level import MDD_ALPHA, MDD_POWER

# -- variance components and power planning (issue #39) ---------------------------------------
# Nested one-way ANOVA by the method of moments (Searle, Casella & McCulloch, "Variance
# Components", §4.4, unbalanced two-stage nesting); the mean squares equal statsmodels'
# ``anova_lm`` of ``y ~ C(family) / C(instance)`` (tests/core/test_power.py checks it), the
# MDD is :func:`minimum_detectable_difference`. Coverage and power: tests/core/test_power.py.


class VarianceComponents(_Record):
    """How a per-trial value (a success, or a paired difference of two) varies: between
    families (``family``), between instances of one family (``instance``; None when no
    family has two instances, so it is inside ``family`` and cannot be told apart) and
    between trials of one instance (``trial``: repeats, sampling). Estimated by the nested
    ANOVA's method of moments, each truncated at 0. ``families``, ``instances`` (mean per
    family) and ``trials`` (mean per instance) describe the data they came from."""

    family: float
    instance: float | None
    trial: float
    families: int
    instances: float
    trials: float
    method: str = "nested ANOVA, method of moments (truncated at 0)"

    def family_sd(self, instances: int, trials: int) -> float:
        """The sd of a family's mean over ``instances`` × ``trials`` cells under these
        components; an unseparated instance term stays whole (more instances do not help)."""
        if instances < 1 or trials < 1:
            raise StatsInputError(f"a design needs ≥ 1 instance and trial, not "
                                  f"{instances} × {trials}", "plan at least 1 × 1")
        inst = 0.0 if self.instance is None else self.instance / instances
        return math.sqrt(self.family + inst + self.trial / (instances * trials))


def _nested_arrays(values: Sequence[Sequence[Sequence[float]]]
                   ) -> tuple[list[list[np.ndarray]], int]:
    cells = [[np.asarray(c, dtype=float) for c in fam if len(c)] for fam in values]
    cells = [fam for fam in cells if fam]
    n = sum(c.size for fam in cells for c in fam)
    if len(cells) < 2 or n <= sum(len(fam) for fam in cells):
        raise StatsInputError(
            "variance components need ≥ 2 families and some instance with ≥ 2 trials",
            "run repeats (or instances) of at least two families")
    return cells, n


def variance_components(values: Sequence[Sequence[Sequence[float]]]) -> VarianceComponents:
    """:class:`VarianceComponents` of ``values[family][instance][trial]`` (empty instances
    and families are dropped). StatsInputError below 2 families or with no replication."""
    cells, n = _nested_arrays(values)
    a = len(cells)
    b = sum(len(fam) for fam in cells)
    grand = sum(c.sum() for fam in cells for c in fam) / n
    n_i = np.array([sum(c.size for c in fam) for fam in cells], dtype=float)
    mean_i = np.array([sum(c.sum() for c in fam) for fam in cells]) / n_i
    ss_f = float((n_i * (mean_i - grand) ** 2).sum())
    ss_i = float(sum(c.size * (c.mean() - m) ** 2 for fam, m in zip(cells, mean_i, strict=True)
                     for c in fam))
    ss_w = float(sum(((c - c.mean()) ** 2).sum() for fam in cells for c in fam))
    ms_w = ss_w / (n - b)
    sq_within = np.array([sum(c.size ** 2 for c in fam) for fam in cells], dtype=float)
    k3 = (n - (n_i ** 2).sum() / n) / (a - 1)
    k2 = ((sq_within / n_i).sum() - sq_within.sum() / n) / (a - 1)
    ms_f = ss_f / (a - 1)
    instance: float | None = None
    if b > a:
        k1 = (n - (sq_within / n_i).sum()) / (b - a)
        instance = max(0.0, (ss_i / (b - a) - ms_w) / k1)
    family = max(0.0, (ms_f - ms_w - k2 * (instance or 0.0)) / k3)
    return VarianceComponents(family=family, instance=instance, trial=max(0.0, ms_w),
                              families=a, instances=b / a, trials=n / b)


def planned_mdd(components: VarianceComponents, *, families: int, instances: int,
                trials: int, alpha: float = MDD_ALPHA, power: float = MDD_POWER
                ) -> float | None:
    """The minimum detectable difference of a paired comparison of two models on
    ``families`` families × ``instances`` × ``trials``, when ``components`` are those of the
    paired per-trial differences: :func:`minimum_detectable_difference` of the sd of a
    family's mean difference (:meth:`VarianceComponents.family_sd`) on ``families``."""
    return minimum_detectable_difference(components.family_sd(instances, trials), families,
                                         alpha=alpha, power=power)
