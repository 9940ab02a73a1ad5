"""A study: Part A (agent suites) and Part B (micro-task eligibility) from one TOML file.

.. code-block:: toml

    name = "reference-study"
    out = "runs/reference-study"          # part-a/<n>/ (RunStores), part-b/ (ReadingStore)
    page = "docs/results/reference-study.md"
    humaneval = ["runs/humaneval-q05"]    # HumanEval run dirs shown on the page
    executor = "ray"                      # every block's models on Ray actors (docs/scale-out.md);
    ray_address = "ray://head:10001"      # a block's own executor / ray_address / retry wins
    retry = {attempts = 5}                # Part A: [retry] of each block; Part B: the tries of
                                          # a reading whose Ray replica died or hung (default 3)

    [[part_a]]                            # the fields of `slmbench run`'s experiment file
    models = ["llamacpp:qwen2.5-coder-0.5b"]
    suites = ["capability", "reliability"]
    temperatures = [0.3, 0.7, 1.0]
    repeats = 2

    [[part_a]]                            # a cheaper grid for a slower model
    models = ["llamacpp:qwen2.5-coder-1.5b"]
    temperatures = [0.7]
    repeats = 1

    [[part_b]]
    models = ["llamacpp:qwen2.5-coder-0.5b"]
    tasks = ["approval", "memory", "tools", "ranking"]
    prompts = ["p0", "p1", "p2", "p3"]
    limit = 40                            # eval items per task (seeded, stratified)

    [part_b.ray_models."llamacpp:qwen2.5-coder-0.5b"]   # with executor = "ray", per model
    replicas = 2                          # as in an experiment's [ray_models]

Each part is one table or several (``[[part_a]]`` blocks): a block is a uniform grid,
so a slow model can get a smaller grid than the others within one study. Part A
blocks run into their own run directories and are analysed together; Part B blocks
share one readings store and their matrices are shown one after the other.

A Part B block with ``sequential = true`` reads each cell only until its verdict is
decided (the sequential rule), at most ``limit`` items (or the whole eval split).

A ``[[cascade]]`` block is ``slmbench cascade`` inside the study: BM25's top ``k`` re-ranked
by the model's log-probabilities, and the router fitted on ``fit_limit`` fit items, its
readings (one per shortlist) in the study's readings store; it runs with Part B:

.. code-block:: toml

    [[cascade]]
    model = "llamacpp:qwen2.5-coder-0.5b"
    task = "ranking"                      # or "tools"
    k = 3
    limit = 40                            # eval items (None: the whole eval split)
    fit_limit = 20                        # fit items the router's margin is fitted on

``slmbench study FILE`` runs what is missing of both parts and writes the page.
Both parts resume: Part A's trials and Part B's readings are committed one by one
to SQLite, so running the same command again after an interruption computes only
what is not stored. ``--page-only`` regenerates the page from what is stored,
without loading a model. Every number on the page is computed from the stores.
``--merge DIR...`` first copies another machine's stores of the same study file (its
``out``, or the ``*.jsonl.gz`` that ``--export DIR`` wrote there) into this one's, refusing a
key stored with different content; ``--export DIR`` writes everything stored as those files
(how a long study survives a change of machine). A page another study file made at the same
path is replaced only once this study is complete (:func:`page_blocker`); ``--plan``
prints each block's remaining work in model hours at the rates measured in the stores (the
study's own, the exports beside its page, and ``--rates`` folders). ``--readme README.md``
also writes the study's entry in the README from the page's facts, between the lines
``<!-- study:PAGE -->`` and ``<!-- /study:PAGE -->``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from slmbench.agents.runner.config import Experiment
from slmbench.agents.runner.retry import RetryPolicy
from slmbench.core import jsonl
from slmbench.core.errors import ConfigError
from slmbench.core.tomlfile import first_error, load_toml
from slmbench.microtasks import tasks as micro_tasks
from slmbench.microtasks.prompts import resolve_prompt_ids
from slmbench.microtasks.session import READ_ATTEMPTS
from slmbench.models.ray import RayModelOptions

if TYPE_CHECKING:
    from slmbench.report.study_facts import ReadingTally

__all__ = ["CascadeBlock", "ImportSummary", "PartB", "PlanRow", "Study", "import_exports",
           "load_study", "merge_stores", "size_plan", "write_eligibility_page"]

_HINT = "the study file format is in the docstring of slmbench.study (see experiments/)"


class ReadRetry(BaseModel):
    """A Part B block's ``[retry]``: the tries of a reading on Ray (``--retry-attempts``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    attempts: int = Field(default=READ_ATTEMPTS, ge=1, le=50,
                          description="tries of a reading whose Ray replica died or hung")


class PartB(BaseModel):
    """The micro-task grid: models x tasks x prompts on ``limit`` eval items per task."""

    model_config = ConfigDict(extra="forbid")

    models: list[str] = Field(min_length=1)
    tasks: list[micro_tasks.KnownTask] = Field(default_factory=lambda: list(micro_tasks.names()),
                                               min_length=1)
    prompts: list[str] = Field(default_factory=lambda: ["p0", "p1", "p2", "p3"], min_length=1)
    limit: int | None = Field(default=None, ge=1, description="eval items per task; None: all")
    sequential: bool = Field(default=False, description="read each cell only until its verdict "
                             "is decided (the sequential rule), else every chosen item")
    seed: int = Field(default=0, ge=0)
    source: Path | None = Field(default=None, description="built datasets; default: the cache")
    # Where the models read (not what: the readings are the same either way).
    executor: Literal["local", "ray"] = "local"
    ray_address: str | None = None
    ray_models: dict[str, RayModelOptions] = Field(default_factory=dict)
    retry: ReadRetry = Field(default_factory=ReadRetry)

    @field_validator("prompts")
    @classmethod
    def _known_prompts(cls, prompts: list[str]) -> list[str]:
        return resolve_prompt_ids(",".join(prompts))


class CascadeBlock(BaseModel):
    """A ``[[cascade]]`` block: the BM25 -> model cascade of ``slmbench cascade`` on one
    model, read through the study's readings store (locally)."""

    model_config = ConfigDict(extra="forbid")

    model: str
    task: Literal["ranking", "tools"] = "ranking"
    k: int = Field(default=3, ge=2, description="shortlist size")
    limit: int | None = Field(default=None, ge=1, description="eval items; None: all")
    fit_limit: int | None = Field(default=None, ge=1,
                                  description="fit items for the router's margin; None: all")
    seed: int = Field(default=0, ge=0)
    turns: int | None = Field(default=None, ge=2,
                              description="ranking: widen each item to this many turns")

    @model_validator(mode="after")
    def _turns_are_ranking_only(self) -> CascadeBlock:
        if self.turns is not None and self.task != "ranking":
            raise ValueError("turns widens turn-ranking items only (task = \"ranking\")")
        return self


