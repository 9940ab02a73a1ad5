"""What a study file says: its blocks (:class:`Study`, read by :func:`load_study`), where
each block keeps its records, and what each block plans to run or read.

A name enters here once: each ``[[part_b]]`` and ``[[cascade]]`` block resolves its tasks'
names to their :class:`~slmbench.microtasks.spec.MicroTask` when the file is read
(:attr:`PartB.micro_tasks`, :attr:`CascadeBlock.micro_task`, :attr:`CascadeBlock.history`),
and every later step is handed the objects. The readings store of every Part B block is
:attr:`Study.readings_path` (:meth:`Study.readings` opens it)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    field_validator,
    model_validator,
)

from slmbench.agents.runner.config import Experiment
from slmbench.agents.runner.retry import RetryPolicy
from slmbench.core.errors import ConfigError
from slmbench.core.tomlfile import first_error, load_toml
from slmbench.microtasks import tasks as registry
from slmbench.microtasks.datasets.records import AnyItem
from slmbench.microtasks.matrix import family_size
from slmbench.microtasks.prompts import resolve_prompt_ids
from slmbench.microtasks.samples import select_items
from slmbench.microtasks.session import READ_ATTEMPTS
from slmbench.microtasks.spec import MicroTask
from slmbench.microtasks.store import ReadingStore
from slmbench.models.placement import RayModelOptions

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
    tasks: list[registry.KnownTask] = Field(default_factory=lambda: list(registry.names()),
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
    _tasks: list[MicroTask] = PrivateAttr(default_factory=list)

    @field_validator("prompts")
    @classmethod
    def _known_prompts(cls, prompts: list[str]) -> list[str]:
        return resolve_prompt_ids(",".join(prompts))

    @model_validator(mode="after")
    def _resolve_tasks(self) -> PartB:
        self._tasks = registry.lookup(self.tasks)
        return self

    @property
    def micro_tasks(self) -> list[MicroTask]:
        """The block's tasks (``tasks`` names them), looked up once, when the block is read."""
        return self._tasks


class CascadeBlock(BaseModel):
    """A ``[[cascade]]`` block: the BM25 -> model cascade of ``slmbench cascade`` on one
    model, read through the study's readings store (locally)."""

    model_config = ConfigDict(extra="forbid")

    model: str
    task: registry.KnownTask = "ranking"  # one a cascade can route (MicroTask.cascadable)
    k: int = Field(default=3, ge=2, description="shortlist size")
    limit: int | None = Field(default=None, ge=1, description="eval items; None: all")
    fit_limit: int | None = Field(default=None, ge=1,
                                  description="fit items for the router's margin; None: all")
    seed: int = Field(default=0, ge=0)
    turns: int | None = Field(default=None, ge=2,
                              description="ranking: widen each item to this many turns")
    _tasks: tuple[MicroTask, MicroTask | None] | None = PrivateAttr(default=None)

    @model_validator(mode="after")
    def _the_task_can_be_cascaded(self) -> CascadeBlock:
        task, history = registry.cascaded(self.task, self.turns)
        if not task.cascadable:
            raise ValueError(f"{self.task} cannot be cascaded: it declares no graded baseline "
                             "and shortlist (task = \"ranking\" or \"tools\")")
        if self.turns is not None and task.widen is None:
            raise ValueError("turns widens turn-ranking items only (a task that declares "
                             "widen=: task = \"ranking\")")
        self._tasks = task, history
        return self

    @property
    def micro_task(self) -> MicroTask:
        """The task the cascade routes, looked up once, when the block is read."""
        assert self._tasks is not None  # set by the block's validator
        return self._tasks[0]

    @property
    def history(self) -> MicroTask | None:
        """With ``turns``: the task whose conversations widen its items; else None."""
        assert self._tasks is not None
        return self._tasks[1]

    @property
    def reads(self) -> list[MicroTask]:
        """Every task whose items the block reads: its own, and its history's."""
        return [self.micro_task, *([self.history] if self.history else [])]


