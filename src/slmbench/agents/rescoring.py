"""Rescoring stored exports: every trial judged again by today's scorers against the question
it recorded (:func:`slmbench.agents.evaluator.rescore`), and what moved kept beside it.

:func:`rescore_exports` takes trial exports (``*trials*.jsonl.gz``, or folders holding them):
both shapes a committed export has, one ``Trial`` a line (a study's) and one stored trial a
line (``{"key", "outcome", "record", "created_at"}``, harness-validity). Each trial whose
outcome the scorers now give otherwise is rewritten (through :mod:`slmbench.core.jsonl`, only
when one moved; every other line keeps its bytes), and the folder's ``rescored.json``
(:class:`Rescored`) lists every move with its key, both outcomes, the scorer's reason and the
rule that moved it (:data:`RULES`), with the rule versions it was made under. A rerun moves
nothing more and keeps the moves listed, so the file states the same changes ever after.

A trial whose code the environment cannot run (no sandbox, or a limit stopped its tests where
they once ran) is left as it is and counted apart, never changed. A trial whose question
cannot be told, or whose task is unknown, stops the run before anything is written, named by
file and line (:class:`~slmbench.core.errors.ConfigError`).
"""

from __future__ import annotations

import gzip
import json
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from slmbench.agents.evaluator import rescore
from slmbench.agents.records import TRIAL_SCHEMA_VERSION, Outcome, Trial, TrialKey
from slmbench.agents.scoring.dumps import DUMP_RULE_VERSION
from slmbench.agents.store import StoredTrial
from slmbench.agents.tasks import Task, load_tasks
from slmbench.agents.tools.sandbox import SandboxUnavailable
from slmbench.agents.world.generate import GENERATOR_VERSION
from slmbench.core import jsonl
from slmbench.core.errors import ConfigError

__all__ = ["RESCORED_NAME", "RULES", "ExportRescore", "Moved", "Rescored", "Tally",
           "read_rescored", "rescore_exports"]

RESCORED_NAME = "rescored.json"
# the rule that moved a trial -> how a page names it
RULES: dict[str, str] = {"dumped": "dumped answers (issue #59)",
                         "scorer": "the scorers as they are today"}
HINT = "pass a trials export (trials.jsonl.gz) made by slmbench, or a folder holding one"
_STOPPED = "tests stopped:"  # a sandbox limit ended the code's tests (scoring/code.py)


class Moved(BaseModel):
    """One trial the rescoring moved: its export, key, outcome before and after, the scorer's
    reason now and the rule that moved it (a key of :data:`RULES`)."""

    model_config = ConfigDict(frozen=True)

    export: str  # the export's file name, in the folder of its rescored.json
    key: TrialKey
    before: Outcome
    after: Outcome
    reason: str
    rule: str


class Tally(BaseModel):
    """One export's trials as the last rescoring saw them."""

    model_config = ConfigDict(frozen=True)

    trials: int
    terminal: int  # ended without an answer to score: nothing to judge
    not_run: int  # code the environment could not run: left as they are


class Rescored(BaseModel):
    """A folder's ``rescored.json``: every move of its exports, and under which rules."""

    model_config = ConfigDict(frozen=True)

    version: int = 1
    rules: dict[str, int]  # dump rule, trial schema and generator versions of the last run
    exports: dict[str, Tally]
    moved: list[Moved] = Field(default_factory=list)


class ExportRescore(BaseModel):
    """What :func:`rescore_exports` did to one export (for a command to print)."""

    model_config = ConfigDict(frozen=True)

    path: Path
    tally: Tally
    moved: list[Moved]  # by this run (earlier moves stay in rescored.json)
    rewritten: bool
    wall_s: float


def read_rescored(folder: Path) -> Rescored | None:
    """The ``rescored.json`` of ``folder``; None when it has none. ConfigError, naming the
    file, when it is not one."""
    path = folder / RESCORED_NAME
    try:
        return Rescored.model_validate_json(path.read_bytes())
    except FileNotFoundError:
        return None
    except ValidationError as exc:
        raise ConfigError(f"{path} is not a rescoring record: {exc}".splitlines()[0],
                          "write it again: slmbench rescore FOLDER") from None


def _rule(before: Outcome, after: Outcome) -> str:
    return "dumped" if Outcome.DUMPED in (before, after) else "scorer"


def _not_run(old: Trial, new: Trial) -> bool:
    """Whether a limit stopped code whose tests once ran to a verdict: the machine's, now."""
    now, then = new.score, old.score
    return (now is not None and now.reason.startswith(_STOPPED)
            and (then is None or not then.reason.startswith(_STOPPED)))