class Study(BaseModel):
    """One study file, validated."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1)
    out: Path
    page: Path | None = None
    humaneval: list[Path] = Field(default_factory=list)
    executor: Literal["local", "ray"] | None = None  # the default of every block
    ray_address: str | None = None
    retry: RetryPolicy | None = None  # the default [retry] of every block (Part B: attempts)
    # what was left out of the planned design (e.g. to fit a model-time budget): the page says so
    cuts: list[str] = Field(default_factory=list)
    # choices of how the study runs that a reader should know (e.g. why this backend): said
    # under the design, as written
    notes: list[str] = Field(default_factory=list)
    part_a: list[Experiment] = Field(default_factory=list)
    part_b: list[PartB] = Field(default_factory=list)
    cascade: list[CascadeBlock] = Field(default_factory=list)

    @field_validator("part_a", "part_b", "cascade", mode="before")
    @classmethod
    def _one_or_many(cls, value: Any) -> Any:
        return [value] if isinstance(value, dict) else value

    def part_a_dir(self, block: int) -> Path:
        return self.out / "part-a" / str(block + 1)

    @property
    def part_b_dir(self) -> Path:
        return self.out / "part-b"

    def rooted(self, out: Path) -> Study:
        """This study with every store under ``out``: its part-a/part-b stores, and its HumanEval
        directories as ``out/humaneval/<name>`` (``slmbench study/import --out``)."""
        return self.model_copy(update={
            "out": out, "humaneval": [out / "humaneval" / d.name for d in self.humaneval]})

    def resolved(self, base: Path) -> Study:
        """Relative paths resolved against ``base`` (the repository or the file's directory)."""
        def fix(p: Path) -> Path:
            return p if p.is_absolute() else base / p
        part_b = [b.model_copy(update={"source": fix(b.source)}) if b.source else b
                  for b in self.part_b]
        return self.model_copy(update={
            "out": fix(self.out), "page": fix(self.page) if self.page else None,
            "humaneval": [fix(p) for p in self.humaneval], "part_b": part_b})


def load_study(path: Path, *, base: Path | None = None) -> Study:
    """Read and validate a study file; relative paths are taken from ``base`` (default: cwd)."""
    raw = load_toml(path, what="study file", hint=_HINT)
    retry = raw.get("retry")
    part_b_retry = {"attempts": retry["attempts"]} if isinstance(retry, dict) and \
        "attempts" in retry else None
    for part, given in (("part_a", {k: raw.get(k) for k in ("name", "executor", "ray_address",
                                                             "retry")}),
                        ("part_b", {"executor": raw.get("executor"),
                                    "ray_address": raw.get("ray_address"),
                                    "retry": part_b_retry})):
        blocks = raw.get(part)
        for block in [blocks] if isinstance(blocks, dict) else blocks or []:
            if isinstance(block, dict):
                for key, value in given.items():
                    if value is not None:
                        block.setdefault(key, value)
    try:
        study = Study.model_validate(raw)
    except ValidationError as exc:
        raise ConfigError(f"{path}: {first_error(exc)}", _HINT) from None
    if not study.part_a and not study.part_b and not study.cascade:
        raise ConfigError(f"{path}: has no [part_a], [part_b] or [cascade]", _HINT)
    return study.resolved(base or Path.cwd())


# -- running ------------------------------------------------------------------------------------

MATRIX_NAME = "eligibility.json"
READINGS_NAME = "readings.sqlite"
#: the exports a page carries beside it (``<page dir>/<page stem>/``), one JSON document a line
TRIALS_EXPORT = "trials.jsonl.gz"
READINGS_EXPORT = "readings.jsonl.gz"
HUMANEVAL_EXPORT = "humaneval.jsonl.gz"


def part_a_experiment(study: Study, block: int, models: list[str] | None = None) -> Experiment:
    """Block ``block`` of Part A, stored in its own run directory; ``models`` narrows it."""
    exp = study.part_a[block]
    update: dict[str, Any] = {"out": study.part_a_dir(block)}
    if models:
        update["models"] = [m for m in exp.models if m in models]
    return exp.model_copy(update=update)


def all_models(study: Study) -> list[str]:
    return list(dict.fromkeys([*(m for e in study.part_a for m in e.models),
                               *(m for b in study.part_b for m in b.models),
                               *(c.model for c in study.cascade)]))


def check_models(study: Study, models: list[str] | None) -> None:
    """Refuse a ``--model`` filter naming a model the study does not have."""
    known = all_models(study)
    unknown = [m for m in models or [] if m not in known]
    if unknown:
        raise ConfigError(f"{', '.join(unknown)} is not in study {study.name!r}",
                          f"its models: {', '.join(known)}")


def check_can_run(study: Study, part: str, models: list[str] | None) -> None:
    """Raise the one-line error that would stop ``part`` (a, b or all) of the study, narrowed
    to ``models``, before its first trial or reading: every Part A block's
    :func:`~slmbench.agents.runner.executor.preflight` and every Part B block's
    :func:`~slmbench.microtasks.matrix.check_can_read`. Run before any block starts, so a
    study that cannot run makes no folder (not even the blocks before the failing one)."""
    from slmbench.agents.runner.executor import preflight
    from slmbench.microtasks.matrix import check_can_read
    from slmbench.models.base import check_logprobs

    if part in ("a", "all"):
        for block in range(len(study.part_a)):
            exp = part_a_experiment(study, block, models)
            if exp.models:
                preflight(exp)
    if part in ("b", "all"):
        for b in study.part_b:
            check_can_read([m for m in b.models if not models or m in models], b.tasks,
                           b.source)
        for c in study.cascade:
            if not models or c.model in models:
                check_logprobs(c.model)  # the re-rank reads them; no server asked
                check_can_read([c.model], [c.task], None)


def run_part_a(study: Study, models: list[str] | None, console: Any) -> list[Any]:
    """Run (resume) every Part A block; one run summary per block that had a model to run."""
    from slmbench.agents.runner.executor import execute
    from slmbench.agents.runner.progress import make_progress

    summaries = []
    for block in range(len(study.part_a)):
        exp = part_a_experiment(study, block, models)
        if exp.models:
            summaries.append(execute(exp, run_dir=study.part_a_dir(block),
                                     progress=make_progress(console)))
    return summaries


def _refuse(spec: str) -> Any:
    """The loader of a matrix built from stored readings only: loading a model is a bug."""
    raise AssertionError(f"{spec}: a reading the store was checked to hold is missing")


def _matrix(study: Study, b: PartB, models: list[str], store: Any,
            loader: Callable[[str], Any], progress: Callable[[str], None] | None = None,
            ray: Any = None) -> Any:
    from slmbench.microtasks.matrix import run_matrix

    return run_matrix(models, b.tasks, b.prompts, limit=b.limit, seed=b.seed, source=b.source,
                      command=f"slmbench study ({study.name})", progress=progress,
                      loader=loader, store=store, sequential=b.sequential, ray=ray)


class _Unread(Exception):
    """A sequential cell is undecided and its next reading is not stored."""


def _unread(spec: str) -> Any:
    raise _Unread(spec)


def _decided(study: Study, b: PartB, model: str, store: Any) -> bool:
    """Whether every cell of ``model`` in sequential block ``b`` is settled from the stored
    readings (decided, or every chosen item read), so the page can show it."""
    try:
        _matrix(study, b, [model], store, _unread)
    except _Unread:
        return False
    return True


def run_part_b(study: Study, models: list[str] | None, console: Any,
               loader: Callable[[str], Any] | None = None) -> None:
    """Read every missing reading of every Part B block into the study's readings store
    (``loader`` loads a model spec; default :func:`~slmbench.models.base.load_model`). A
    block with ``executor = "ray"`` reads on its Ray cluster (``ray_address``, ``ray_models``)
    and stores the same readings."""
    from slmbench.microtasks.session import read_on
    from slmbench.microtasks.store import ReadingStore
    from slmbench.models.base import load_model

    with ReadingStore(study.part_b_dir / READINGS_NAME) as store:
        for b in study.part_b:
            chosen = [m for m in b.models if not models or m in models]
            if not chosen:
                continue
            try:
                with read_on(b.executor, chosen, b.ray_address, b.ray_models,
                             attempts=b.retry.attempts) as ray:
                    run = _matrix(study, b, chosen, store, loader or load_model,
                                  lambda msg: console.print(msg, highlight=False), ray)
            except KeyboardInterrupt:
                console.print(store.resume_hint(), highlight=False)
                raise
            console.print(run.read_counts.describe(store.path), highlight=False)


def _cascade(study: Study, c: CascadeBlock, store: Any, loader: Callable[[str], Any],
             progress: Callable[[str], None] | None = None) -> Any:
    from slmbench.microtasks.diagnostics.cascade import run_cascade
    from slmbench.microtasks.session import Session

    return run_cascade(c.model, c.task, k=c.k, turns=c.turns, limit=c.limit,
                       fit_limit=c.fit_limit, seed=c.seed,
                       command=f"slmbench study ({study.name})",
                       session=Session(store=store, loader=loader, progress=progress))


def run_cascades(study: Study, models: list[str] | None, console: Any,
                 loader: Callable[[str], Any] | None = None) -> None:
    """Read every missing shortlist reading of every ``[[cascade]]`` block (narrowed to
    ``models``) into the study's readings store."""
    from slmbench.microtasks.store import ReadingStore
    from slmbench.models.base import load_model

    chosen = [c for c in study.cascade if not models or c.model in models]
    if not chosen:
        return
    with ReadingStore(study.part_b_dir / READINGS_NAME) as store:
        for c in chosen:
            try:
                report = _cascade(study, c, store, loader or load_model,
                                  lambda msg: console.print(msg, highlight=False))
            except KeyboardInterrupt:
                console.print(store.resume_hint(), highlight=False)
                raise
            console.print(report.read_counts.describe(store.path), highlight=False)


def shortlist_keys(c: CascadeBlock) -> list[tuple[str, str, str]]:
    """The (task, prompt, item id) of every reading cascade block ``c`` makes, once each."""
    from slmbench.microtasks.diagnostics.cascade import cascade_items, shortlisted

    _, items, lists = cascade_items(c.task, k=c.k, turns=c.turns, limit=c.limit,
                                    fit_limit=c.fit_limit, seed=c.seed)
    return list(dict.fromkeys((c.task, "p0", shortlisted(i, s)[0].id)
                              for i, s in zip(items, lists, strict=True)))


def collect_cascades(study: Study, facts: dict[str, Any]) -> list[Any]:
    """Each cascade block's report, rebuilt from the stored readings alone (a block with a
    reading missing is left out, and the page says so)."""
    from slmbench.microtasks.store import ReadingStore
    from slmbench.report.study_facts import short

    path = study.part_b_dir / READINGS_NAME
    if not path.is_file():
        facts["incomplete"] += [f"Cascade C{n}: no reading stored yet"
                                for n in range(1, len(study.cascade) + 1)]
        return []
    reports = []
    with ReadingStore(path) as store:
        for n, c in enumerate(study.cascade, 1):
            try:
                reports.append(_cascade(study, c, store, _unread))
            except ConfigError as exc:  # e.g. a backend without log-probabilities
                facts["incomplete"].append(f"Cascade C{n}: {short(c.model)} on {c.task}: "
                                           f"{exc}; it is left out")
            except _Unread:
                stored = {(r["task"], r["prompt_id"], r["item_id"]) for r in store.rows()
                          if r["model"] == c.model}
                want = shortlist_keys(c)
                facts["incomplete"].append(
                    f"Cascade C{n}: {short(c.model)} on {c.task} has "
                    f"{len(stored.intersection(want))} of {len(want)} shortlist readings "
                    "stored; it is left out")
    return reports


# -- collecting what is stored -------------------------------------------------------------------

def versions() -> dict[str, str]:
    """slmbench (and its git commit when run from a checkout), Python, llama-cpp-python."""
    import platform
    import subprocess
    from importlib.metadata import PackageNotFoundError, version

    from slmbench.core.version import VERSION

    out = {"slmbench": VERSION}
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                                text=True, timeout=10, cwd=Path(__file__).parent)
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
    """sha256 of each llama.cpp model file: from its pull record, else hashed now, else (no
    file here, e.g. a fresh clone regenerating a page) the sha256 its registry entry pins."""
    from slmbench.core.errors import ModelNotFoundError
    from slmbench.core.sources import sha256_file
    from slmbench.models.base import parse_spec
    from slmbench.models.catalog import PypiSource, load_registry, resolve_target
    from slmbench.models.pull import read_record

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
        except (ConfigError, ModelNotFoundError):
            entry = load_registry().find(parsed.target)
            if entry is not None and isinstance(entry.source, PypiSource) and entry.source.sha256:
                out[f"{parsed.target}.gguf"] = entry.source.sha256
            continue  # not pulled and not pinned: nothing to show
        out[path.name] = sha256_file(path)
    return out


