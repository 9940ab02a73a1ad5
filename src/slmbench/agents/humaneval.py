"""HumanEval pass@1, the standard direct way, and the comparison with a published figure.

For each problem the instruct model gets one user message (through its own chat template)::

    Complete the following Python function. Reply with the complete function, including
    its imports, in one ```python code block.

    ```python
    <the problem's prompt: imports, helpers, signature and docstring>
    ```

Decoding is greedy (temperature 0) with ``max_tokens`` (default 512) and no extra stop
strings. :func:`sanitize` keeps the imports, functions, classes and module constants of the
code block that defines the entry point (prose, ``print`` calls, example usage, the model's
own asserts and ``__main__`` blocks are dropped; a block cut off by the token limit is
trimmed back to the last line that parses). The program run in the bubblewrap sandbox is::

    <the prompt's imports and helpers> + <sanitised code> + <the problem's test> + check(entry)

A problem passes when that program exits 0 within the sandbox limits. Each problem is one
trial in a :class:`~slmbench.agents.store.RunStore` (variant ``direct``), so a killed run resumes
where it stopped. pass@1 is the share passed, with a Wilson 95% interval.
"""

from __future__ import annotations

import ast
import contextlib
import re
from collections import Counter
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from slmbench.agents.records import TrialKey
from slmbench.agents.store import Carried, RunStore
from slmbench.agents.tasks.packs import ensure_pack
from slmbench.agents.tasks.packs.humaneval import Problem, read_problems
from slmbench.agents.tools.sandbox import Sandbox, SandboxLimits
from slmbench.core.errors import ConfigError
from slmbench.core.pysyntax import quiet_syntax_warnings
from slmbench.core.stats import Estimate, wilson
from slmbench.models.base import Model
from slmbench.models.records import Message

VARIANT = "direct"
PROMPT = ("Complete the following Python function. Reply with the complete function, including "
          "its imports, in one ```python code block.\n\n```python\n{prompt}\n```")
MAX_TOKENS = 512
LIMITS = SandboxLimits(wall_seconds=20.0, cpu_seconds=10)

# Qwen2.5-Coder technical report, instruct models, HumanEval pass@1 (%), bf16, greedy.
PUBLISHED: dict[str, float] = {"qwen2.5-coder-0.5b": 61.6, "qwen2.5-coder-1.5b": 70.7}

Category = Literal["passed", "no_function", "wrong_answer", "error", "timeout"]


class Sanitized(BaseModel):
    """The code kept from a model's reply."""

    model_config = ConfigDict(frozen=True)

    code: str
    defines_entry: bool
    fenced: bool
    trimmed_lines: int = Field(default=0, ge=0)  # lines cut from a block that did not parse


class ProblemResult(BaseModel):
    """One problem's outcome, as stored in the run."""

    model_config = ConfigDict(frozen=True)

    task_id: str
    entry_point: str
    passed: bool
    category: Category
    error: str | None = None  # exception type, or the limit that stopped the run
    detail: str = ""  # last line of the test program's error output
    completion: str
    code: str
    finish_reason: str
    prompt_tokens: int = Field(ge=0)
    completion_tokens: int = Field(ge=0)
    latency_s: float = Field(ge=0.0)


class Comparison(BaseModel):
    """Our pass@1 next to the published figure."""

    model_config = ConfigDict(frozen=True)

    published: float  # in [0, 1]
    inside: bool  # the published figure lies inside our 95% interval
    difference: float  # ours - published


class HarnessCheck(BaseModel):
    """The dataset's canonical solutions, put through the same sanitiser and sandbox."""

    model_config = ConfigDict(frozen=True)

    n: int
    passed: int
    failed: list[str] = Field(default_factory=list)


class Summary(BaseModel):
    """pass@1 of one model in one run, with failure categories."""

    model_config = ConfigDict(frozen=True)

    model: str
    n: int
    passed: int
    pass_at_1: Estimate
    categories: dict[str, int]
    errors: dict[str, int]  # exception types among failures
    truncated: int  # replies cut by the token limit
    mean_completion_tokens: float
    max_tokens: int | None = None
    failed: dict[str, list[str]] = Field(default_factory=dict)  # category -> task ids
    comparison: Comparison | None = None


