"""A study: Part A (agent suites) and Part B (micro-task eligibility) from one TOML file.

.. code-block:: toml

    name = "reference-study"
    out = "runs/reference-study"          # part-a/ (RunStore) and part-b/ (ReadingStore)
    page = "docs/results/reference-study.md"
    humaneval = ["runs/humaneval-q05"]    # HumanEval run dirs shown on the page

    [part_a]                              # the fields of `slmbench run`'s experiment file
    models = ["llamacpp:qwen2.5-coder-0.5b"]
    suites = ["capability", "reliability"]
    temperatures = [0.3, 0.7, 1.0]
    repeats = 2

    [part_b]
    models = ["llamacpp:qwen2.5-coder-0.5b"]
    tasks = ["approval", "memory", "tools", "ranking"]
    prompts = ["p0", "p1", "p2", "p3"]
    limit = 40                            # eval items per task (seeded, stratified)

``slmbench study FILE`` runs what is missing of both parts and writes the page.
Both parts resume: Part A's trials and Part B's readings are committed one by one
to SQLite, so running the same command again after an interruption computes only
what is not stored. ``--page-only`` regenerates the page from what is stored,
without loading a model. Every number on the page is computed from the stores.
"""

from __future__ import annotations

import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from slmbench.errors import ConfigError
from slmbench.microtasks.datasets.records import TASKS, TaskName
from slmbench.microtasks.prompts import resolve_prompt_ids
from slmbench.runner.config import Experiment

__all__ = ["PartB", "Study", "load_study"]

_HINT = "the study file format is in the docstring of slmbench.study (see experiments/)"


class PartB(BaseModel):
    """The micro-task grid: models x tasks x prompts on ``limit`` eval items per task."""

    model_config = ConfigDict(extra="forbid")

    models: list[str] = Field(min_length=1)
    tasks: list[TaskName] = Field(default_factory=lambda: list(TASKS), min_length=1)
    prompts: list[str] = Field(default_factory=lambda: ["p0", "p1", "p2", "p3"], min_length=1)
    limit: int | None = Field(default=None, ge=1, description="eval items per task; None: all")
    seed: int = Field(default=0, ge=0)
    source: Path | None = Field(default=None, description="built datasets; default: the cache")

    @field_validator("prompts")
    @classmethod
    def _known_prompts(cls, prompts: list[str]) -> list[str]:
        return resolve_prompt_ids(",".join(prompts))


class Study(BaseModel):
    """One study file, validated."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1)
    out: Path
    page: Path | None = None
    humaneval: list[Path] = Field(default_factory=list)
    part_a: Experiment | None = None
    part_b: PartB | None = None

    @property
    def part_a_dir(self) -> Path:
        return self.out / "part-a"

    @property
    def part_b_dir(self) -> Path:
        return self.out / "part-b"

    def resolved(self, base: Path) -> Study:
        """Relative paths resolved against ``base`` (the repository or the file's directory)."""
        def fix(p: Path) -> Path:
            return p if p.is_absolute() else base / p
        part_b = self.part_b
        if part_b is not None and part_b.source is not None:
            part_b = part_b.model_copy(update={"source": fix(part_b.source)})
        return self.model_copy(update={
            "out": fix(self.out), "page": fix(self.page) if self.page else None,
            "humaneval": [fix(p) for p in self.humaneval], "part_b": part_b})


def _first_error(exc: ValidationError) -> str:
    err = exc.errors()[0]
    where = ".".join(str(p) for p in err["loc"]) or "(top level)"
    return f"{where}: {err['msg']}"


def load_study(path: Path, *, base: Path | None = None) -> Study:
    """Read and validate a study file; relative paths are taken from ``base`` (default: cwd)."""
    try:
        raw: dict[str, Any] = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"study file {path} does not exist", _HINT) from None
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"study file {path} is not readable TOML: {exc}", _HINT) from None
    part_a = raw.get("part_a")
    if isinstance(part_a, dict):
        part_a.setdefault("name", raw.get("name"))
    try:
        study = Study.model_validate(raw)
    except ValidationError as exc:
        raise ConfigError(f"study file {path}: {_first_error(exc)}", _HINT) from None
    if study.part_a is None and study.part_b is None:
        raise ConfigError(f"study file {path} has neither [part_a] nor [part_b]", _HINT)
    return study.resolved(base or Path.cwd())


# -- running ------------------------------------------------------------------------------------

MATRIX_NAME = "eligibility.json"
READINGS_NAME = "readings.sqlite"


def part_a_experiment(study: Study, models: list[str] | None = None) -> Experiment:
    """Part A's experiment, stored under ``<out>/part-a``; ``models`` narrows it to some models."""
    assert study.part_a is not None
    update: dict[str, Any] = {"out": study.part_a_dir}
    if models:
        update["models"] = [m for m in study.part_a.models if m in models]
    return study.part_a.model_copy(update=update)


