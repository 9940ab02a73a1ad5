"""The harness fingerprint: everything that shapes a trial besides its key, as one hash.

A :class:`~slmbench.agents.records.TrialKey` is (model, task, variant,
temperature, seed, repeat, instance). Prompt wording, the parser, the tools' specs and
the tasks' content can change under the same ids; a resumed run must never mix
trials made before and after such a change. :func:`fingerprint` hashes:

* the ReAct prompt set's templates (or the native system prompt) and the scaffold;
* :data:`PARSER_VERSION` (bump it with any change to what the parser reads) and
  :data:`LOOP_VERSION` (bump it with a change in what the loops do with a reply before and
  after the parser);
* the specs (name, description, argument schema) of all ten tools and
  :data:`TOOL_VERSION` (bump it with a change in what a tool does, e.g. the
  code tool's REPL semantics);
* :data:`~slmbench.agents.world.generate.GENERATOR_VERSION` (bumped with any change to what a
  world seed >= 1 draws, or to how a task family fills an instance from it): the tasks'
  content below is their curated form, so a drawn instance is pinned by it and this;
* the content of the tasks (their full records, sorted by id, each with its family template
  from ``agents/tasks/families/*.yaml`` where it has one);
* the toolset (``task``: each task's own tools; ``all``: the ten, as in the seed);
* where the run asks for the difficulty ladder's generated levels, their forms' templates
  (``agents/tasks/families/levels``; a trial of a generated level hashes its own level's).

The run store keeps the run's fingerprint in its meta (``harness_fingerprint``)
and each trial record its own (over its one task's family: every instance of a task shares it).
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Iterable
from typing import Any

from slmbench.agents.loop.native import NATIVE_SYSTEM_PROMPT
from slmbench.agents.loop.prompts import PROMPT_SETS
from slmbench.agents.tasks.families import template_of
from slmbench.agents.tasks.model import Task
from slmbench.agents.tools.toolbox import TOOL_NAMES, WorldToolbox
from slmbench.agents.world import World
from slmbench.agents.world.generate import GENERATOR_VERSION

__all__ = ["LOOP_VERSION", "PARSER_VERSION", "TOOL_VERSION", "fingerprint", "offered_tools"]

PARSER_VERSION = 3  # 2: call/function string keys, arguments-only objects, +alias formats;
# 3: depth and work bounds, final_answer(...) calls, Action Input ends at the next label line
# 1: think blocks split off before the parser; a cut reply with no action is truncated;
# overflow is context_overflow (issue #19); 2: a ReAct reply ends where its action is settled
# (react.ActionEnd: the backend stops or cuts it there)
LOOP_VERSION = 2
TOOL_VERSION = 2  # 2: code_interpreter shows the last expression, strips common indentation


def offered_tools(task_tools: Iterable[str], toolset: str) -> list[str]:
    """The tools a trial offers: the task's own (``task``) or all ten (``all``)."""
    return list(TOOL_NAMES) if toolset == "all" else list(task_tools)


def _task_content(task: Any) -> Any:
    """A task's full record, with its family template where it has one (what its drawn
    instances are filled from; the binders' code is pinned by GENERATOR_VERSION)."""
    if not isinstance(task, Task):
        dump = getattr(task, "model_dump", None)
        return dump(mode="json") if callable(dump) else repr(task)
    content = task.model_dump(mode="json")
    template = template_of(task)
    return content if template is None else {**content, "family_template": template}


def _level_forms(tasks: Iterable[Any], levels: Iterable[str]) -> list[Any]:
    """The templates of the ladder's generated ``levels`` of ``tasks`` (their binders' code is
    pinned by GENERATOR_VERSION)."""
    from slmbench.agents.tasks.families.levels import form_of

    out = []
    for task in tasks:
        for name in levels:
            form = form_of(task.id, name) if isinstance(task, Task) else None
            if form is not None:
                out.append({"task": task.id, "level": name, "template": dict(form.template)})
    return sorted(out, key=lambda d: (d["task"], d["level"]))


@functools.cache
def _tool_specs() -> tuple[dict[str, Any], ...]:
    """Every tool's spec as the model sees it (fixed by the code: built once, read only)."""
    return tuple(s.model_dump() for s in WorldToolbox(World.create(0)).specs())


def fingerprint(tasks: Iterable[Any], *, toolset: str = "task", prompts: str = "neutral",
                scaffold: str = "react", levels: Iterable[str] = ()) -> str:
    """A 16-hex-digit hash of the harness that runs ``tasks`` (see the module docstring), at
    the difficulty ladder's generated ``levels`` too where any is given (their forms' templates
    hashed; without levels the hash is the one from before the ladder existed)."""
    tasks = list(tasks)
    levels = [str(x) for x in levels if str(x) != "base"]
    wording = (PROMPT_SETS[prompts].model_dump() if scaffold == "react"
               else {"native": NATIVE_SYSTEM_PROMPT})
    specs = _tool_specs()
    blob = json.dumps({
        "scaffold": scaffold, "prompts": wording, "parser": PARSER_VERSION, "loop": LOOP_VERSION,
        "tools": specs, "tool_version": TOOL_VERSION, "generator": GENERATOR_VERSION,
        "toolset": toolset,
        "tasks": sorted((_task_content(t) for t in tasks), key=lambda d: json.dumps(d)),
        **({"levels": _level_forms(tasks, levels)} if levels else {}),
    }, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:16]
