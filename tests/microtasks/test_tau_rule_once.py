"""``microtasks/RULES.md``: τ and the pass rule only in ``eligibility.py``; anything else that asks
whether a bound beats τ calls ``eligibility.decide``."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src" / "slmbench"
RULE = SRC / "microtasks" / "eligibility.py"


def _is_tau(node: ast.expr) -> bool:
    name = node.id if isinstance(node, ast.Name) else \
        node.attr if isinstance(node, ast.Attribute) else ""
    return name == "tau" or name.endswith("_tau")


def tau_comparisons(source: str) -> list[int]:
    """The line of each ordering comparison (<, <=, >, >=) with a value named ``tau``."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare) and any(
                isinstance(op, ast.Lt | ast.LtE | ast.Gt | ast.GtE) for op in node.ops) and \
                any(_is_tau(side) for side in [node.left, *node.comparators]):
            out.append(node.lineno)
    return out


def test_only_eligibility_compares_a_bound_with_tau() -> None:
    found = {str(p.relative_to(SRC)): lines for p in sorted(SRC.rglob("*.py"))
             if p != RULE and (lines := tau_comparisons(p.read_text(encoding="utf-8")))}
    assert found == {}, "call microtasks.eligibility.decide (the pass rule) instead"
    assert tau_comparisons(RULE.read_text(encoding="utf-8")), "the rule itself was not found"


def test_the_finder_sees_the_rule_written_out() -> None:
    assert tau_comparisons("ok = p.low is not None and p.low > tau\n") == [1]
    assert tau_comparisons("x = [c for c in cells if cell.tau <= c.low]\n") == [1]
    assert tau_comparisons("ok = decide(p.low, tau)\nsame = tau == 0.5\n") == []