def part_b_models(study: Study, models: list[str] | None = None) -> list[str]:
    assert study.part_b is not None
    return [m for m in study.part_b.models if not models or m in models]


def check_models(study: Study, models: list[str] | None) -> None:
    """Refuse a ``--model`` filter naming a model the study does not have."""
    known = set(study.part_a.models if study.part_a else []) | set(
        study.part_b.models if study.part_b else [])
    unknown = [m for m in models or [] if m not in known]
    if unknown:
        raise ConfigError(f"{', '.join(unknown)} is not in study {study.name!r}",
                          f"its models: {', '.join(sorted(known))}")


# -- collecting what is stored -------------------------------------------------------------------

def versions() -> dict[str, str]:
    """slmbench (and its git commit when run from a checkout), Python, llama-cpp-python."""
    import platform
    import subprocess
    from importlib.metadata import PackageNotFoundError, version

    import slmbench

    out = {"slmbench": slmbench.__version__}
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                                text=True, timeout=10, cwd=Path(slmbench.__file__).parent)
        if commit.returncode == 0 and commit.stdout.strip():
            out["commit"] = commit.stdout.strip()
    except (OSError, subprocess.SubprocessError):
        pass
    out["Python"] = platform.python_version()
    for dist in ("llama-cpp-python", "transformers", "torch"):
        try:
            out[dist] = version(dist)
        except PackageNotFoundError:
            continue
    return out


def model_hashes(specs: list[str]) -> dict[str, str]:
    """sha256 of each llama.cpp model file, from its pull record (or hashed now)."""
    from slmbench.models.base import parse_spec
    from slmbench.models.llamacpp import resolve_target
    from slmbench.models.registry import file_sha256, read_record

    out: dict[str, str] = {}
    for spec in specs:
        parsed = parse_spec(spec)
        if parsed.backend != "llamacpp":
            continue
        record = None if parsed.target.endswith(".gguf") else read_record(parsed.target)
        if record is not None:
            out[f"{parsed.target}.gguf"] = record.sha256
            continue
        try:
            path = resolve_target(parsed.target)
        except ConfigError:
            continue  # not pulled: nothing to hash; the run itself would have said so
        out[path.name] = file_sha256(path)
    return out


def all_models(study: Study) -> list[str]:
    return list(dict.fromkeys([*(study.part_a.models if study.part_a else []),
                               *(study.part_b.models if study.part_b else [])]))


def assets_dir(study: Study) -> Path:
    """Where the page's figures and HTML report go: ``<page dir>/<page stem>/``."""
    assert study.page is not None
    return study.page.parent / study.page.stem


def collect_part_a(study: Study, facts: dict[str, Any]) -> dict[str, int]:
    """Analyse Part A's stored trials into ``facts``; return the planned trials per model."""
    from slmbench.analysis import load_trials, read_summary
    from slmbench.report import build_report
    from slmbench.runner.executor import plan_of
    from slmbench.store import DB_NAME

    if study.part_a is None:
        return {}
    exp = part_a_experiment(study)
    plan = plan_of(exp)
    planned = {m: len(plan.for_model(m)) for m in exp.models}
    if not (study.part_a_dir / DB_NAME).is_file() or not (trials := load_trials(
            study.part_a_dir)):
        facts["incomplete"].append("Part A: no trial stored yet")
        return planned
    missing = sum(planned.values()) - len(trials)
    if missing > 0:
        facts["incomplete"].append(f"Part A: {len(trials)} of {sum(planned.values())} planned "
                                   "trials stored; the tables use what is stored")
    files = build_report(study.part_a_dir, out_dir=study.part_a_dir / "report")
    facts["summary"] = read_summary(files.summary)
    facts["trials"] = trials
    if study.page:  # PNGs and the self-contained HTML beside the page (PDFs stay in the run)
        import shutil

        from slmbench.report.study_page import relative

        assets = assets_dir(study)
        (assets / "figures").mkdir(parents=True, exist_ok=True)
        figures = {}
        for name, (_, png) in files.figures.items():
            figures[name] = relative(Path(shutil.copy2(png, assets / "figures" / png.name)),
                                     study.page.parent)
        facts["figures"] = figures
        facts["html_report"] = relative(Path(shutil.copy2(files.html, assets / "report.html")),
                                        study.page.parent)
    return planned


def run_part_a(study: Study, models: list[str] | None, console: Any) -> Any:
    """Run (resume) Part A's grid into ``<out>/part-a``; None when no model is selected."""
    from slmbench.runner.executor import execute
    from slmbench.runner.progress import make_progress

    exp = part_a_experiment(study, models)
    if not exp.models:
        return None
    return execute(exp, run_dir=study.part_a_dir, progress=make_progress(console))