def design(study: Study) -> list[list[str]]:
    """One row per block: part, models, what each model runs (the grid as the file says)."""
    from slmbench.report.study_facts import short

    rows = []
    for n, e in enumerate(study.part_a, 1):
        rows.append([f"A{n}", ", ".join(short(m) for m in e.models),
                     f"suites {', '.join(e.suites) or 'all'}"
                     + (f", tasks {', '.join(e.tasks)}" if e.tasks else "")
                     + f"; T {', '.join(f'{t:g}' for t in e.temperatures)}; "
                     f"{e.repeats} repeat(s) (consistency tasks at least their min_repeats); "
                     f"{e.scaffold}, {e.max_steps} steps at most"])
    for n, b in enumerate(study.part_b, 1):
        rows.append([f"B{n}", ", ".join(short(m) for m in b.models),
                     f"tasks {', '.join(b.tasks)}; prompts {', '.join(b.prompts)}; "
                     + ("read to decision, at most " if b.sequential else "")
                     + f"{b.limit or 'all'} eval items per task (seed {b.seed}); "
                     "log-prob and generation readings"])
    for n, c in enumerate(study.cascade, 1):
        rows.append([f"C{n}", short(c.model),
                     f"cascade on {c.task}: BM25's top {c.k} re-ranked by log-prob, and the "
                     f"router fitted on {c.fit_limit or 'all'} fit items; "
                     f"{c.limit or 'all'} eval items (seed {c.seed})"
                     + (f"; {c.turns} turns per item" if c.turns else "")])
    return rows


def stored_trials(study: Study) -> list[Any]:
    """Every trial stored in the study's Part A blocks, block by block (as Trial records)."""
    from slmbench.agents.analysis import load_trials
    from slmbench.agents.store import DB_NAME

    return [t for block in range(len(study.part_a))
            if (study.part_a_dir(block) / DB_NAME).is_file()
            for t in load_trials(study.part_a_dir(block))]


def export_trials(trials: Sequence[Any], assets: Path) -> Path:
    """Every trial as stored (one ``Trial`` JSON a line), into ``assets/trials.jsonl.gz``."""
    return jsonl.write_jsonl_gz(assets / TRIALS_EXPORT, [t.model_dump_json() for t in trials])


def export_readings(store: Any, assets: Path) -> Path:
    """Every raw reading of a readings store (its key fields and ``raw``), into
    ``assets/readings.jsonl.gz``."""
    return jsonl.write_jsonl_gz(assets / READINGS_EXPORT,
                                [json.dumps(r, sort_keys=True) for r in store.rows()])


def export_humaneval(run_dirs: list[Path], assets: Path) -> Path:
    """Every stored HumanEval problem result (reply, sanitised code, verdict), one per line,
    with its model and the name of its run directory (``run``), where an import puts it."""
    from slmbench.agents.humaneval import results
    from slmbench.agents.store import RunStore

    rows = []
    for run_dir in run_dirs:
        with RunStore(run_dir) as store:
            rows += [json.dumps({"model": m, "run": run_dir.name, **r.model_dump(mode="json")},
                                sort_keys=True)
                     for m in store.models() for r in results(store, m)]
    return jsonl.write_jsonl_gz(assets / HUMANEVAL_EXPORT, rows)


def assets_dir(study: Study) -> Path:
    """Where the page's figures and HTML report go: ``<page dir>/<page stem>/``."""
    assert study.page is not None
    return study.page.parent / study.page.stem


def collect_part_a(study: Study, facts: dict[str, Any]) -> dict[str, int]:
    """Analyse the trials of every Part A block together into ``facts``; return the planned
    trials per model."""
    from slmbench.agents.analysis import SUMMARY_NAME, read_summary
    from slmbench.agents.runner.executor import plan_of
    from slmbench.report import report_trials

    planned: dict[str, int] = {}
    for block in range(len(study.part_a)):
        plan = plan_of(part_a_experiment(study, block))
        for p in plan.trials:
            planned[p.key.model] = planned.get(p.key.model, 0) + 1
    trials = stored_trials(study)
    if not study.part_a:
        return planned
    if not trials:
        facts["incomplete"].append("Part A: no trial stored yet")
        return planned
    if len(trials) < sum(planned.values()):
        facts["incomplete"].append(f"Part A: {len(trials)} of {sum(planned.values())} planned "
                                   "trials stored; the tables use what is stored")
    files = report_trials(trials, study.out / "part-a" / "report",
                          summary_path=study.out / "part-a" / SUMMARY_NAME,
                          run_dir=study.out / "part-a")  # shown relative on the report
    facts["summary"] = read_summary(files.summary)
    facts["trials"] = trials
    if study.page:  # every stored trial beside the page, so each number can be audited
        from slmbench.report.study_page import relative

        dump = export_trials(trials, assets_dir(study))
        facts["exports"].append(relative(dump, study.page.parent))
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