# -- sanitising -----------------------------------------------------------------------------

_BLOCK = re.compile(r"```[ \t]*(?:python3?|py)?[ \t]*\n(.*?)(?:```|\Z)", re.DOTALL | re.IGNORECASE)
_CODE_START = re.compile(r"^(?:def |async def |class |import |from |@)")
_KEEP = (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef,
         ast.Assign, ast.AnnAssign)


def _parse(code: str) -> tuple[ast.Module, str, int] | None:
    """Parse ``code``, trimming trailing lines (a cut-off reply) until it parses."""
    lines = code.splitlines()
    for cut in range(len(lines)):
        text = "\n".join(lines[: len(lines) - cut])
        with quiet_syntax_warnings(), contextlib.suppress(SyntaxError):
            return ast.parse(text), text, cut
    return None


def _kept_source(tree: ast.Module, text: str) -> str:
    """The source of the kept statements; runs of kept statements keep their own layout."""
    lines = text.splitlines()
    runs: list[tuple[int, int]] = []
    previous_kept = False
    for node in tree.body:
        if not isinstance(node, _KEEP):
            previous_kept = False
            continue
        decorators = getattr(node, "decorator_list", [])
        start = min([node.lineno, *(d.lineno for d in decorators)])
        end = node.end_lineno or node.lineno
        if previous_kept:
            runs[-1] = (runs[-1][0], end)
        else:
            runs.append((start, end))
        previous_kept = True
    return "\n\n".join("\n".join(lines[a - 1: b]) for a, b in runs)


def _defines(tree: ast.Module, name: str) -> bool:
    return any(isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and n.name == name
               for n in tree.body)


def _from_code_start(text: str) -> str:
    """Unfenced replies: drop prose lines before the first line that starts code."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if _CODE_START.match(line):
            return "\n".join(lines[i:])
    return text


def sanitize(reply: str, entry_point: str) -> Sanitized:
    """The code to test from a model's reply (see the module docstring)."""
    blocks = [m.group(1) for m in _BLOCK.finditer(reply)]
    fenced = bool(blocks)
    candidates = [*blocks, "\n\n".join(blocks)] if len(blocks) > 1 else blocks
    if not fenced:
        candidates = [reply, _from_code_start(reply)]
    first: Sanitized | None = None
    for candidate in candidates:
        parsed = _parse(candidate)
        if parsed is None:
            continue
        tree, text, cut = parsed
        found = Sanitized(code=_kept_source(tree, text), defines_entry=_defines(tree, entry_point),
                          fenced=fenced, trimmed_lines=cut)
        if found.defines_entry:
            return found
        first = first or found
    return first or Sanitized(code="", defines_entry=False, fenced=fenced)


# -- running --------------------------------------------------------------------------------

_EXC = re.compile(r"^([A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt|Warning))\b")


def program(problem: Problem, code: str) -> str:
    """The program the sandbox runs for one answer."""
    return (f"{problem.support_code()}\n\n{code}\n\n# --- HumanEval tests ---\n"
            f"{problem.test}\n\ncheck({problem.entry_point})\n")


def check_answer(problem: Problem, reply: str, sandbox: Sandbox) -> tuple[Category, str | None,
                                                                          str, Sanitized]:
    """Sanitise ``reply`` and run the problem's tests on it: (category, error, detail, code)."""
    clean = sanitize(reply, problem.entry_point)
    if not clean.defines_entry:
        return "no_function", None, f"no function {problem.entry_point} in the reply", clean
    result = sandbox.run_python(program(problem, clean.code))
    if result.killed_reason:
        category: Category = "timeout" if result.timed_out else "error"
        return category, result.killed_reason, result.killed_reason, clean
    if result.exit_code == 0:
        return "passed", None, "", clean
    last = (result.stderr.strip().splitlines() or ["(no error output)"])[-1][:300]
    m = _EXC.match(last)
    error = m.group(1) if m else "unknown"
    return ("wrong_answer" if error == "AssertionError" else "error"), error, last, clean


