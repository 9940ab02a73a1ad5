"""Test modules that need an optional extra import it through :func:`need`.

The fast loop (``pytest -m "not embedded"``) collects with the ``test`` extra alone: a module
that needs llama-cpp-python or torch is skipped at collection with a reason naming the extra
to install. ``make test`` installs every extra, so nothing is skipped there.
"""

from __future__ import annotations

from types import ModuleType

import pytest


def need(module: str, extra: str) -> ModuleType:
    """Import ``module``, or skip the calling test module naming the extra that provides it."""
    hint = f'pip install -e ".[{extra}]"'
    return pytest.importorskip(module, reason=f"needs the {extra} extra: {hint}")
