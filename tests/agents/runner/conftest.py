"""Fixtures for runner tests (the fakes themselves live in runner_fakes.py)."""

from __future__ import annotations

from typing import Any

import pytest
from runner_fakes import fake_load_suite, fake_trial, fake_variants


@pytest.fixture
def fakes() -> dict[str, Any]:
    """The injected parts of ``execute``: trial function, suite loader, variants."""
    return {"trial_fn": fake_trial, "load_suite": fake_load_suite, "variants": fake_variants}