def _line(row: dict[str, Any], original: str, trial: Trial) -> str:
    """The export line of ``trial`` moved: only its outcome and score change (and a stored
    trial's outcome column); written as pydantic writes the line where that is how it was
    written, else as the line's JSON with those fields replaced, every other field as it was."""
    assert trial.score is not None
    changed = {"outcome": trial.outcome.value, "score": trial.score.model_dump(mode="json")}
    if "record" in row:
        new = {**row, "outcome": trial.outcome.value, "record": {**row["record"], **changed}}
        if StoredTrial.model_validate_json(original).model_dump_json() == original:
            return StoredTrial.model_validate(new).model_dump_json()
    else:
        if Trial.model_validate_json(original).model_dump_json() == original:
            return trial.model_dump_json()
        new = {**row, **changed}
    return json.dumps(new, ensure_ascii=False, separators=(",", ":"))


def _rescore_one(path: Path, tasks: Mapping[str, Task]) -> tuple[ExportRescore, list[str]]:
    """What rescoring the export ``path`` gives, and its lines as they are to be written."""
    start = time.perf_counter()
    rows = jsonl.read_jsonl_gz(path, HINT)
    lines = [ln for ln in gzip.decompress(path.read_bytes()).decode("utf-8").splitlines()
             if ln.strip()]
    out, moved, terminal, not_run = list(lines), [], 0, 0
    for n, row in enumerate(rows, 1):
        try:
            old = Trial.model_validate(row.get("record", row))
        except ValidationError as exc:
            raise ConfigError(f"{path}: line {n} is not a trial: "
                              f"{str(exc).splitlines()[0]}", HINT) from None
        family = tasks.get(old.task_id)
        if family is None:
            raise ConfigError(f"{path}: line {n}: trial {old.model} {old.task_id} instance "
                              f"{old.instance}: no task {old.task_id} in the shipped suites",
                              "rescore it with the slmbench that has its task")
        if old.score is None:
            terminal += 1
            continue
        try:
            new = rescore(old, family)
        except SandboxUnavailable:
            not_run += 1
            continue
        except ConfigError as exc:
            raise ConfigError(f"{path}: line {n}: {exc}", exc.hint) from None
        if _not_run(old, new):
            not_run += 1
        elif new.outcome != old.outcome:
            assert new.score is not None
            moved.append(Moved(export=path.name, key=old.key, before=old.outcome,
                               after=new.outcome, reason=new.score.reason,
                               rule=_rule(old.outcome, new.outcome)))
            out[n - 1] = _line(row, lines[n - 1], new)
    return ExportRescore(path=path, tally=Tally(trials=len(rows), terminal=terminal,
                                                not_run=not_run),
                         moved=moved, rewritten=bool(moved),
                         wall_s=time.perf_counter() - start), out


def _exports(paths: Sequence[Path]) -> list[Path]:
    found: list[Path] = []
    for p in paths:
        if p.is_dir():
            inside = sorted(p.glob("*trials*.jsonl.gz"))
            if not inside:
                raise ConfigError(f"{p}: no *trials*.jsonl.gz in this folder", HINT)
            found += inside
        elif p.is_file():
            found.append(p)
        else:
            raise ConfigError(f"{p} does not exist", HINT)
    return list(dict.fromkeys(found))


def rescore_exports(paths: Sequence[Path],
                    tasks: Mapping[str, Task] | None = None) -> list[ExportRescore]:
    """Rescore every trial of the exports ``paths`` (files, or folders whose
    ``*trials*.jsonl.gz`` are taken) against its recorded question, rewrite each export where
    a trial moved, and write each folder's ``rescored.json`` (earlier moves kept); what each
    export gave, in order. ``tasks``: the families by id (the shipped suites by default)."""
    tasks = load_tasks() if tasks is None else tasks
    judged = [_rescore_one(f, tasks) for f in _exports(paths)]  # all, before any is written
    for d, lines in judged:
        if d.rewritten:
            jsonl.write_jsonl_gz(d.path, lines)
    done = [d for d, _ in judged]
    rules = {"dump_rule": DUMP_RULE_VERSION, "trial_schema": TRIAL_SCHEMA_VERSION,
             "generator": GENERATOR_VERSION}
    for folder in dict.fromkeys(d.path.parent for d in done):
        before = read_rescored(folder)
        ours = [d for d in done if d.path.parent == folder]
        moved = [*(before.moved if before else [])]
        moved += [m for d in ours for m in d.moved if m not in moved]
        exports = {**(before.exports if before else {}),
                   **{d.path.name: d.tally for d in ours}}
        record = Rescored(rules=rules, exports=dict(sorted(exports.items())), moved=moved)
        (folder / RESCORED_NAME).write_text(record.model_dump_json(indent=1) + "\n",
                                            encoding="utf-8")
    return done
