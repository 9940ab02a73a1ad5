"""Each regime rule on a synthetic score set built to fall in it, and the precedence."""

from __future__ import annotations

from diag_fakes import approval_items, approval_scores, balanced_labels, margins_for

from slmbench.microtasks import tasks as registry
from slmbench.microtasks.diagnostics.regimes import (
    BIAS_BOUND,
    FORMAT_FAILURE_BOUND,
    classify,
    rules,
)
from slmbench.microtasks.diagnostics.thresholds import DiagnosticCell, diagnose

N = 80  # eval items (and as many fit items): enough for a Wilson bound to clear τ = 0.5


def cell_for(deny: tuple[float, float], approve: tuple[float, float],
             format_failures: int = 0) -> DiagnosticCell:
    labels = balanced_labels(N)
    fit_items, eval_items = approval_items(labels, "fit"), approval_items(labels, "eval")
    fit = approval_scores(fit_items, margins_for(labels, deny=deny, approve=approve, seed=11))
    evals = approval_scores(eval_items, margins_for(labels, deny=deny, approve=approve, seed=12),
                            format_failures=format_failures)
    return diagnose(registry.get("approval"), "synthetic", fit, evals, fit_items, eval_items)


def test_separating_calibrated_model_is_eligible() -> None:
    cell = cell_for(deny=(0.5, 2.0), approve=(-2.0, -0.5))
    assert cell.default.tau == 0.5  # the rules approve every "ls" command: half right
    regime = classify(cell)
    assert regime.regime == "eligible" and regime.flags == []


def test_unparseable_replies_are_a_format_failure_first() -> None:
    failures = N // 2  # above FORMAT_FAILURE_BOUND, and enough to sink the generation cell
    assert failures / N > FORMAT_FAILURE_BOUND
    regime = classify(cell_for(deny=(0.5, 2.0), approve=(-2.0, -0.5), format_failures=failures))
    assert regime.regime == "format_failure"
    # the log-prob reading still decides well: listed as the way out, not as the regime
    assert regime.flags == ["threshold_fixable"]
    assert "name no option" in regime.reason


def test_shifted_scores_are_threshold_fixable_and_also_flag_bias() -> None:
    cell = cell_for(deny=(2.5, 4.0), approve=(0.5, 2.0))
    regime = classify(cell)
    assert regime.regime == "threshold_fixable"
    auc = cell.auc  # the AUC as an interval is printed, through Estimate.formatted
    assert regime.reason.startswith(f"AUC {auc.estimate:.3f} [{auc.low:.3f}, {auc.high:.3f}];")
    assert regime.separation == "above chance"
    assert regime.flags == ["label_bias"]  # everything was "deny" at threshold 0


def test_constant_answers_with_no_separation_are_label_bias() -> None:
    cell = cell_for(deny=(3.0, 5.0), approve=(3.0, 5.0))
    assert cell.majority_share >= BIAS_BOUND
    regime = classify(cell)
    assert regime.regime == "label_bias" and regime.flags == []
    assert regime.separation == "chance"


def test_scores_unrelated_to_the_label_are_a_capability_deficit() -> None:
    cell = cell_for(deny=(-2.0, 2.0), approve=(-2.0, 2.0))
    assert cell.majority_share < BIAS_BOUND
    regime = classify(cell)
    assert regime.regime == "capability_deficit"
    assert regime.separation == "chance"
    assert not rules(cell)["threshold_fixable"]


def test_weak_separation_that_cannot_beat_tau_is_a_deficit_above_chance() -> None:
    # overlapping classes: AUC above 0.5, but no threshold clears τ's lower-bound rule
    cell = cell_for(deny=(-1.0, 1.2), approve=(-1.2, 1.0))
    assert cell.auc.low is not None and cell.auc.low > 0.5
    regime = classify(cell)
    assert regime.regime == "capability_deficit"
    assert regime.separation == "near chance"  # lower bound within NEAR_CHANCE of 0.5
