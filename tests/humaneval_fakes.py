"""Stored HumanEval results without a model or a sandbox, for summary and page tests."""

from __future__ import annotations

from slmbench.agents import humaneval
from slmbench.agents.store import RunStore
from slmbench.agents.tasks.packs.humaneval import Problem


def fill(store: RunStore, spec: str, passed: int, n: int) -> None:
    """Store ``n`` problem results for ``spec``, the first ``passed`` of them passing."""
    for i in range(n):
        ok = i < passed
        result = humaneval.ProblemResult(
            task_id=f"HumanEval/{i}", entry_point="f", passed=ok,
            category="passed" if ok else "wrong_answer", error=None if ok else "AssertionError",
            completion="", code="", finish_reason="length" if i == n - 1 else "stop",
            prompt_tokens=10, completion_tokens=100, latency_s=1.0)
        store.put(humaneval.problem_key(spec, Problem(
            task_id=f"HumanEval/{i}", prompt="", canonical_solution="", test="",
            entry_point="f")), "pass" if ok else "fail", result)