def harness_check(problems: Iterable[Problem], sandbox: Sandbox | None = None) -> HarnessCheck:
    """Every canonical solution, fenced as a model would reply, must pass: else the harness
    (sanitiser, sandbox limits, program layout) is at fault, not the model."""
    sandbox = sandbox or Sandbox(LIMITS)
    failed: list[str] = []
    n = 0
    for problem in problems:
        n += 1
        reply = f"```python\n{problem.prompt}{problem.canonical_solution}```"
        if check_answer(problem, reply, sandbox)[0] != "passed":
            failed.append(problem.task_id)
    return HarnessCheck(n=n, passed=n - len(failed), failed=failed)


def problem_key(model_spec: str, problem: Problem) -> TrialKey:
    return TrialKey(model=model_spec, task=problem.task_id, variant=VARIANT)


def carried(model_spec: str, result: ProblemResult) -> Carried:
    """A stored result as it travels into a run store (:meth:`RunStore.merge`)."""
    return Carried(TrialKey(model=model_spec, task=result.task_id, variant=VARIANT),
                   "pass" if result.passed else "fail", result)


def result_name(key: TrialKey) -> str:
    """How a refused merge names a result: ``HumanEval MODEL TASK``."""
    return f"HumanEval {key.model} {key.task}"


def solve(model: Model, problem: Problem, *, max_tokens: int = MAX_TOKENS,
          sandbox: Sandbox | None = None) -> ProblemResult:
    """Ask the model once (greedy) and test its answer."""
    completion = model.generate(
        [Message(role="user", content=PROMPT.format(prompt=problem.prompt.rstrip()))],
        temperature=0.0, seed=0, max_tokens=max_tokens)
    category, error, detail, clean = check_answer(problem, completion.text,
                                                  sandbox or Sandbox(LIMITS))
    return ProblemResult(
        task_id=problem.task_id, entry_point=problem.entry_point, passed=category == "passed",
        category=category, error=error, detail=detail, completion=completion.text,
        code=clean.code, finish_reason=completion.finish_reason,
        prompt_tokens=completion.prompt_tokens, completion_tokens=completion.completion_tokens,
        latency_s=completion.latency_s)


def default_run_dir(model_spec: str) -> Path:
    """``runs/humaneval-<model name>``: where ``slmbench humaneval`` keeps a model's run."""
    return Path("runs") / f"humaneval-{model_name(model_spec)}"


def pending(store: RunStore, model_spec: str, problems: Iterable[Problem]) -> int:
    """How many of ``problems`` the store holds no result for yet."""
    return sum(not store.has(problem_key(model_spec, p)) for p in problems)


def run(model: Model, problems: Iterable[Problem], store: RunStore, *,
        max_tokens: int = MAX_TOKENS, sandbox: Sandbox | None = None,
        on_result: Callable[[ProblemResult], None] | None = None,
        source: dict[str, object] | None = None) -> int:
    """Solve every problem the store does not hold yet; returns how many were run now.
    ``source`` (the pack's provenance) is kept in the store for the results page."""
    if source is not None:
        store.set_meta(SOURCE_META, source)
    settings = {"prompt": PROMPT, "max_tokens": max_tokens, "temperature": 0.0}
    stored = store.get_meta(f"humaneval:{model.spec}")
    if stored is not None and stored != settings:
        raise ConfigError(f"{store.run_dir} holds HumanEval results of {model.spec} made with "
                          "other settings", "use a new --out directory for new settings")
    store.set_meta(f"humaneval:{model.spec}", settings)
    sandbox = sandbox or Sandbox(LIMITS)
    ran = 0
    for problem in problems:
        key = problem_key(model.spec, problem)
        if store.has(key):
            continue
        result = solve(model, problem, max_tokens=max_tokens, sandbox=sandbox)
        store.put(key, "pass" if result.passed else "fail", result)
        ran += 1
        if on_result:
            on_result(result)
    return ran


