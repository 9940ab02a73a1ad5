"""The test tree itself: pytest (rootdir imports, no packages) needs unique module names."""

from __future__ import annotations

from collections import Counter
from pathlib import Path


def test_test_module_names_are_unique() -> None:
    # Two tests/**/test_x.py files make collection fail with "import file mismatch" on a
    # clean clone, though each runs fine alone (a helper's tests/microtasks/test_store.py
    # once clashed with tests/test_store.py that way).
    names = Counter(p.name for p in Path(__file__).parent.rglob("test_*.py"))
    assert [n for n, k in names.items() if k > 1] == []
