"""Statistics for slmbench: thin, documented wrappers over scipy and statsmodels.

Every function returns a frozen pydantic record, so a number always travels
with its interval, the method that produced it and the sample size behind it.
Nothing here re-implements a test that scipy or statsmodels already provides;
the wrappers only pick sound defaults (Wilson intervals, exact tests for small
counts, a fixed bootstrap seed, >= 10,000 resamples) and handle edge cases
(0/n, n/n, n=1, all ties) with a value and a plain ``note`` instead of a crash
or a silent NaN.

See ``docs/statistics.md`` for which test answers which question.

One package, one module per section (``results`` holds the records every function returns);
every public name is re-exported here, so callers write ``from slmbench.core.stats import X``.
Which section answers which question: ``docs/statistics.md``.
"""

from slmbench.core.stats.anytime import (
    CONSTANT_NULL,
    PAIRED_RANGE,
    PAIRED_TUNING,
    AnytimeTest,
    CellTest,
    ShareTest,
    anytime_mean,
    anytime_p_above,
    anytime_paired_binary,
    anytime_paired_binary_p,
    anytime_paired_difference,
    anytime_paired_p,
    bernoulli_log_mixture,
    cell_test,
    constant_share,
    paired_log_mixture,
)
from slmbench.core.stats.concordance import (
    Agreement,
    Spread,
    decision_agreement,
    difference_spread,
)
from slmbench.core.stats.correlation import (
    EXACT_CORRELATION_MAX_N,
    MIN_CORRELATION_N,
    correlation,
)
from slmbench.core.stats.f1 import (
    f1_interval,
    f1_score,
    paired_f1_difference,
)
from slmbench.core.stats.mcnemar import (
    mcnemar,
)
from slmbench.core.stats.pairs import (
    minimum_detectable_difference,
    task_paired,
    task_tost,
    tost,
)
from slmbench.core.stats.posterior import (
    Draws,
    bounded_mean,
    confidence_draws,
    flip_rate,
    mean_of_draws,
    paired_bounded_difference,
    paired_difference,
)
from slmbench.core.stats.proportions import (
    adjust_pvalues,
    binomial_test,
    clopper_pearson,
    cohens_h,
    compare_to_best,
    fisher_exact,
    proportion,
    wilson,
)
from slmbench.core.stats.pvalues import (
    bounded_mean_p_above,
    f1_p_above,
    fixed_p_values,
    paired_bounded_p_above,
    paired_f1_p_above,
    wilson_p_above,
)
from slmbench.core.stats.repeats import (
    pass_at_k,
    pass_at_k_item,
    pass_hat_k,
    pass_hat_k_item,
    per_task_rate,
    repeat_draws,
)
from slmbench.core.stats.resampling import (
    ConfidenceSequence,
    bootstrap_interval,
    composite_interval,
    confidence_sequence,
    ratio_interval,
)
from slmbench.core.stats.results import (
    CONFIDENCE,
    EXACT_MCNEMAR_BELOW,
    N_DRAWS,
    N_RESAMPLES,
    OUTSIDE_NOTE,
    SEED,
    Alternative,
    Correlation,
    Estimate,
    FlipRate,
    IntervalMethod,
    McNemarResult,
    ScoreKind,
    StatsInputError,
    TestResult,
    TostResult,
    VsBest,
)
from slmbench.core.stats.task_level import (
    MDD_ALPHA,
    MDD_POWER,
    TASK_LEVEL_METHOD,
    ClusteredEstimate,
    TaskComparison,
    task_level_p_past,
    task_level_rate,
    task_mean_interval,
    wider_of,
)
from slmbench.core.stats.variance import (
    VarianceComponents,
    planned_mdd,
    variance_components,
)

__all__ = [
    "CONFIDENCE",
    "CONSTANT_NULL",
    "EXACT_CORRELATION_MAX_N",
    "EXACT_MCNEMAR_BELOW",
    "MDD_ALPHA",
    "MDD_POWER",
    "MIN_CORRELATION_N",
    "N_DRAWS",
    "N_RESAMPLES",
    "OUTSIDE_NOTE",
    "PAIRED_RANGE",
    "PAIRED_TUNING",
    "SEED",
    "TASK_LEVEL_METHOD",
    "Agreement",
    "Alternative",
    "AnytimeTest",
    "CellTest",
    "ClusteredEstimate",
    "ConfidenceSequence",
    "Correlation",
    "Draws",
    "Estimate",
    "FlipRate",
    "IntervalMethod",
    "McNemarResult",
    "ScoreKind",
    "ShareTest",
    "Spread",
    "StatsInputError",
    "TaskComparison",
    "TestResult",
    "TostResult",
    "VarianceComponents",
    "VsBest",
    "adjust_pvalues",
    "anytime_mean",
    "anytime_p_above",
    "anytime_paired_binary",
    "anytime_paired_binary_p",
    "anytime_paired_difference",
    "anytime_paired_p",
    "bernoulli_log_mixture",
    "binomial_test",
    "bootstrap_interval",
    "bounded_mean",
    "bounded_mean_p_above",
    "cell_test",
    "clopper_pearson",
    "cohens_h",
    "compare_to_best",
    "composite_interval",
    "confidence_draws",
    "confidence_sequence",
    "constant_share",
    "correlation",
    "decision_agreement",
    "difference_spread",
    "f1_interval",
    "f1_p_above",
    "f1_score",
    "fisher_exact",
    "fixed_p_values",
    "flip_rate",
    "mcnemar",
    "mean_of_draws",
    "minimum_detectable_difference",
    "paired_bounded_difference",
    "paired_bounded_p_above",
    "paired_difference",
    "paired_f1_difference",
    "paired_f1_p_above",
    "paired_log_mixture",
    "pass_at_k",
    "pass_at_k_item",
    "pass_hat_k",
    "pass_hat_k_item",
    "per_task_rate",
    "planned_mdd",
    "proportion",
    "ratio_interval",
    "repeat_draws",
    "task_level_p_past",
    "task_level_rate",
    "task_mean_interval",
    "task_paired",
    "task_tost",
    "tost",
    "variance_components",
    "wider_of",
    "wilson",
    "wilson_p_above",
]
