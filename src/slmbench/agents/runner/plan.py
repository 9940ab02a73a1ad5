"""The grid of an experiment: every trial a finished run holds.

models × tasks (from suites and/or task ids) × instances × variants × temperatures ×
repeats, where a task that declares ``min_repeats`` gets at least that many (the
consistency tasks need three runs for pass^3, whatever ``repeats`` says). A task's
*instances* are the worlds it runs in (``Experiment.instance_seeds``: 0..N-1, seed 0 the
curated task; the key's ``instance``; the executor runs
``slmbench.agents.tasks.families.instance(task, instance)``); with ``instances = 1`` the
grid is the one planned before instances existed, key for key.
Each trial's seed is derived from its identity (task, repeat, the
experiment's base seed and, past the curated world, the instance) by :func:`derive_seed`,
and stored in its :class:`~slmbench.agents.records.TrialKey`. Model, variant and
temperature are left out on purpose: the models, the rewordings / faults of a task and the
temperatures of a sweep all face the same seed for the same (task, repeat, instance),
so they compare trial by trial (paired tests, e.g. robustness against
``base``). The key stays unique because it holds variant, temperature and instance.

The grid is ordered repeat-major (model, repeat, instance, temperature, task,
variant), so an interrupted run already holds one pass over every task (and over every
instance before a second repeat). ``Experiment.levels`` adds, for each capability family, the
difficulty ladder's levels beside its base instance (:func:`levels_to_run`; the key's
``level``, the base variant only), every level of a cell before the next cell.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict

from slmbench.agents.records import FaultPlan, TrialKey
from slmbench.agents.runner.config import DEFAULT_TASK_SUITES, Experiment, no_such_task
from slmbench.core.errors import ConfigError

SEED_SCHEME = ("v1: int.from_bytes(sha256('task|repeat|base_seed')[:4], 'big') & 0x7fffffff; "
               "instance i > 0: sha256('task|repeat|base_seed|i'); a ladder level L: "
               "'|LL' appended")
QUICK_SUITE = "quick"


class TaskLike(Protocol):
    """What the runner needs of a task: its id (the evaluator needs the rest)."""

    @property
    def id(self) -> str: ...


class Variant(BaseModel):
    """One way to run a task: its name in the trial key, and the fault to inject (if any)."""

    model_config = ConfigDict(frozen=True)

    name: str = "base"
    fault_plan: FaultPlan | None = None


class PlannedTrial(BaseModel):
    """A trial the run must hold: its store key, suite and fault plan."""

    model_config = ConfigDict(frozen=True)

    key: TrialKey
    suite: str
    fault_plan: FaultPlan | None = None


SuiteLoader = Callable[[str], Sequence[Any]]
VariantsFn = Callable[[Any], Sequence[Variant]]


@dataclass
class Plan:
    """The planned trials, in run order, and the task objects they refer to by id (each task as
    loaded: its family; :meth:`task_of` gives the instance a trial runs)."""

    trials: list[PlannedTrial]
    tasks: dict[str, Any] = field(default_factory=dict)
    _instances: dict[tuple[str, int, str], Any] = field(default_factory=dict, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def task_of(self, key: TrialKey) -> Any:
        """The task the trial ``key`` runs: its planned task at instance 0 and the base level,
        else that task's instance at the key's level
        (:func:`slmbench.agents.tasks.families.instance`: its world, tools and answer), built
        once per (task, instance, level) and shared by every trial of it (thread-safe)."""
        family = self.tasks[key.task]
        if key.instance == 0 and key.level == "base":
            return family
        cell = (key.task, key.instance, key.level)
        with self._lock:
            made = self._instances.get(cell)
            if made is None:
                from slmbench.agents.tasks.families import instance

                made = self._instances[cell] = (
                    instance(family, key.instance) if key.level == "base"
                    else instance(family, key.instance, key.level))
            return made

    def for_model(self, spec: str) -> list[PlannedTrial]:
        return [p for p in self.trials if p.key.model == spec]

    def keys(self) -> set[TrialKey]:
        return {p.key for p in self.trials}


def derive_seed(task_id: str, repeat: int, base_seed: int = 0, instance: int = 0,
                level: str = "base") -> int:
    """The trial's sampling seed: a 31-bit hash of (task, repeat, base seed), and of the
    instance too when it is not the curated world 0 (so instance 0 keeps the seeds planned
    before instances existed), and of the level when it is not the base (likewise); see
    ``SEED_SCHEME``."""
    text = (f"{task_id}|{repeat}|{base_seed}" + (f"|{instance}" if instance else "")
            + (f"|L{level}" if level != "base" else ""))
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return int.from_bytes(digest[:4], "big") & 0x7FFFFFFF


def load_runner_suite(name: str) -> list[Any]:
    """A suite by name or file (a file's answers checked derivable from the world:
    ``slmbench.agents.evaluator.load_task_file``), or ``quick``.

    ``quick`` is the first task of each capability group and of each
    reliability dimension (12 tasks): every kind of task once, for a fast look.
    """
    from slmbench.agents.evaluator import load_task_file
    from slmbench.agents.tasks import load_suite

    if name != QUICK_SUITE:
        return load_task_file(name)
    picked: dict[tuple[str, str], Any] = {}
    for task in [*load_suite("capability"), *load_suite("reliability")]:
        picked.setdefault((task.suite, task.dimension or task.group), task)
    return list(picked.values())


def select_tasks(exp: Experiment, load_suite: SuiteLoader) -> list[tuple[str, Any]]:
    """(suite, task) pairs the experiment names, in order, each task id once."""
    chosen: dict[str, tuple[str, Any]] = {}
    pool: dict[str, tuple[str, Any]] = {}
    for suite in exp.suites or DEFAULT_TASK_SUITES:
        for task in load_suite(suite):
            pool.setdefault(task.id, (getattr(task, "suite", suite), task))
    if not exp.tasks:
        return list(pool.values())
    for task_id in exp.tasks:
        if task_id not in pool:
            raise no_such_task(task_id, list(pool), exp.suites or DEFAULT_TASK_SUITES)
        chosen[task_id] = pool[task_id]
    return list(chosen.values())


def build_plan(exp: Experiment, *, load_suite: SuiteLoader, variants: VariantsFn) -> Plan:
    """Every trial the experiment's run must hold, in run order (see the module docstring).

    ``skip_code_tasks`` leaves out the tasks that list ``code_interpreter``. ``Plan.tasks``
    holds each task as loaded (its family); a trial's key says which instance it runs."""
    picked = select_tasks(exp, load_suite)
    if exp.skip_code_tasks:
        picked = [(s, t) for s, t in picked if "code_interpreter" not in getattr(t, "tools", ())]
        if not picked:
            raise ConfigError("every chosen task needs code_interpreter (--skip-code-tasks)",
                              "choose other tasks, or install bubblewrap and drop the flag")
    per_task: list[tuple[str, Any, list[Variant]]] = []
    for suite, task in picked:
        vs = list(variants(task)) or [Variant()]
        if exp.variants is not None:
            vs = [v for v in vs if v.name in exp.variants]
        per_task.append((suite, task, vs))
    if not any(vs for _, _, vs in per_task):
        raise ConfigError(f"no task has any of the variants {exp.variants}",
                          "drop `variants` to run every variant, or name existing ones")
    trials: list[PlannedTrial] = []
    most = max([exp.repeats, *(getattr(t, "min_repeats", 1) for _, t, _ in per_task)])
    cells = [(repeat, inst, temperature) for repeat in range(most)
             for inst in exp.instance_seeds() for temperature in exp.temperatures]
    ladders = {task.id: levels_to_run(task, exp.levels) for _, task, _ in per_task}
    for model in exp.models:
        for repeat, inst, temperature in cells:
            for suite, task, vs in per_task:
                if repeat >= max(exp.repeats, getattr(task, "min_repeats", 1)):
                    continue  # a task needing more repeats than the run asks (consistency)
                for level in ladders[task.id]:
                    seed = derive_seed(task.id, repeat, exp.seed, inst, level)
                    trials += [PlannedTrial(
                        key=TrialKey(model=model, task=task.id, variant=v.name,
                                     temperature=temperature, seed=seed, repeat=repeat,
                                     instance=inst, level=level),
                        suite=suite, fault_plan=v.fault_plan)
                        for v in vs if level == "base" or v.name == "base"]
    return Plan(trials=trials, tasks={task.id: task for _, task, _ in per_task})


