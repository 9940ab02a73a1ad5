"""Code answers: the agent's code plus the task's tests, run in the bubblewrap sandbox.

The code comes from the scratch file the task names (``CodeSpec.file``) in the
post-trial world, else from the final answer (its first fenced block, or the
whole answer). It passes when the program ``code + tests`` exits 0; tests are
plain ``assert`` statements. Nothing is ever run outside the sandbox.
"""

from __future__ import annotations

import re
from typing import Any

from slmbench.agents.records import Score
from slmbench.agents.tasks.model import CodeSpec
from slmbench.agents.tools.sandbox import Sandbox

_FENCE = re.compile(r"```(?:python|py)?[ \t]*\n(.*?)```", re.DOTALL | re.IGNORECASE)


def extract_code(answer: str) -> str:
    """The first fenced code block of an answer, else the answer itself."""
    m = _FENCE.search(answer)
    return m.group(1) if m else answer


def score_code(spec: CodeSpec, answer: str, state: dict[str, Any],
               sandbox: Sandbox | None = None) -> Score:
    """Pass iff the agent's code passes the task's tests inside the sandbox."""
    files: dict[str, str] = state.get("files", {})
    if spec.file is not None:
        if spec.file not in files:
            return Score(value=0.0, passed=False, reason=f"no file {spec.file} was written")
        code = files[spec.file]
    else:
        code = extract_code(answer)
    if not code.strip():
        return Score(value=0.0, passed=False, reason="no code to test")
    result = (sandbox or Sandbox()).run_python(f"{code}\n\n# --- task tests ---\n{spec.tests}\n",
                                               files=files)
    if result.killed_reason:
        return Score(value=0.0, passed=False, reason=f"tests stopped: {result.killed_reason}")
    if result.exit_code != 0:
        last = (result.stderr.strip().splitlines() or ["(no error output)"])[-1]
        return Score(value=0.0, passed=False, reason=f"tests failed: {last[:200]}")
    return Score(value=1.0, passed=True, reason="the code passes the task's tests")