def _with_option(spec: str, key: str, value: str) -> str:
    """``spec`` with the option ``key=value`` added (``?`` or ``&``)."""
    return f"{spec}{'&' if '?' in spec else '?'}{key}={value}"


class AgreementBlock(BaseModel):
    """An ``[agreement]`` table: one model through several runtimes (``slmbench agree``).

    The study's blocks follow from it, so a file with ``[agreement]`` has no ``[part_a]`` or
    ``[part_b]``: one Part A block (``suites``, T = 0, one repeat, no response cache) and one
    fixed-n Part B block (``tasks`` under p0, ``limit`` items each) over every spec and its
    noise floor (:meth:`floor`)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    specs: list[str] = Field(min_length=2, description="model specs of one model (one GGUF)")
    margin: float = Field(default=0.10, gt=0.0, le=1.0, description="TOST margin, Part A")
    suites: list[str] = Field(default_factory=lambda: ["capability"], min_length=1)
    part_a_tasks: list[str] = Field(default_factory=list, description="filter the suites")
    tasks: list[registry.KnownTask] = Field(default_factory=lambda: ["approval", "tools"])
    limit: int | None = Field(default=200, ge=1, description="Part B items per task")
    floor: bool = Field(default=True, description="also read each runtime's noise floor")
    chunking: str = Field(default="prompt", description="the floor of a llamacpp: spec")
    source: Path | None = Field(default=None, description="built datasets; default: the cache")

    def floor_pairs(self) -> list[tuple[str, str, str]]:
        """(spec, its floor spec, how the two differ) for each spec that has a floor: a
        ``llamacpp:`` spec in another chunking, a ``llamaserver:`` spec at one slot (one
        request in flight) against its own slots."""
        if not self.floor:
            return []
        out = []
        for spec in dict.fromkeys(self.specs):
            if spec.startswith("llamacpp:") and "chunking=" not in spec:
                out.append((spec, _with_option(spec, "chunking", self.chunking),
                            f"llama.cpp in-process, one chunk per message against the "
                            f"{self.chunking!r} chunking"))
            elif spec.startswith("llamaserver:") and "slots=" not in spec:
                out.append((spec, _with_option(spec, "slots", "1"),
                            "llama-server with its default slots (8 requests in flight) "
                            "against one slot (1 in flight)"))
        return out

    def all_specs(self) -> list[str]:
        return list(dict.fromkeys([*self.specs, *(f for _, f, _ in self.floor_pairs())]))


class Study(BaseModel):
    """One study file, validated."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1)
    out: Path
    page: Path | None = None
    # an earlier study's page: this page's "What changed since" section compares its
    # verdicts.json with this page's verdicts
    previous: Path | None = None
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
    agreement: AgreementBlock | None = None

    @model_validator(mode="after")
    def _agreement_makes_the_blocks(self) -> Study:
        if self.agreement is None:
            return self
        specs = self.agreement.all_specs()
        part_a = [Experiment(name=self.name, models=specs, suites=self.agreement.suites,
                             tasks=self.agreement.part_a_tasks, temperatures=[0.0], repeats=1,
                             cache="off")]
        # llama-server reads Part B one item at a time: its slots make no floor there
        read = [*self.agreement.specs, *(f for spec, f, _ in self.agreement.floor_pairs()
                                         if spec.startswith("llamacpp:"))]
        part_b = [PartB(models=list(dict.fromkeys(read)), tasks=self.agreement.tasks,
                        prompts=["p0"], limit=self.agreement.limit,
                        source=self.agreement.source)]
        given = (self.part_a, self.part_b, self.cascade)
        if any(given) and given != (part_a, part_b, []):
            raise ValueError("a study with [agreement] has no [part_a], [part_b] or [cascade]: "
                             "its blocks follow from the agreement table")
        self.part_a, self.part_b = part_a, part_b
        return self

    @model_validator(mode="after")
    def _part_a_blocks_store_apart(self) -> Study:
        if any(e.out is not None and (e.out.is_absolute() or ".." in e.out.parts)
               for e in self.part_a):
            raise ValueError("a [part_a] block's `out` is a folder inside the study's `out`, "
                             "written relative to it (e.g. \".\")")
        dirs = [self.part_a_dir(b) for b in range(len(self.part_a))]
        if len(set(dirs)) < len(dirs):
            raise ValueError("two [part_a] blocks store their trials in one folder")
        return self

    @field_validator("part_a", "part_b", "cascade", mode="before")
    @classmethod
    def _one_or_many(cls, value: object) -> object:
        return [value] if isinstance(value, dict) else value

    def part_a_dir(self, block: int) -> Path:
        """Block ``block``'s run directory: its ``out`` inside the study's, else
        ``part-a/<n>``."""
        given = self.part_a[block].out
        return self.out / (given if given is not None else Path("part-a", str(block + 1)))

    @property
    def part_b_dir(self) -> Path:
        return self.out / "part-b"

    @property
    def part_b_family(self) -> int:
        """How many Part B configurations the study tests together (model, task, prompt and
        reading, over every block): the family its "eligible" stops and its Holm correction
        are over."""
        return sum(family_size(b.models, b.tasks, b.prompts) for b in self.part_b)

    @property
    def readings_path(self) -> Path:
        """The readings store every Part B and cascade block reads into."""
        return readings_in(self.out)

    def readings(self) -> ReadingStore:
        """The study's readings store, opened (made when it does not exist yet)."""
        return ReadingStore(self.readings_path)

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
            "previous": fix(self.previous) if self.previous else None,
            "humaneval": [fix(p) for p in self.humaneval], "part_b": part_b})


