"""Backfill the question of every Part A trial in committed exports (issue #59, part 1).

Trials record their question from trial schema 4 on (``Trial.question``,
``slmbench.agents.questions``). An export made before carries none; this script fills each
trial's question from the code that made it, proven by its recorded harness fingerprint
(``Trial.harness``, ``slmbench.agents.harness``: it hashes the task's full record, its family
template and ``GENERATOR_VERSION``, with the prompts, parser and tools):

* this checkout, where the trial's fingerprint is the one its family has here: the question
  is the instance today's binders draw (:func:`~slmbench.agents.questions.question_for`);
* else an older commit of this repository (``SOURCES``: the commits the export's runs were
  made at, or ``--at COMMIT``) whose code gives the trial's task that fingerprint: the question
  is that commit's instance of the task, and its ``GENERATOR_VERSION`` (None before the
  version existed, when every trial was of a curated task). The commit's ``src`` is read with
  ``git archive`` and run in a subprocess with this interpreter.

A trial no source reproduces stops the script before anything is written (exit 2), naming
the file, line and trial. Each export is rewritten through ``slmbench.core.jsonl``
(reproducible gzip), only when a question was missing; every other field of every line keeps
its bytes, and a record keeps its ``schema_version`` (the schema it ran under). Both export
shapes are read: one ``Trial`` a line (study exports) and one stored trial a line
(``{"key", "outcome", "record", "created_at"}``, harness-validity).

Usage (from the repository root, ``PYTHONPATH=src``)::

    python scripts/backfill_questions.py [--at COMMIT ...] [--check] [EXPORT ...]

With no EXPORT, every ``*trials*.jsonl.gz`` under ``docs/results`` and ``experiments``.
``--check`` writes nothing and exits 1 if any trial of the exports lacks its question.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Iterable
from io import BytesIO
from pathlib import Path
from typing import Any

from slmbench.agents.questions import made_here, question_for
from slmbench.agents.records import Question, Trial
from slmbench.agents.store import StoredTrial
from slmbench.agents.tasks import Task, load_tasks
from slmbench.agents.tasks.families import instance
from slmbench.core.errors import ConfigError
from slmbench.core.jsonl import read_jsonl_gz, write_jsonl_gz

ROOT = Path(__file__).resolve().parents[1]
HINT = "pass a trials export (trials.jsonl.gz) made by slmbench"

# the commits whose code made each committed export that this checkout's harness does not
# reproduce (found by reproducing every trial's fingerprint): the v2 study's trials
# (61ebb85, the v2 page), suites-embedded (af6c085), and the harness-validity runs of
# 1 December 08:37-09:43 (bb938ff, the last commit of their branch before them)
V2 = "61ebb859fe73f2b36e95dcfe2cdb43a8e2802825"
SOURCES: dict[str, tuple[str, ...]] = {
    "docs/results/reference-study/trials.jsonl.gz": (V2,),
    "experiments/reference-v2-stored/trials.jsonl.gz": (V2,),
    "docs/results/suites-embedded/trials.jsonl.gz": ("af6c08567817c1ffccb9e59cd3173ee480852ec9",),
    "docs/results/harness-validity/legacy-trials.jsonl.gz":
        ("bb938ffedb9f7b38a793087dcba9d2645cbf7176",),
    "docs/results/harness-validity/neutral-trials.jsonl.gz":
        ("bb938ffedb9f7b38a793087dcba9d2645cbf7176",),
}

# run under an older commit's src: each wanted (task, instance, toolset, prompts, scaffold)'s
# harness fingerprint and the instance's task record, and that code's GENERATOR_VERSION
_AT_COMMIT = """
import json, sys
from slmbench.agents.harness import fingerprint
from slmbench.agents.tasks import load_tasks
try:
    from slmbench.agents.world.generate import GENERATOR_VERSION as generator
except ImportError:
    generator = None
tasks, out = load_tasks(), {}
for task_id, seed, toolset, prompts, scaffold in json.load(sys.stdin):
    family = tasks.get(task_id)
    if family is None:
        continue
    if seed:
        from slmbench.agents.tasks.families import instance
        asked = instance(family, seed)
    else:
        asked = family
    key = "|".join(map(str, (task_id, seed, toolset, prompts, scaffold)))
    out[key] = {"harness": fingerprint([family], toolset=toolset, prompts=prompts,
                                       scaffold=scaffold),
                "task": asked.model_dump(mode="json")}
