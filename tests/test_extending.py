"""The recipes of ``docs/extending.md``, run from the doc itself so they cannot rot.

A fenced block whose info string says ``file=PATH`` is written to PATH (a module under
``src/slmbench/`` goes into a temporary folder added to that package's search path, so the
source tree is not touched), ``edit=src/slmbench/models/spec.py`` is the ``BACKENDS`` entry
to add, ``run`` is executed: Python in-process, each ``slmbench`` line of a bash block
through the real CLI entry point, which must exit 0.
"""

from __future__ import annotations

import ast
import importlib
import re
import shlex
import sys
from pathlib import Path

import pytest

from slmbench.cli.main import main

DOC = Path(__file__).resolve().parents[1] / "docs" / "extending.md"
FENCE = re.compile(r"^```(\w+) ?([^\n]*)\n(.*?)^```", re.M | re.S)


def sections() -> dict[str, str]:
    parts = re.split(r"^## ", DOC.read_text(encoding="utf-8"), flags=re.M)
    return {p.split("\n", 1)[0].strip(): p for p in parts[1:]}


def blocks(section: str) -> list[tuple[str, str, str]]:
    """(language, info, code) of each fenced block of a section, in order."""
    return [(m[1], m[2].strip(), m[3]) for m in FENCE.finditer(sections()[section])]


def cli(line: str) -> None:
    argv = shlex.split(line)
    assert argv[0] == "slmbench", line
    with pytest.raises(SystemExit) as done:
        main(argv[1:])
    assert done.value.code in (0, None), f"`{line}` exited {done.value.code}"


def follow(section: str, tmp: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp)
    for lang, info, code in blocks(section):
        if info.startswith("file="):
            path = Path(info.removeprefix("file="))
            if path.parts[:2] == ("src", "slmbench"):
                package = ".".join(path.parts[1:-1])
                folder = tmp / "pkg" / Path(*path.parts[2:-1])
                folder.mkdir(parents=True, exist_ok=True)
                (folder / path.name).write_text(code, encoding="utf-8")
                monkeypatch.setattr(importlib.import_module(package), "__path__",
                                    [*importlib.import_module(package).__path__, str(folder)])
                monkeypatch.delitem(sys.modules, f"{package}.{path.stem}", raising=False)
            else:
                (tmp / path).write_text(code, encoding="utf-8")
        elif info == "edit=src/slmbench/models/spec.py":
            from slmbench.models.spec import BACKENDS

            for name, target in ast.literal_eval("{" + code + "}").items():
                monkeypatch.setitem(BACKENDS, name, target)
        elif info == "run" and lang == "python":
            exec(compile(code, f"{DOC.name}: {section}", "exec"), {})
        elif info == "run" and lang == "bash":
            for line in code.splitlines():
                if line.strip():
                    cli(line)
        else:
            assert not info, f"{section}: unknown block {lang} {info}"


def test_the_doc_has_its_recipes() -> None:
    assert list(sections()) == ["A new model backend", "A new Part A task file",
                                "A new micro-task",
                                "A backend and a micro-task from another package"]
    for name in ("A new model backend", "A new Part A task file"):
        assert any(info == "run" for _, info, _ in blocks(name)), name


def test_the_new_backend_recipe_runs_a_trial(tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    from slmbench.agents.store import RunStore

    follow("A new model backend", tmp_path, monkeypatch)
    with RunStore(tmp_path / "runs" / "upper") as store:
        [trial] = list(store.trials())
    assert trial.key.model == "upper:shout" and trial.key.task == "IR-1"
    assert trial.outcome == "format_failure"  # capitals are no action and no final answer


def test_the_new_task_file_recipe_validates_and_runs(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    from slmbench.agents.store import RunStore

    follow("A new Part A task file", tmp_path, monkeypatch)
    with RunStore(tmp_path / "runs" / "my-tasks") as store:
        assert {t.key.task for t in store.trials()} == {"MY-1"}