def load_problems(limit: int | None = None) -> list[Problem]:
    """The 164 problems of the ``humaneval`` pack (built on first use), or the first ``limit``."""
    problems = read_problems(ensure_pack("humaneval"))
    return problems[:limit] if limit is not None else problems


# -- summary ---------------------------------------------------------------------------

def model_name(spec: str) -> str:
    """``llamacpp:qwen2.5-coder-0.5b`` or ``llamacpp:/x/qwen2.5-coder-0.5b.gguf`` -> name."""
    target = spec.split(":", 1)[-1].split("?", 1)[0]
    return Path(target).name.removesuffix(".gguf")


def results(store: RunStore, model_spec: str) -> list[ProblemResult]:
    return [ProblemResult.model_validate(t.record) for t in store.trials(model_spec)
            if t.key.variant == VARIANT]


def summarize(store: RunStore, model_spec: str) -> Summary:
    """pass@1 with its Wilson interval, failure categories and the published comparison."""
    done = sorted(results(store, model_spec), key=lambda r: int(r.task_id.rsplit("/", 1)[-1]))
    if not done:
        raise ConfigError(f"{store.run_dir} holds no HumanEval results for {model_spec}",
                          "run `slmbench humaneval --model SPEC --out DIR` first")
    passed = sum(r.passed for r in done)
    estimate = wilson(passed, len(done))
    comparison = None
    if (published := PUBLISHED.get(model_name(model_spec))) is not None:
        p = published / 100
        assert estimate.low is not None and estimate.high is not None
        comparison = Comparison(published=p, inside=estimate.low <= p <= estimate.high,
                                difference=passed / len(done) - p)
    return Summary(
        model=model_spec, n=len(done), passed=passed, pass_at_1=estimate,
        categories=dict(Counter(r.category for r in done)),
        errors=dict(Counter(r.error for r in done if r.error and not r.passed)),
        truncated=sum(r.finish_reason == "length" for r in done),
        mean_completion_tokens=sum(r.completion_tokens for r in done) / len(done),
        max_tokens=(store.get_meta(f"humaneval:{model_spec}") or {}).get("max_tokens"),
        failed={c: [r.task_id for r in done if r.category == c]
                for c in sorted({r.category for r in done if not r.passed})},
        comparison=comparison)


SOURCE_META = "humaneval:source"


def summaries(run_dirs: Iterable[Path]) -> list[Summary]:
    out: list[Summary] = []
    for run_dir in run_dirs:
        if not (run_dir / "run.sqlite").is_file():
            raise ConfigError(f"{run_dir} is not a HumanEval run directory",
                              "give the --out directory of `slmbench humaneval`")
        with RunStore(run_dir) as store:
            out += [summarize(store, m) for m in store.models()]
    return out


def source_provenance() -> dict[str, object]:
    """The built pack's provenance, to store with a run."""
    from slmbench.agents.tasks.packs import read_provenance

    return read_provenance(ensure_pack("humaneval")).model_dump(mode="json")


class HumanEvalRuns(BaseModel):
    """What the HumanEval page is made of, read from stored runs: each model's summary, the
    run directories, the pack's provenance (None: no run stored it) and the harness check."""

    model_config = ConfigDict(frozen=True)

    summaries: list[Summary]
    run_dirs: list[Path]
    source: dict[str, object] | None
    check: HarnessCheck


def read_runs(run_dirs: list[Path], *, problems: list[Problem] | None = None) -> HumanEvalRuns:
    """The summaries and provenance of ``run_dirs``, and the harness check on ``problems``
    (default: the pack's 164); ConfigError if one is not a HumanEval run directory."""
    found = summaries(run_dirs)
    source = None
    for run_dir in run_dirs:
        with RunStore(run_dir) as store:
            source = source or store.get_meta(SOURCE_META)
    return HumanEvalRuns(summaries=found, run_dirs=list(run_dirs), source=source,
                         check=harness_check(load_problems() if problems is None else problems))
