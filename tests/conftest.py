"""Shared fixtures: the two embedded models, loaded once per test session.

Both are real GGUF models run by llama.cpp (``make test`` pulls them first):
``smollm`` is SmolLM2-135M-Instruct (fast, weak), ``qwen05`` is
Qwen2.5-Coder-0.5B-Instruct (follows a ReAct format). Tests using them should
carry ``@pytest.mark.embedded``. Neither fixture is thread-safe to mutate;
calling ``generate``/``score`` from several threads is fine (the model locks).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest
from hypothesis import settings

if TYPE_CHECKING:
    from slmbench.models.llamacpp import LlamaCppModel


# No property test is timed (speed goes in benchmarks/, not in asserts): Hypothesis's default
# 200 ms deadline per example would fail a test on a loaded machine, or on a worker sharing
# its cores (`make test` runs on every core), for nothing the test is about.
settings.register_profile("slmbench", deadline=None)
settings.load_profile("slmbench")


def _load(name: str) -> Iterator[LlamaCppModel]:
    # Imported here, not at the top: the fast loop (`pytest -m "not embedded"`) must collect
    # with the `test` extra alone, without llama-cpp-python.
    from slmbench.models.catalog import resolve_target
    from slmbench.models.llamacpp import LlamaCppModel

    model = LlamaCppModel(resolve_target(name), spec=f"llamacpp:{name}")
    yield model
    model.close()


@pytest.fixture(scope="session")
def smollm() -> Iterator[LlamaCppModel]:
    """SmolLM2-135M-Instruct Q4_1 through llama.cpp (2 threads, n_ctx 4096)."""
    yield from _load("smollm2-135m")


@pytest.fixture(scope="session")
def qwen05() -> Iterator[LlamaCppModel]:
    """Qwen2.5-Coder-0.5B-Instruct Q4_K_M through llama.cpp (2 threads, n_ctx 4096)."""
    yield from _load("qwen2.5-coder-0.5b")