def write_page(study: Study, *, study_file: Path, command: str) -> Path:
    """Gather everything stored and write the study's Markdown page; returns its path."""
    from datetime import UTC, datetime

    from slmbench.humaneval import summaries
    from slmbench.report.study_page import StudyFacts, group_costs, render_study_page

    assert study.page is not None
    facts: dict[str, Any] = {"incomplete": []}
    planned = collect_part_a(study, facts)
    readings = collect_part_b(study, facts)
    found = [d for d in study.humaneval if d.is_dir()]
    for d in study.humaneval:
        if not d.is_dir():
            facts["incomplete"].append(f"HumanEval: run directory {d} does not exist")
    page = StudyFacts(
        name=study.name, study_file=str(study_file), command=command,
        created=datetime.now(UTC).isoformat(timespec="seconds"), versions=versions(),
        model_hashes=model_hashes(all_models(study)), humaneval=summaries(found),
        costs=group_costs(facts.get("trials", []), planned, readings), **facts)
    study.page.parent.mkdir(parents=True, exist_ok=True)
    study.page.write_text(render_study_page(page), encoding="utf-8")
    return study.page


class _NotStored(Exception):
    """A reading the store does not hold (raised instead of loading a model)."""


def _refuse(spec: str) -> Any:
    raise _NotStored(spec)


def planned_readings(study: Study) -> int:
    """Readings one Part B model needs: its items x prompts over all tasks."""
    from slmbench.microtasks.datasets import load_items
    from slmbench.microtasks.matrix import select_items

    assert study.part_b is not None
    b = study.part_b
    return sum(len(select_items(load_items(t, source=b.source), b.limit, b.seed))
               for t in b.tasks) * len(b.prompts)


def matrix_from_store(study: Study, models: list[str]) -> Any:
    """The eligibility matrix of ``models`` from stored readings only; None if one is missing."""
    from slmbench.microtasks.matrix import run_matrix
    from slmbench.microtasks.store import ReadingStore

    assert study.part_b is not None
    b = study.part_b
    with ReadingStore(study.part_b_dir / READINGS_NAME) as store:
        try:
            return run_matrix(models, b.tasks, b.prompts, limit=b.limit, seed=b.seed,
                              source=b.source, command=f"slmbench study ({study.name})",
                              loader=_refuse, store=store)
        except _NotStored:
            return None


def collect_part_b(study: Study, facts: dict[str, Any]) -> dict[str, tuple[int, int, float | None]]:
    """Part B's matrix (models whose readings are all stored) into ``facts``; return
    (readings stored, planned, model seconds) per model."""
    from slmbench.microtasks.store import ReadingStore

    if study.part_b is None:
        return {}
    want = planned_readings(study)
    path = study.part_b_dir / READINGS_NAME
    if not path.is_file():
        facts["incomplete"].append("Part B: no reading stored yet")
        return {m: (0, want, None) for m in study.part_b.models}
    complete, out = [], {}
    for m in study.part_b.models:
        if matrix_from_store(study, [m]) is not None:
            complete.append(m)
        with ReadingStore(path) as store:
            out[m] = (min(store.count(m), want) if m in complete else store.count(m), want,
                      store.seconds(m))
        if m not in complete:
            facts["incomplete"].append(f"Part B: {short_spec(m)} has {out[m][0]} of {want} "
                                       "readings stored; it is left out of the matrix")
    if complete:
        facts["matrix"] = matrix = matrix_from_store(study, complete)
        if study.page is not None:  # every cell and reading, beside the page
            assets_dir(study).mkdir(parents=True, exist_ok=True)
            (assets_dir(study) / MATRIX_NAME).write_text(matrix.model_dump_json(indent=1),
                                                         encoding="utf-8")
    return out


def short_spec(spec: str) -> str:
    return spec.split(":", 1)[-1].split("?", 1)[0]


def run_part_b(study: Study, models: list[str] | None, console: Any,
               loader: Callable[[str], Any] | None = None) -> None:
    """Read every missing Part B item of ``models`` into the study's readings store
    (``loader`` loads a model spec; default :func:`~slmbench.models.base.load_model`)."""
    from slmbench.microtasks.matrix import run_matrix
    from slmbench.microtasks.store import ReadingStore
    from slmbench.models.base import load_model

    assert study.part_b is not None
    b = study.part_b
    chosen = part_b_models(study, models)
    if not chosen:
        return
    with ReadingStore(study.part_b_dir / READINGS_NAME) as store:
        try:
            run = run_matrix(chosen, b.tasks, b.prompts, limit=b.limit, seed=b.seed,
                             source=b.source, command=f"slmbench study ({study.name})",
                             progress=lambda msg: console.print(msg, highlight=False),
                             loader=loader or load_model, store=store)
        except KeyboardInterrupt:
            console.print(store.resume_hint(), highlight=False)
            raise
        console.print(run.read_counts.describe(store.path), highlight=False)