def levels_to_run(task: Any, levels: Sequence[int]) -> list[str]:
    """The level names a task runs at: ``"base"`` always, then each asked level its family's
    ladder has beyond its base (:mod:`slmbench.agents.tasks.families.levels`; a task with no
    ladder, a reliability task or one from a task file, runs its base only)."""
    if not levels or getattr(task, "suite", None) != "capability":
        return ["base"]
    from slmbench.agents.tasks.families.levels import level_name

    names = [level_name(task, n) for n in levels]
    return ["base", *dict.fromkeys(n for n in names if n is not None and n != "base")]


def default_suite_loader() -> SuiteLoader:
    """The shipped suites, as ``execute`` loads them by default."""
    return load_runner_suite


def default_variants() -> VariantsFn:
    """Each task's variants and their fault plans (:mod:`slmbench.agents.tasks.perturb`)."""
    from slmbench.agents.tasks.perturb import fault_plan_for, variants

    def task_variants(task: Any) -> list[Variant]:
        return [Variant(name=v, fault_plan=fault_plan_for(task, v)) for v in variants(task)]

    return task_variants


def plan_of(exp: Experiment) -> Plan:
    """The trials ``execute`` would plan for ``exp`` with the shipped suites and variants."""
    return build_plan(exp, load_suite=default_suite_loader(), variants=default_variants())