json.dump({"generator": generator, "asked": out}, sys.stdout)
"""

Want = tuple[str, int, str, str, str]  # task, instance, toolset, prompts, scaffold


def exports(root: Path = ROOT) -> list[Path]:
    """Every committed Part A trials export."""
    return sorted(p for folder in ("docs/results", "experiments")
                  for p in (root / folder).glob("**/*trials*.jsonl.gz"))


def _record(row: dict[str, Any]) -> dict[str, Any]:
    """The trial record of an export line (a Trial, or a stored trial's ``record``)."""
    record = row.get("record", row)
    if not isinstance(record, dict):
        raise ConfigError("a line holds no trial record", HINT)
    return record


def _want(trial: Trial) -> Want:
    return (trial.task_id, trial.instance, trial.toolset, trial.prompts, trial.scaffold)


def _question(task: dict[str, Any], generator: int | None) -> Question:
    """The question of a task record as an older commit dumped it (``question_for``'s facts)."""
    return Question(
        generator=generator, world_seed=task.get("world_seed", 0),
        instruction=task["instruction"], paraphrases=task.get("paraphrases", []),
        tools=task.get("tools", []), reference=task["reference"].get("actions", []),
        answer=task["reference"]["answer"], evidence=task.get("evidence", []),
        scorer=task["scorer"])


def at_commit(commit: str, wanted: Iterable[Want]) -> dict[Want, tuple[str, Question]]:
    """What the code of ``commit`` gives each wanted trial: (harness fingerprint, question)."""
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", commit, "src"],
                             capture_output=True, check=True).stdout
    with tempfile.TemporaryDirectory(prefix="backfill-") as tmp:
        with tarfile.open(fileobj=BytesIO(archive)) as tar:
            tar.extractall(tmp, filter="data")
        env = {**os.environ, "PYTHONPATH": str(Path(tmp) / "src")}
        done = subprocess.run([sys.executable, "-c", _AT_COMMIT], env=env, text=True,
                              input=json.dumps(sorted(set(wanted))), capture_output=True)
    if done.returncode != 0:
        raise ConfigError(f"commit {commit[:10]} could not fingerprint its tasks: "
                          f"{done.stderr.strip().splitlines()[-1:]}", "pass another --at")
    found = json.loads(done.stdout)
    return {w: (got["harness"], _question(got["task"], found["generator"]))
            for w in wanted if (got := found["asked"].get("|".join(map(str, w))))}


def _line(row: dict[str, Any], filled: dict[str, Any], original: str) -> str:
    """The export line with its record ``filled``: as pydantic writes the line's shape (a
    ``Trial``, or a ``StoredTrial`` holding one) where that is how the line was written, so
    every other field keeps its bytes; else the JSON of the filled line."""
    if "record" in row:  # a stored trial: its record is kept as JSON, as it was
        new = {**row, "record": filled}
        if StoredTrial.model_validate_json(original).model_dump_json() == original:
            return StoredTrial.model_validate(new).model_dump_json()
    else:  # a Trial line written before the question existed (so without its key)
        new = filled
        if Trial.model_validate_json(original).model_dump_json(exclude={"question"}) == original:
            return Trial.model_validate(new).model_dump_json()
    return json.dumps(new, ensure_ascii=False, separators=(",", ":"))


def backfill(path: Path, tasks: dict[str, Task], commits: Iterable[str]) -> tuple[int, int]:
    """Fill the questions of the export ``path`` (rewritten only when one was missing) from
    this checkout or ``commits``; (trials, questions filled). ConfigError naming the trial when
    no source reproduces its harness."""
    lines = [ln for ln in gzip.decompress(path.read_bytes()).decode("utf-8").splitlines()
             if ln.strip()]
    rows = read_jsonl_gz(path, HINT)
    trials = [Trial.model_validate(_record(r)) for r in rows]
    lacking = [t for t in trials if t.question is None]
    older: dict[tuple[Want, str], Question] = {}  # (want, harness) -> the question it asked
    stranger = {_want(t) for t in lacking
                if t.task_id not in tasks or not made_here(t, tasks[t.task_id])}
    for commit in commits:
        for want, (harness, question) in at_commit(commit, stranger).items():
            older.setdefault((want, harness), question)
    out = []
    for n, (row, original, trial) in enumerate(zip(rows, lines, trials, strict=True), 1):
        if trial.question is not None:
            out.append(original)
            continue
        family = tasks.get(trial.task_id)
        if family is not None and made_here(trial, family):
            question = question_for(instance(family, trial.instance))
        elif (made := older.get((_want(trial), str(trial.harness)))) is not None:
            question = made
        else:
            raise ConfigError(
                f"{path}: line {n}: {trial.model} {trial.task_id} instance {trial.instance}: "
                f"no source reproduces its harness {trial.harness}",
                "pass --at COMMIT, the commit whose code made the export's runs")
        out.append(_line(row, {**_record(row), "question": question.model_dump(mode="json")},
                         original))
    if lacking:
        write_jsonl_gz(path, out)
    return len(rows), len(lacking)


def missing(path: Path) -> int:
    """How many trials of the export ``path`` carry no question."""
    return sum(_record(r).get("question") is None for r in read_jsonl_gz(path, HINT))


def _shown(path: Path) -> str:
    """``path`` relative to the repository where it is inside it (as ``SOURCES`` names it)."""
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("exports", nargs="*", type=Path)
    parser.add_argument("--at", action="append", default=[], metavar="COMMIT",
                        help="a commit whose code may have made the exports' trials")
    parser.add_argument("--check", action="store_true", help="only count missing questions")
    args = parser.parse_args(argv)
    paths = [p.resolve() for p in args.exports] or exports()
    try:
        if args.check:
            gaps = {p: missing(p) for p in paths}
            for p, k in gaps.items():
                print(f"{_shown(p)}: {k} trials without a question")
            return 1 if any(gaps.values()) else 0
        tasks = load_tasks()
        for p in paths:
            n, k = backfill(p, tasks, [*SOURCES.get(_shown(p), ()), *args.at])
            print(f"{_shown(p)}: {n} trials, {k} questions filled")
    except ConfigError as exc:
        print(f"error: {exc} ({exc.hint})", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
