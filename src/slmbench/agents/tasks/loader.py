"""Load a task suite from YAML: a shipped suite by name, or a user's file by path.

A suite file looks like::

    suite: capability        # default for every task below
    world_seed: 0            # default for every task below
    tasks:
      - id: IR-1
        group: information_retrieval
        ...

Any problem is a :class:`~slmbench.core.errors.ConfigError` naming the file, the
task id and the field.
"""

from __future__ import annotations

from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from slmbench.agents.tasks.model import Task
from slmbench.core.errors import ConfigError
from slmbench.core.yamlfile import load_yaml

SHIPPED_SUITES = ("capability", "capability-extra", "reliability")
_HINT = "fix the task in the file; `slmbench tasks validate FILE` checks it (docs/tasks.md)"


def suite_path(name_or_path: str | Path) -> Path:
    """Path of a shipped suite (by name), of a task pack (``pack:NAME``) or of a user's file."""
    if str(name_or_path).startswith("pack:"):
        from slmbench.agents.tasks.packs import suite_file  # built on first use (docs/packs.md)

        return suite_file(str(name_or_path))
    if str(name_or_path) in SHIPPED_SUITES:
        suites = resources.files("slmbench.agents.tasks") / "suites"
        return Path(str(suites / f"{name_or_path}.yaml"))
    path = Path(name_or_path).expanduser()
    if not path.is_file():
        raise ConfigError(
            f"no task suite {str(name_or_path)!r}: not a shipped suite and not a file",
            f"use one of {', '.join(SHIPPED_SUITES)}, pack:NAME or the path of a YAML suite",
        )
    return path


def _field(loc: tuple[int | str, ...]) -> str:
    return ".".join(str(p) for p in loc) or "(task)"


def load_suite(name_or_path: str | Path) -> list[Task]:
    """All tasks of a suite, validated; raises ConfigError naming file, task id and field."""
    path = suite_path(name_or_path)
    data: Any = load_yaml(path, hint=_HINT)
    if not isinstance(data, dict) or not isinstance(data.get("tasks"), list):
        raise ConfigError(f"{path}: a suite file is a mapping with a `tasks:` list", _HINT)
    defaults = {k: data[k] for k in ("suite", "world_seed") if k in data}
    unknown = set(data) - {"suite", "world_seed", "tasks", "description"}
    if unknown:
        raise ConfigError(f"{path}: unknown top-level key(s) {sorted(unknown)}", _HINT)
    tasks: list[Task] = []
    seen: set[str] = set()
    for i, raw in enumerate(data["tasks"]):
        if not isinstance(raw, dict):
            raise ConfigError(f"{path}: task #{i + 1} is not a mapping", _HINT)
        task_id = str(raw.get("id", f"#{i + 1}"))
        try:
            task = Task.model_validate({**defaults, **raw})
        except ValidationError as exc:
            err = exc.errors()[0]
            raise ConfigError(
                f"{path}: task {task_id}: field {_field(err['loc'])}: {err['msg']}", _HINT
            ) from exc
        _check_tools(path, task, raw)
        if task.id in seen:
            raise ConfigError(f"{path}: task {task.id}: field id: duplicate task id", _HINT)
        seen.add(task.id)
        tasks.append(task)
    if not str(name_or_path).startswith("pack:") and path.resolve() not in _shipped_files():
        _check_not_shipped(path, tasks)
    return tasks


@cache
def _shipped_files() -> frozenset[Path]:
    return frozenset(suite_path(name).resolve() for name in SHIPPED_SUITES)


@cache
def _shipped_ids() -> frozenset[str]:
    return frozenset(t.id for name in SHIPPED_SUITES for t in load_suite(name))


def _check_not_shipped(path: Path, tasks: list[Task]) -> None:
    """A user's task never reuses a shipped family's id: its instances and certification
    would be the shipped family's template, not the task written in the file."""
    for task in tasks:
        if task.id in _shipped_ids():
            raise ConfigError(f"{path}: task {task.id}: field id: id {task.id} is a shipped "
                              "family: rename it",
                              "shipped ids are listed by `slmbench tasks list`; pick an unused "
                              "one, e.g. XX-1")


def _check_tools(path: Path, task: Task, raw: dict[str, Any]) -> None:
    """Every tool a task names exists (a typo like ``calculator`` must not load)."""
    from slmbench.agents.tools.toolbox import TOOL_NAMES

    named = [(f"tools.{i}", t) for i, t in enumerate(task.tools)]
    named += [(f"reference.actions.{i}.tool", a.tool) for i, a in enumerate(task.reference.actions)]
    for where, tool in named:
        if tool not in TOOL_NAMES:
            raise ConfigError(f"{path}: task {task.id}: field {where}: unknown tool {tool!r}",
                              f"tools are: {', '.join(TOOL_NAMES)}")


def load_tasks(*names_or_paths: str | Path) -> dict[str, Task]:
    """Tasks of several suites by id (both shipped suites when none is named)."""
    out: dict[str, Task] = {}
    for name in names_or_paths or SHIPPED_SUITES:
        for task in load_suite(name):
            if task.id in out:
                raise ConfigError(f"task id {task.id} appears in more than one suite", _HINT)
            out[task.id] = task
    return out