def _filled(value: object, fill: Mapping[str, str]) -> object:
    """``value`` with each ``{name}`` of ``fill`` in its strings replaced by its value."""
    if isinstance(value, str):
        for name, text in fill.items():
            value = value.replace(f"{{{name}}}", text)
        return value
    if isinstance(value, list):
        return [_filled(v, fill) for v in value]
    if isinstance(value, dict):
        return {k: _filled(v, fill) for k, v in value.items()}
    return value


def load_study(path: Path, *, base: Path | None = None,
               fill: Mapping[str, str] | None = None) -> Study:
    """Read and validate a study file; relative paths are taken from ``base`` (default: cwd).
    ``fill``: the values of the file's ``{name}`` placeholders (the demo's model and out)."""
    raw = load_toml(path, what="study file", hint=_HINT)
    if fill:
        raw = {k: _filled(v, fill) for k, v in raw.items()}
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
        raise ConfigError(f"{path}: has no [part_a], [part_b], [cascade] or [agreement]", _HINT)
    return study.resolved(base or Path.cwd())


MATRIX_NAME = "eligibility.json"

READINGS_NAME = "readings.sqlite"


def readings_in(out: Path) -> Path:
    """The readings store of the study whose ``out`` is ``out`` (this machine's or another's)."""
    return out / "part-b" / READINGS_NAME

#: the exports a page carries beside it (``<page dir>/<page stem>/``), one JSON document a line
TRIALS_EXPORT = "trials.jsonl.gz"

READINGS_EXPORT = "readings.jsonl.gz"

HUMANEVAL_EXPORT = "humaneval.jsonl.gz"


def part_a_experiment(study: Study, block: int, models: list[str] | None = None) -> Experiment:
    """Block ``block`` of Part A, stored in its own run directory; ``models`` narrows it."""
    exp = study.part_a[block]
    update: dict[str, object] = {"out": study.part_a_dir(block)}
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


def assets_dir(study: Study) -> Path:
    """Where the page's figures and HTML report go: ``<page dir>/<page stem>/``."""
    assert study.page is not None
    return study.page.parent / study.page.stem


def planned_items(b: PartB) -> dict[str, list[AnyItem]]:
    """The eval items block ``b`` reads, per task (the same sample ``run_matrix`` takes)."""
    return {t.name: select_items(t, t.load_items(b.source), b.limit, b.seed)
            for t in b.micro_tasks}