def page_blocker(study: Study, study_file: Path) -> str | None:
    """Why the study's page must not be written now, or None. A page (and the exports beside
    it) at the study's ``page`` that another study file made is replaced only by a complete
    study: a partial page never takes the place of another study's finished one."""
    import re

    from slmbench.core.paths import shown_path

    assert study.page is not None
    if not study.page.is_file():
        return None
    made = re.search(r"^From the study file `([^`]+)`", study.page.read_text(encoding="utf-8"),
                     re.MULTILINE)
    if made is None or made.group(1) == shown_path(study_file, published=True) or (
            Path(made.group(1)).resolve() == study_file.resolve()):
        return None
    if not (left := [r for r in size_plan(study) if r.remaining]):
        return None
    blocks = ", ".join(dict.fromkeys(r.block for r in left))
    return (f"{shown_path(study.page)} is the page of {made.group(1)}, and this study is not "
            f"complete ({blocks} still to run); its page replaces that one once it is")


def write_page(study: Study, *, study_file: Path, command: str,
               readme: Path | None = None) -> Path:
    """Gather everything stored and write the study's Markdown page; returns its path.

    With ``readme``, also replace the study's generated entry in that file (between the lines
    of :func:`~slmbench.report.study_page.readme_markers`); ConfigError, before anything is
    written, if it lacks them."""
    from datetime import UTC, datetime

    from slmbench.agents.humaneval import summaries
    from slmbench.core.paths import shown_path
    from slmbench.report.study_facts import StudyFacts
    from slmbench.report.study_page import (
        group_costs,
        readme_block,
        readme_markers,
        relative,
        render_study_page,
        with_block,
    )

    assert study.page is not None
    text = ""
    if readme is not None:
        begin, end = readme_markers(study.page.name)
        text = readme.read_text(encoding="utf-8") if readme.is_file() else ""
        if with_block(text, f"{begin}\n{end}") is None:
            raise ConfigError(f"{shown_path(readme)} has no {begin} ... {end} lines around the "
                              "study's entry", "put the two lines where the entry goes, once")
    facts: dict[str, Any] = {"incomplete": [], "exports": []}
    planned = collect_part_a(study, facts)
    readings = collect_part_b(study, facts)
    facts["cascades"] = collect_cascades(study, facts)
    shown_file = shown_path(study_file, published=True)
    facts["recommendation"] = part_b_recommendation(study, facts.get("matrices", []),
                                                    facts["cascades"],
                                                    command=f"slmbench recommend {shown_file}")
    found = [d for d in study.humaneval if d.is_dir()]
    for d in study.humaneval:
        if not d.is_dir():
            facts["incomplete"].append(
                f"HumanEval: run directory {shown_path(d, published=True)} does not exist")
    if found:
        facts["exports"].append(relative(export_humaneval(found, assets_dir(study)),
                                         study.page.parent))
    page = StudyFacts(
        design=design(study), cuts=study.cuts, notes=study.notes,
        block_times=block_times(study),
        name=study.name, study_file=shown_file,
        command=command,
        created=datetime.now(UTC).isoformat(timespec="seconds"), versions=versions(),
        model_hashes=model_hashes(all_models(study)), humaneval=summaries(found),
        costs=group_costs(facts.get("trials", []), planned, readings), **facts)
    study.page.parent.mkdir(parents=True, exist_ok=True)
    study.page.write_text(render_study_page(page), encoding="utf-8")
    if readme is not None:
        again = f"{command} --page-only --readme {shown_path(readme, published=True)}"
        block = readme_block(page, page=relative(study.page, readme.parent), command=again)
        readme.write_text(with_block(text, block) or text, encoding="utf-8")
    return study.page


def block_times(study: Study) -> list[Any]:
    """Per block of the study file: planned and stored trials (readings), the model time of the
    stored ones, and the hours the rest should take at the rates measured in the stores (a
    sequential block's model whose cells are all settled has none left)."""
    from slmbench.report.study_facts import BlockTime

    rows = size_plan(study)
    out = []
    for block in dict.fromkeys(r.block for r in rows):
        mine = [r for r in rows if r.block == block]
        left = [0.0 if not r.remaining else r.hours for r in mine]
        out.append(BlockTime(
            block=block, models=[r.model for r in mine], unit=mine[0].unit,
            planned=sum(r.planned for r in mine), stored=sum(r.stored for r in mine),
            spent_s=sum(r.spent_s for r in mine), at_most=mine[0].at_most,
            hours_left=None if None in left else sum(h or 0.0 for h in left)))
    return out


def part_b_recommendation(study: Study, matrices: list[Any], cascades: Sequence[Any] = (), *,
                          command: str) -> Any:
    """What to deploy per micro-task over the study's matrices and cascade reports, its cost
    from the study's readings store (None without a cell); ``command`` prints the same
    table."""
    from slmbench.microtasks.recommend import recommend
    from slmbench.microtasks.store import ReadingStore

    if not any(m.cells for m in matrices):
        return None
    with ReadingStore(study.part_b_dir / READINGS_NAME) as store:
        return recommend(matrices, store=store, cascades=cascades, command=command)


def planned_items(b: PartB) -> dict[str, list[Any]]:
    """The eval items block ``b`` reads, per task (the same sample ``run_matrix`` takes)."""
    from slmbench.microtasks.session import select_items

    return {t: select_items(t, micro_tasks.get(t).load_items(b.source), b.limit, b.seed)
            for t in b.tasks}


def collect_part_b(study: Study, facts: dict[str, Any]) -> dict[str, ReadingTally]:
    """Each Part B block's matrix, over the models whose readings are all stored, into
    ``facts["matrices"]``; return each model's planned readings stored, time and tokens."""
    from slmbench.microtasks.store import ReadingStore
    from slmbench.report.study_facts import ReadingTally, short

    if not study.part_b:
        return {}
    path = study.part_b_dir / READINGS_NAME
    items = [planned_items(b) for b in study.part_b]
    if not path.is_file():
        facts["incomplete"].append("Part B: no reading stored yet")
        planned: dict[str, int] = {}
        for b, its in zip(study.part_b, items, strict=True):
            for m in b.models:
                planned[m] = planned.get(m, 0) + sum(map(len, its.values())) * len(b.prompts)
        return {m: ReadingTally(planned=n) for m, n in planned.items()}
    out: dict[str, ReadingTally] = {}
    matrices = []
    with ReadingStore(path) as store:
        for b, its in zip(study.part_b, items, strict=True):
            complete = []
            for m in b.models:
                want = sum(map(len, its.values())) * len(b.prompts)
                have = sum(store.get(m, t, p, i) is not None
                           for t, group in its.items() for p in b.prompts for i in group)
                settled = have == want or (b.sequential and _decided(study, b, m, store))
                tokens, counted = store.tokens(m)
                before = out.get(m, ReadingTally())  # a model of several blocks: their sum
                out[m] = ReadingTally(done=before.done + have, planned=before.planned + want,
                                      seconds=store.seconds(m), tokens=tokens,
                                      with_tokens=counted)
                if settled:
                    complete.append(m)
                elif b.sequential:
                    facts["incomplete"].append(f"Part B: {short(m)} has {have} readings stored "
                                               f"(at most {want}) and cells still undecided; "
                                               "it is left out of the matrix")
                else:
                    facts["incomplete"].append(f"Part B: {short(m)} has {have} of {want} "
                                               "readings stored; it is left out of the matrix")
            if complete:
                matrices.append(_matrix(study, b, complete, store, _refuse))
        if study.page:  # every raw reading beside the page
            from slmbench.report.study_page import relative

            dump = export_readings(store, assets_dir(study))
            facts["exports"].append(relative(dump, study.page.parent))
    facts["matrices"] = matrices
    if matrices and study.page is not None:  # every cell and reading, beside the page
        assets_dir(study).mkdir(parents=True, exist_ok=True)
        (assets_dir(study) / MATRIX_NAME).write_text(
            "[\n" + ",\n".join(m.model_dump_json(indent=1) for m in matrices) + "\n]\n",
            encoding="utf-8")
    return out



