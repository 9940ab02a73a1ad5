"""Rewordings are deterministic, really change the text, and never touch what the task needs."""

from __future__ import annotations

import re

import pytest

from slmbench.agents.tasks import load_tasks
from slmbench.agents.tasks.perturb import (
    ROBUSTNESS_VARIANTS,
    fault_plan_for,
    instruction_for,
    variants,
)
from slmbench.core.errors import ConfigError

TASKS = load_tasks()
ROBUST = [t for t in TASKS.values() if t.dimension == "robustness"]


def _protected(text: str) -> set[str]:
    """Names, numbers, dates: capitalised words and tokens with digits."""
    return set(re.findall(r"\b[A-Z][\w-]*|\S*\d\S*", text)) - {"Please", "I", "Our"}


def test_variants_per_dimension() -> None:
    assert variants(TASKS["IR-1"]) == ["base"]
    assert variants(TASKS["RC-1"]) == ["base"]
    assert variants(TASKS["RR-1"]) == ["base", *ROBUSTNESS_VARIANTS]
    assert variants(TASKS["RF-1"]) == ["base", "fault:timeout", "fault:rate_limit",
                                       "fault:malformed_result"]


@pytest.mark.parametrize("task", ROBUST, ids=lambda t: t.id)
def test_every_rewording_differs_and_is_deterministic(task) -> None:
    texts = {v: instruction_for(task, v) for v in variants(task)}
    assert len(set(texts.values())) == len(texts)  # nine distinct instructions
    assert texts == {v: instruction_for(task, v) for v in variants(task)}
    assert instruction_for(task, "typos", seed=1) != texts["typos"] or \
        instruction_for(task, "typos", seed=2) != texts["typos"]


@pytest.mark.parametrize("task", ROBUST, ids=lambda t: t.id)
def test_typos_and_reorder_keep_names_and_numbers(task) -> None:
    for variant in ("typos", "reorder", "verbose"):
        text = instruction_for(task, variant)
        missing = {w for w in _protected(task.instruction) if w not in text}
        assert not missing, (variant, missing)


def test_reorder_moves_the_question_first() -> None:
    task = TASKS["RR-1"]
    assert instruction_for(task, "reorder").startswith("Please find the total amount")


def test_concise_drops_filler() -> None:
    text = instruction_for(TASKS["RR-4"], "concise")
    assert "please" not in text.lower() and "11 March 2025" in text


def test_fault_variants_target_the_task_tool() -> None:
    plan = fault_plan_for(TASKS["RF-3"], "fault:empty_result")
    assert plan is not None
    assert (plan.tool, plan.call, plan.fault) == ("email", 1, "empty_result")
    assert fault_plan_for(TASKS["RF-3"], "base") is None


def test_unknown_variant_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="no variant 'typos'"):
        instruction_for(TASKS["IR-1"], "typos")
    with pytest.raises(ConfigError):
        fault_plan_for(TASKS["RF-1"], "fault:schema_drift")
