"""Fixtures for the agent tests."""

from __future__ import annotations

import pytest
from agent_fakes import FakeToolbox


@pytest.fixture
def toolbox() -> FakeToolbox:
    return FakeToolbox()