# -- rebuilding the stores from a page's exports ------------------------------------------------

_IMPORT_HINT = "pass the folder beside a study page, e.g. docs/results/reference-study"


class ImportSummary(BaseModel):
    """What :func:`import_exports` wrote: records per store file."""

    model_config = ConfigDict(frozen=True)

    stores: dict[str, int]


def read_jsonl_gz(path: Path) -> list[dict[str, Any]]:
    """The JSON documents of an export beside a study page (:mod:`slmbench.core.jsonl`)."""
    return jsonl.read_jsonl_gz(path, _IMPORT_HINT)


def _validated(model: type[BaseModel], path: Path, rows: list[dict[str, Any]]) -> list[Any]:
    out = []
    for n, row in enumerate(rows, 1):
        try:
            out.append(model.model_validate(row))
        except ValidationError as exc:
            raise ConfigError(f"{path}: line {n} is not a {model.__name__}: "
                              f"{first_error(exc)}", _IMPORT_HINT) from None
    return out


def _route_trials(study: Study, trials: list[Any], path: Path) -> dict[Path, list[Any]]:
    """Each trial into the Part A block whose grid plans its key (the only block, if one)."""
    from slmbench.agents.runner.executor import plan_of

    if not study.part_a:
        raise ConfigError(f"{path} holds Part A trials but study {study.name!r} has no "
                          "[part_a]", "pass the study file the page was made from")
    plans = [{p.key for p in plan_of(part_a_experiment(study, b)).trials}
             for b in range(len(study.part_a))]
    out: dict[Path, list[Any]] = {study.part_a_dir(b): [] for b in range(len(study.part_a))}
    for t in trials:
        block = next((b for b, keys in enumerate(plans) if t.key in keys),
                     0 if len(plans) == 1 else None)
        if block is None:
            k = t.key
            raise ConfigError(f"{path}: trial {k.model} {k.task} {k.variant} T={k.temperature:g}"
                              f" repeat {k.repeat} is in no Part A block of {study.name!r}",
                              "pass the study file the page was made from")
        out[study.part_a_dir(block)].append(t)
    return {d: ts for d, ts in out.items() if ts}


def _route_humaneval(study: Study, rows: list[dict[str, Any]],
                     path: Path) -> dict[Path, list[tuple[str, Any]]]:
    """HumanEval results into the study's HumanEval directories: each row into the directory
    its ``run`` names; rows without one (exports written before rows named their directory)
    by model, in the order the export lists them, one a directory, or all into the only one."""
    from slmbench.agents.humaneval import ProblemResult

    results = _validated(ProblemResult, path, [{k: v for k, v in r.items()
                                                if k not in ("model", "run")} for r in rows])
    dirs = study.humaneval
    named = {d.name: d for d in dirs}
    if all("run" in r for r in rows):
        if unknown := sorted({str(r["run"]) for r in rows} - named.keys()):
            raise ConfigError(f"{path} holds HumanEval results of {unknown[0]!r}, which is no "
                              f"`humaneval` directory of study {study.name!r}",
                              "pass the study file the export was made from")
        where = [named[str(r["run"])] for r in rows]
    else:
        models = list(dict.fromkeys(str(r.get("model")) for r in rows))
        if len(dirs) != 1 and len(dirs) != len(models):
            raise ConfigError(f"{path} holds {len(models)} HumanEval model(s); study "
                              f"{study.name!r} lists {len(dirs)} HumanEval director(ies)",
                              "list one `humaneval` directory per model, or one for them all")
        by_model = {m: dirs[0] if len(dirs) == 1 else dirs[i] for i, m in enumerate(models)}
        where = [by_model[str(r.get("model"))] for r in rows]
    out: dict[Path, list[tuple[str, Any]]] = {}
    for row, result, target in zip(rows, results, where, strict=True):
        out.setdefault(target, []).append((str(row["model"]), result))
    return out


def _readings(path: Path) -> list[tuple[Any, ...]]:
    from slmbench.microtasks.readout import RawReading

    rows = read_jsonl_gz(path)
    keys = ("model", "task", "prompt_id", "item_id", "input_sha256")
    for n, row in enumerate(rows, 1):
        if not isinstance(row, dict) or any(not isinstance(row.get(k), str) for k in keys):
            raise ConfigError(f"{path}: line {n} is not a reading ({', '.join(keys)}, raw)",
                              _IMPORT_HINT)
    _validated(RawReading, path, [r.get("raw") for r in rows])
    # the raw outputs as stored, not re-dumped: a reading stored before a field existed stays so
    return [(*(r[k] for k in keys), json.dumps(r["raw"], sort_keys=True)) for r in rows]


