"""``code_interpreter``: run Python in the bubblewrap sandbox, never on the host.

The scratch folder's files are copied read-only into the sandbox's working
directory, so code can ``open("sales_q1.csv")``; files the code writes stay
inside the sandbox and vanish with it (use ``file_manager`` to keep a file).

REPL semantics, as in a Jupyter cell: the code's common indentation is
removed first (models send indented triple-quoted blocks), and when the last
statement is an expression its value is shown, ``repr`` printed after the
program's own output unless it is None (``19 * 31`` shows ``589``;
``print(x)`` shows only what it printed). See :func:`repl_source`.
"""

from __future__ import annotations

import ast
import textwrap
from typing import Any

from pydantic import Field

from slmbench.agents.tools.base import ToolError
from slmbench.agents.tools.common import StrictParams, WorldTool
from slmbench.agents.tools.sandbox import Sandbox, SandboxLimits
from slmbench.agents.world import World
from slmbench.core.pysyntax import quiet_syntax_warnings

_SHOW = "__slmbench_value__ = ({expr})\nif __slmbench_value__ is not None:\n" \
    "    print(repr(__slmbench_value__))\n"


def repl_source(code: str) -> str:
    """``code`` dedented, with a last expression statement rewritten to print its repr.

    Code that does not parse is returned dedented (the sandbox reports the error).
    """
    source = textwrap.dedent(code).strip("\n") + "\n"
    try:
        with quiet_syntax_warnings():
            tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return source
    if not tree.body or not isinstance(last := tree.body[-1], ast.Expr):
        return source
    lines = source.splitlines(keepends=True)
    start = sum(len(line) for line in lines[: last.lineno - 1]) + last.col_offset
    expr = ast.get_source_segment(source, last.value)
    if expr is None:
        return source
    prefix = source[:start]
    sep = "" if not prefix or prefix.endswith("\n") else "\n"
    return prefix + sep + _SHOW.format(expr=expr)


class CodeInterpreter(WorldTool, name="code_interpreter"):
    """Run a Python 3 program in an isolated sandbox (no network, standard library only) and get its
    printed output; as in a notebook cell, the value of a last expression is shown too.
    Scratch-folder files can be opened by name, read-only."""

    class Params(StrictParams):
        code: str = Field(min_length=1, max_length=20_000, description="Python source code")

    def __init__(self, limits: SandboxLimits | None = None) -> None:
        self.sandbox = Sandbox(limits)

    def run(self, world: World, params: Params) -> dict[str, Any]:
        result = self.sandbox.run_python(repl_source(params.code), files=world.files)
        if result.killed_reason:
            raise ToolError(f"the program was stopped: {result.killed_reason}. "
                            f"stdout: {result.stdout[-2000:]!r} stderr: {result.stderr[-2000:]!r}")
        if result.exit_code != 0:
            raise ToolError(f"the program failed (exit code {result.exit_code}):\n"
                            f"{result.stderr[-4000:]}\nstdout: {result.stdout[-2000:]}")
        out: dict[str, Any] = {"stdout": result.stdout}
        if result.stderr:
            out["stderr"] = result.stderr
        return out
