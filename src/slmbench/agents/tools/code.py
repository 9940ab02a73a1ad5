"""``code_interpreter``: run Python in the bubblewrap sandbox, never on the host.

The scratch folder's files are copied read-only into the sandbox's working
directory, so code can ``open("sales_q1.csv")``; files the code writes stay
inside the sandbox and vanish with it (use ``file_manager`` to keep a file).
"""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import Field

from slmbench.agents.tools.base import ToolError
from slmbench.agents.tools.common import StrictParams
from slmbench.agents.tools.sandbox import Sandbox, SandboxLimits
from slmbench.agents.world import World


class CodeInterpreter:
    name: ClassVar[str] = "code_interpreter"
    description: ClassVar[str] = (
        "Run a Python 3 program in an isolated sandbox (no network, standard library only) and "
        "get its printed output. Scratch-folder files can be opened by name, read-only. "
        "Use print() to show results.")

    class Params(StrictParams):
        code: str = Field(min_length=1, max_length=20_000, description="Python source code")

    def __init__(self, limits: SandboxLimits | None = None) -> None:
        self.sandbox = Sandbox(limits)

    def run(self, world: World, params: Params) -> dict[str, Any]:
        result = self.sandbox.run_python(params.code, files=world.files)
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