def _write_readings(path: Path, rows: list[tuple[Any, ...]]) -> None:
    """The readings exactly as exported, keyed by their stored input digest (nothing re-read).

    The file is made by :class:`ReadingStore` (schema, kind, version); the rows go in as
    ``ReadingStore.rows`` gave them out.
    """
    import sqlite3
    import time
    from contextlib import closing

    from slmbench.microtasks.store import ReadingStore

    ReadingStore(path).close()
    now = time.time()
    with closing(sqlite3.connect(path)) as conn, conn:
        conn.executemany("INSERT INTO readings(model, task, prompt_id, item_id, input_sha256,"
                         " raw, created_at) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                         [(*r, now) for r in rows])


def _check_one_harness(run_dir: Path, trials: list[Any], source: str) -> None:
    """ConfigError when writing ``trials`` into the store of ``run_dir`` would put trials of
    one task made by two harnesses (their per-task fingerprints, ``Trial.harness``) side by
    side: trials of different harnesses never mix in a store."""
    from slmbench.agents.store import DB_NAME, RunStore

    made: dict[str, set[str | None]] = {}
    for t in trials:
        made.setdefault(t.task_id, set()).add(t.harness)
    if (run_dir / DB_NAME).is_file():
        with RunStore(run_dir) as store:
            for t in store.trials():
                made.setdefault(t.key.task, set()).add(t.record.get("harness"))
    for task, found in sorted(made.items()):
        if len(found) > 1:
            shown = ", ".join(sorted(str(h) for h in found))
            raise ConfigError(f"{source} and {run_dir} hold trials of {task} made by several "
                              f"harnesses ({shown}); trials of different harnesses must not mix",
                              "merge only stores made by the same slmbench harness (prompts, "
                              "parser, tools, tasks), or keep them apart under another --out")


def _put_trials(study: Study, run_dir: Path, trials: list[Any]) -> int:
    """Store ``trials`` (new keys only) in a Part A block's store; how many were new.

    When every trial the store then holds was made by this checkout's harness (each trial's
    per-task fingerprint is the one its task has here), the store records the block's harness
    fingerprint, so ``slmbench study`` resumes it; otherwise it records ``merged-<digest of
    the trials' fingerprints>``, which a run refuses to add to (a page is still made from
    it)."""
    import hashlib

    from slmbench.agents.harness import fingerprint
    from slmbench.agents.runner.executor import harness_of, plan_of
    from slmbench.agents.store import RunStore

    block = [study.part_a_dir(b) for b in range(len(study.part_a))].index(run_dir)
    exp = part_a_experiment(study, block)
    plan = plan_of(exp)
    here = {tid: fingerprint([task], toolset=exp.toolset, prompts=exp.prompts,
                             scaffold=exp.scaffold) for tid, task in plan.tasks.items()}
    with RunStore(run_dir) as store:
        new = sum(store.put(t.key, t.outcome.value, t) for t in trials)
        if store.get_meta("harness_fingerprint") is None:
            made = {t.key.task: t.record.get("harness") for t in store.trials()}
            digest = hashlib.sha256(json.dumps(sorted(made.items())).encode()).hexdigest()[:8]
            store.set_meta("harness_fingerprint", harness_of(exp, plan) if all(
                h == here.get(task) for task, h in made.items()) else f"merged-{digest}")
    return new


def import_exports(exports: Path, study: Study) -> ImportSummary:
    """Rebuild the study's stores from the exports beside its page (the inverse of the exports
    :func:`write_page` writes), so ``--page-only`` works on a clone with no store and no model.

    Part A trials go to the block whose grid plans them, Part B readings to the readings store
    as they were stored, HumanEval results to the study's HumanEval directories. Refuses (and
    writes nothing) when a target store exists or an export is malformed.
    """
    if not exports.is_dir():
        raise ConfigError(f"{exports} is not a folder", _IMPORT_HINT)
    if not _exports_in(exports):
        raise ConfigError(f"{exports} holds none of {TRIALS_EXPORT}, {READINGS_EXPORT}, "
                          f"{HUMANEVAL_EXPORT}", _IMPORT_HINT)
    humaneval: dict[Path, list[Any]] = {}
    for target, t in _other_humaneval(study, exports):
        humaneval.setdefault(target, []).append(t)
    every = _New(trials=_route_trials(study, trials, exports) if (
                     trials := _other_trials(exports)) else {},
                 readings=_other_readings(exports), humaneval=humaneval)
    if taken := [t for t in every.stores(study) if t.exists()]:
        raise ConfigError(f"{taken[0]} exists; import never overwrites a store",
                          "import into a new --out directory, or delete the old stores")
    return _write(study, every, str(exports))  # every target is new: all of it is written


# -- merging the stores of several machines ------------------------------------------------------

_MERGE_HINT = ("each --merge folder is a study's `out` made from this study file on another "
               "machine (part-a/<n>/run.sqlite, part-b/readings.sqlite, "
               "humaneval/<name>/run.sqlite), or a folder of its exports (trials.jsonl.gz, "
               "readings.jsonl.gz, humaneval.jsonl.gz) from `slmbench study FILE --export DIR` "
               "or beside its page")


def _exports_in(folder: Path) -> dict[str, Path]:
    """The export files ``folder`` holds, by name (none: it is a study ``out``)."""
    return {n: folder / n for n in (TRIALS_EXPORT, READINGS_EXPORT, HUMANEVAL_EXPORT)
            if (folder / n).is_file()}


def _other_trials(folder: Path) -> list[Any]:
    """Every trial of ``folder`` (as Trial records): its ``trials.jsonl.gz`` if it is an
    exports folder, else every store under ``folder/part-a/*/``."""
    from slmbench.agents.records import Trial
    from slmbench.agents.store import DB_NAME, RunStore

    if exports := _exports_in(folder):
        dump = exports.get(TRIALS_EXPORT)
        return [] if dump is None else _validated(Trial, dump, read_jsonl_gz(dump))
    out = []
    for db in sorted((folder / "part-a").glob(f"*/{DB_NAME}")):
        with RunStore(db.parent) as store:
            out += _validated(Trial, db, [t.record for t in store.trials()])
    return out


def _other_readings(folder: Path) -> list[tuple[Any, ...]]:
    """Every reading of ``folder`` (its ``readings.jsonl.gz``, or ``part-b/readings.sqlite``):
    its five key fields and raw JSON."""
    from slmbench.microtasks.store import ReadingStore

    if exports := _exports_in(folder):
        dump = exports.get(READINGS_EXPORT)
        return [] if dump is None else _readings(dump)
    path = folder / "part-b" / READINGS_NAME
    if not path.is_file():
        return []
    with ReadingStore(path) as store:
        return [(r["model"], r["task"], r["prompt_id"], r["item_id"], r["input_sha256"],
                 json.dumps(r["raw"], sort_keys=True)) for r in store.rows()]


def _other_humaneval(study: Study, folder: Path) -> list[tuple[Path, Any]]:
    """Every HumanEval result of ``folder``, as (this study's HumanEval directory, stored
    trial): from its ``humaneval.jsonl.gz``, or from ``folder/humaneval/<name>`` (the layout
    of ``--out``) for each directory of the same name."""
    from slmbench.agents.humaneval import VARIANT
    from slmbench.agents.records import TrialKey
    from slmbench.agents.store import DB_NAME, RunStore, StoredTrial

    if exports := _exports_in(folder):
        if (dump := exports.get(HUMANEVAL_EXPORT)) is None:
            return []
        return [(target, StoredTrial(
                    key=TrialKey(model=m, task=r.task_id, variant=VARIANT),
                    outcome="pass" if r.passed else "fail",
                    record=json.loads(r.model_dump_json()), created_at=0.0))
                for target, results in _route_humaneval(study, read_jsonl_gz(dump),
                                                        dump).items()
                for m, r in results]
    out = []
    for target in study.humaneval:
        source = folder / "humaneval" / target.name
        if (source / DB_NAME).is_file():
            with RunStore(source) as store:
                out += [(target, t) for t in store.trials()]
    return out


def _clash(what: str, where: Path, other: Path) -> ConfigError:
    return ConfigError(f"{what} is stored in {where} and in {other} with different content; "
                       "merging never overwrites a stored record",
                       "keep the record of one machine: delete the other's store (or that "
                       "model's block of it) and merge again, or merge into a fresh --out")


def _trial_name(t: Any) -> str:
    k = t.key
    return f"trial {k.model} {k.task} {k.variant} T={k.temperature:g} repeat {k.repeat}"


def _new_trials(study: Study, folders: list[Path]) -> dict[Path, list[Any]]:
    """Trials of ``folders`` not yet in this study's run stores, by target run directory;
    ConfigError if one key holds different records (in two folders, or here and there)."""
    from slmbench.agents.records import Trial
    from slmbench.agents.store import DB_NAME, RunStore

    found: dict[tuple[Path, Any], tuple[Any, str, Path]] = {}  # -> (trial, JSON, folder)
    for folder in folders:
        if not (others := _other_trials(folder)):
            continue
        for target, ts in _route_trials(study, others, folder).items():
            for t in ts:
                dump, seen = t.model_dump_json(), found.get((target, t.key))
                if seen is not None and seen[1] != dump:
                    raise _clash(_trial_name(t), seen[2], folder)
                found[(target, t.key)] = (t, dump, folder)
    out: dict[Path, list[Any]] = {}
    for target in dict.fromkeys(d for d, _ in found):
        mine = [v for (d, _), v in found.items() if d == target]
        if not (target / DB_NAME).is_file():
            out[target] = [t for t, _, _ in mine]
            continue
        with RunStore(target) as store:
            for t, dump, folder in mine:
                if (stored := store.get(t.key)) is None:
                    out.setdefault(target, []).append(t)
                elif Trial.model_validate(stored.record).model_dump_json() != dump:
                    raise _clash(_trial_name(t), target, folder)
    return out


def _new_readings(study: Study, folders: list[Path]) -> list[tuple[Any, ...]]:
    """Readings of ``folders`` not yet in this study's readings store; ConfigError if one key
    (model, task, prompt, item, input digest) holds different raw outputs."""
    from slmbench.microtasks.store import ReadingStore

    path = study.part_b_dir / READINGS_NAME
    here: dict[tuple[Any, ...], tuple[str, Path]] = {}
    if path.is_file():
        with ReadingStore(path) as store:
            here = {(r["model"], r["task"], r["prompt_id"], r["item_id"], r["input_sha256"]):
                    (json.dumps(r["raw"], sort_keys=True), path) for r in store.rows()}
    new: dict[tuple[Any, ...], tuple[str, Path]] = {}
    for folder in folders:
        for row in _other_readings(folder):
            key, raw = row[:5], row[5]
            seen = here.get(key) or new.get(key)
            if seen is None:
                new[key] = (raw, folder)
            elif seen[0] != raw:
                raise _clash(f"reading {' · '.join(key[:4])}", seen[1], folder)
    return [(*k, raw) for k, (raw, _) in new.items()]


def _new_humaneval(study: Study, folders: list[Path]) -> dict[Path, list[Any]]:
    """HumanEval results of ``folders`` not yet in this study's HumanEval directories, as
    stored trials; ConfigError if one key holds different results."""
    from slmbench.agents.store import DB_NAME, RunStore

    found: dict[tuple[Path, Any], tuple[Any, Path]] = {}
    for folder in folders:
        for target, t in _other_humaneval(study, folder):
            seen = found.get((target, t.key))
            if seen is not None and seen[0].record != t.record:
                raise _clash(f"HumanEval {t.key.model} {t.key.task}", seen[1], folder)
            found[(target, t.key)] = (t, folder)
    out: dict[Path, list[Any]] = {}
    for (target, key), (t, folder) in found.items():
        if (target / DB_NAME).is_file():
            with RunStore(target) as store:
                stored = store.get(key)
            if stored is not None:
                if stored.record != t.record:
                    raise _clash(f"HumanEval {key.model} {key.task}", target, folder)
                continue
        out.setdefault(target, []).append(t)
    return out


@dataclass(frozen=True)
class _New:
    """The records some folders hold that this study's stores do not, by target store."""

    trials: dict[Path, list[Any]]
    readings: list[tuple[Any, ...]]
    humaneval: dict[Path, list[Any]]

    def stores(self, study: Study) -> list[Path]:
        from slmbench.agents.store import DB_NAME

        return [d / DB_NAME for d in [*self.trials, *self.humaneval]] + (
            [study.part_b_dir / READINGS_NAME] if self.readings else [])


def _gather(study: Study, folders: list[Path]) -> _New:
    """What ``folders`` hold that this study's stores do not; ConfigError (nothing written) on
    a malformed folder or a key stored with different content."""
    return _New(trials=_new_trials(study, folders), readings=_new_readings(study, folders),
                humaneval=_new_humaneval(study, folders))


def _write(study: Study, new: _New, source: str) -> ImportSummary:
    """Write ``new`` into the study's stores (trials of one harness per task only); a store
    this call creates is removed again if writing fails. The records written per store."""
    from slmbench.agents.store import DB_NAME, RunStore

    for run_dir, ts in new.trials.items():
        _check_one_harness(run_dir, ts, source)
    created = [t for t in new.stores(study) if not t.exists()]
    written: dict[str, int] = {}
    try:
        for run_dir, ts in sorted(new.trials.items()):
            written[str(run_dir / DB_NAME)] = _put_trials(study, run_dir, ts)
        for run_dir, stored in sorted(new.humaneval.items()):
            with RunStore(run_dir) as store:
                written[str(store.path)] = sum(store.put(t.key, t.outcome, t.record)
                                               for t in stored)
        if new.readings:
            _write_readings(study.part_b_dir / READINGS_NAME, new.readings)
            written[str(study.part_b_dir / READINGS_NAME)] = len(new.readings)
    except BaseException:
        for t in created:
            for leftover in (t, t.with_name(t.name + "-wal"), t.with_name(t.name + "-shm")):
                leftover.unlink(missing_ok=True)
        raise
    return ImportSummary(stores=written)


def merge_stores(study: Study, folders: list[Path]) -> ImportSummary:
    """Copy into this study's stores the trials, readings and HumanEval results another machine
    stored for the same study file, so one page shows both. Each folder is that machine's study
    ``out`` (its HumanEval results under ``humaneval/<name>``, as ``--out`` lays them out) or a
    folder of its exports (:func:`export_study`, or the exports beside its page).

    A record already here with the same content is skipped; the same key with different
    content (in two folders, or here and in a folder) is refused before anything is written.
    Returns the records written per store.
    """
    from slmbench.agents.store import DB_NAME

    for folder in folders:
        if not folder.is_dir():
            raise ConfigError(f"--merge {folder} is not a folder", _MERGE_HINT)
        if not _exports_in(folder) and not any((folder / "part-a").glob(f"*/{DB_NAME}")) \
                and not (folder / "part-b" / READINGS_NAME).is_file() \
                and not any((folder / "humaneval").glob(f"*/{DB_NAME}")):
            raise ConfigError(f"--merge {folder} holds no study store", _MERGE_HINT)
    return _write(study, _gather(study, folders), " and ".join(map(str, folders)))


def export_study(study: Study, dest: Path) -> ImportSummary:
    """Write every record the study's stores hold, as the exports beside a page do
    (``trials.jsonl.gz``, ``readings.jsonl.gz``, ``humaneval.jsonl.gz``), into ``dest``: the
    form a study's progress travels in, to another machine or into a commit, and is read back
    by :func:`merge_stores`. Loads no model and writes no page. ConfigError if nothing is stored.
    Returns the records written per export file."""
    from slmbench.agents.humaneval import results
    from slmbench.agents.store import DB_NAME, RunStore
    from slmbench.microtasks.store import ReadingStore

    trials = stored_trials(study)
    path = study.part_b_dir / READINGS_NAME
    readings = 0
    if path.is_file():
        with ReadingStore(path) as store:
            readings = store.count()
    humaneval = [d for d in study.humaneval if (d / DB_NAME).is_file()]
    if not trials and not readings and not humaneval:
        raise ConfigError(f"study {study.name!r} has nothing stored under {study.out}",
                          "run the study (or merge its stores) before exporting it")
    written: dict[str, int] = {}
    if trials:
        written[str(export_trials(trials, dest))] = len(trials)
    if readings:
        with ReadingStore(path) as store:
            written[str(export_readings(store, dest))] = readings
    if humaneval:
        n = 0
        for d in humaneval:
            with RunStore(d) as store:
                n += sum(len(results(store, m)) for m in store.models())
        written[str(export_humaneval(humaneval, dest))] = n
    return ImportSummary(stores=written)


# -- sizing the plan from measured rates ---------------------------------------------------------

class PlanRow(BaseModel):
    """One model of one block: what the study plans, what is stored, and the model time the
    rest should take at the rate measured for it."""

    model_config = ConfigDict(frozen=True)

    block: str  # A1, B2, ...
    model: str
    unit: str  # "trial" | "reading"
    planned: int
    stored: int
    at_most: bool = False  # a sequential Part B block: ``planned`` is an upper bound
    seconds_per: float | None = None  # None: no rate measured for this model
    measured_n: int = 0  # trials or readings the rate is the mean of
    rate_from: str = ""  # the spec the rate was measured on, when not this one
    spent_s: float = 0.0  # model time of the stored trials (readings) this row plans
    settled: bool = False  # a sequential block's model whose every cell is decided: none left

    @property
    def remaining(self) -> int:
        return 0 if self.settled else max(self.planned - self.stored, 0)

    @property
    def hours(self) -> float | None:
        return None if self.seconds_per is None else self.remaining * self.seconds_per / 3600


def _base(spec: str) -> str:
    return spec.split("?", 1)[0]


class _Rates:
    """Mean model seconds per trial and per reading, by model spec, over every store found.

    A record met twice (in a store and in the export of that store) counts once: it is the
    same (identity, seconds) pair."""

    def __init__(self) -> None:
        self.seen: dict[tuple[str, str], dict[tuple[Any, ...], None]] = {}

    def add(self, unit: str, spec: str, identity: tuple[Any, ...], seconds: float) -> None:
        self.seen.setdefault((unit, spec), {})[(*identity, seconds)] = None

    @property
    def sums(self) -> dict[tuple[str, str], list[float]]:
        return {k: [key[-1] for key in v] for k, v in self.seen.items()}

    def of(self, unit: str, spec: str) -> tuple[float | None, int, str]:
        """(seconds per unit, n, the spec it was measured on if another one)."""
        if got := self.sums.get((unit, spec)):
            return sum(got) / len(got), len(got), ""
        near = [(s, v) for (u, s), v in self.sums.items() if u == unit and _base(s) == _base(spec)]
        if near:
            s, v = max(near, key=lambda e: len(e[1]))
            return sum(v) / len(v), len(v), s
        return None, 0, ""


OWN_RATE_MIN = 10  # records of the study's own stores that size a model without older runs


def _measure(folders: list[Path]) -> _Rates:
    """The rates of every run store, readings store and page export (``trials.jsonl.gz``,
    ``readings.jsonl.gz``: the stores of a committed page) found under ``folders``."""
    from slmbench.agents.humaneval import VARIANT
    from slmbench.agents.store import DB_NAME, RunStore
    from slmbench.microtasks.store import ReadingStore

    rates = _Rates()

    def trial(model: str, variant: str, record: dict[str, Any]) -> None:
        if variant != VARIANT and (s := record.get("wall_s")):
            rates.add("trial", model, tuple(record.get(k) for k in (
                "task_id", "variant", "toolset", "temperature", "repeat")), float(s))

    def reading(row: dict[str, Any]) -> None:
        if s := row["raw"].get("seconds"):
            rates.add("reading", row["model"], (row["task"], row["prompt_id"], row["item_id"]),
                      float(s))

    for folder in folders:
        for db in sorted(folder.glob(f"**/{DB_NAME}")):
            with RunStore(db.parent) as store:
                for t in store.trials():
                    trial(t.key.model, t.key.variant, t.record)
        for db in sorted(folder.glob(f"**/{READINGS_NAME}")):
            with ReadingStore(db) as readings:
                for r in readings.rows():
                    reading(r)
        for dump in sorted(folder.glob(f"**/{TRIALS_EXPORT}")):
            for row in read_jsonl_gz(dump):
                trial(row["model"], row.get("variant", "base"), row)
        for dump in sorted(folder.glob(f"**/{READINGS_EXPORT}")):
            for row in read_jsonl_gz(dump):
                reading(row)
    return rates


class _PlanRates:
    """The rate of a model as measured in the study's own stores once they hold at least
    :data:`OWN_RATE_MIN` of its records (this harness, this machine), else pooled with the
    exports beside its page and the ``--rates`` folders (older runs, maybe another harness)."""

    def __init__(self, own: _Rates, pooled: _Rates) -> None:
        self.own, self.pooled = own, pooled

    def of(self, unit: str, spec: str) -> tuple[float | None, int, str]:
        got = self.own.of(unit, spec)
        return got if got[1] >= OWN_RATE_MIN else self.pooled.of(unit, spec)


def size_plan(study: Study, rate_folders: Sequence[Path] = ()) -> list[PlanRow]:
    """Every block's models with planned and stored trials (readings), the model time the stored
    ones took, and the hours the rest should take, at the mean rate measured in this study's
    stores (alone, once they hold :data:`OWN_RATE_MIN` records of the model), else pooled with
    the exports beside its page and ``rate_folders`` (run directories, study ``out`` folders or
    a page's exports folder of earlier runs on this machine)."""
    from slmbench.agents.runner.executor import plan_of
    from slmbench.agents.store import DB_NAME, RunStore
    from slmbench.microtasks.store import ReadingStore

    beside = [assets_dir(study)] if study.page is not None else []
    own = _measure([study.out])
    pooled = _measure([*beside, *rate_folders])
    for key, seen in own.seen.items():  # each store read once; a record met twice counts once
        pooled.seen.setdefault(key, {}).update(seen)
    rates = _PlanRates(own, pooled)
    rows = []
    for block, exp in enumerate(study.part_a):
        walls: dict[Any, float] = {}  # stored trial key -> its model seconds
        if (study.part_a_dir(block) / DB_NAME).is_file():
            with RunStore(study.part_a_dir(block)) as store:
                walls = {t.key: float(t.record.get("wall_s") or 0.0) for t in store.trials()}
        for m in exp.models:
            keys = {p.key for p in plan_of(part_a_experiment(study, block, [m])).trials}
            per, n, src = rates.of("trial", m)
            done = keys & walls.keys()
            rows.append(PlanRow(block=f"A{block + 1}", model=m, unit="trial", planned=len(keys),
                                stored=len(done), seconds_per=per, measured_n=n,
                                rate_from=src, spent_s=sum(walls[k] for k in done)))
    path = study.part_b_dir / READINGS_NAME
    stored: dict[str, dict[tuple[str, ...], float]] = {}  # model -> reading key -> seconds
    settled: set[tuple[int, str]] = set()  # (sequential block, model) with every cell decided
    if path.is_file():
        with ReadingStore(path) as store:
            for r in store.rows():
                stored.setdefault(r["model"], {})[(r["task"], r["prompt_id"], r["item_id"])] = (
                    float(r["raw"].get("seconds") or 0.0))
            settled = {(block, m) for block, b in enumerate(study.part_b) if b.sequential
                       for m in b.models if m in stored and _decided(study, b, m, store)}
    for block, b in enumerate(study.part_b):
        items = planned_items(b)
        want = {(t, p, i.id) for t, its in items.items() for p in b.prompts for i in its}
        for m in b.models:
            per, n, src = rates.of("reading", m)
            mine = stored.get(m, {})
            done = want & mine.keys()
            rows.append(PlanRow(block=f"B{block + 1}", model=m, unit="reading",
                                planned=len(want), stored=len(done), at_most=b.sequential,
                                seconds_per=per, measured_n=n, rate_from=src,
                                spent_s=sum(mine[k] for k in done),
                                settled=(block, m) in settled))
    for block, c in enumerate(study.cascade):
        keys = set(shortlist_keys(c))
        per, n, src = rates.of("reading", c.model)
        mine = stored.get(c.model, {})
        done = keys & mine.keys()
        rows.append(PlanRow(block=f"C{block + 1}", model=c.model, unit="reading",
                            planned=len(keys), stored=len(done), seconds_per=per,
                            measured_n=n, rate_from=src, spent_s=sum(mine[k] for k in done)))
    return rows
# -- the eligibility page of a readings store ----------------------------------------------------

def write_eligibility_page(store_path: Path, page: Path, *, command: str,
                           models: list[str] | None = None, tasks: list[str] | None = None,
                           prompts: list[str] | None = None, limit: int | None = None,
                           seed: int = 0, sequential: bool = True,
                           read_with: list[str] | None = None,
                           title: str = "Eligibility read until decided") -> Path:
    """Rebuild every stored block's matrix from ``store_path`` (no model is loaded), run
    ``recommend`` on them, and write ``page`` plus ``<page stem>/eligibility.json`` (cells,
    no readings) and ``<page stem>/routes.json`` (loads into ``Cascade``). ``models``,
    ``tasks``, ``prompts``: default, everything the store holds."""
    from datetime import UTC, datetime

    from slmbench.microtasks.recommend import recommend
    from slmbench.microtasks.store import ReadingStore
    from slmbench.microtasks.stored import stored_keys, stored_matrices
    from slmbench.report.eligibility_page import render_eligibility_page

    if not store_path.is_file():
        raise ConfigError(f"readings store {store_path} does not exist",
                          "pass the --store of an `slmbench eligibility` run")
    with ReadingStore(store_path) as store:
        keys = stored_keys(store)
        got = stored_matrices(
            store, models or list(dict.fromkeys(k[0] for k in keys)),
            tasks or [t for t in micro_tasks.names() if t in {k[1] for k in keys}],
            prompts or sorted({k[2] for k in keys}), limit=limit, seed=seed,
            sequential=sequential, command=command)
        rec = (recommend(got.runs, store=store, command=command)
               if any(r.cells for r in got.runs) else None)
    assets = page.parent / page.stem
    assets.mkdir(parents=True, exist_ok=True)
    (assets / MATRIX_NAME).write_text(
        "[\n" + ",\n".join(r.model_copy(update={"readings": []}).model_dump_json(indent=1)
                           for r in got.runs) + "\n]\n", encoding="utf-8")
    if rec is not None:
        (assets / "routes.json").write_text(rec.routes().model_dump_json(indent=1),
                                            encoding="utf-8")
    page.write_text(render_eligibility_page(
        title=title, command=command, created=datetime.now(UTC).isoformat(timespec="seconds"),
        store=str(store_path), read_with=read_with or [], runs=got.runs,
        incomplete=got.incomplete, rec=rec), encoding="utf-8")
    return page
