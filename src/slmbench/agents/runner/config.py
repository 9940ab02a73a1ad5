"""An experiment: what ``slmbench run`` runs, from a TOML file and/or flags.

.. code-block:: toml

    name = "sweep"
    models = ["llamacpp:qwen2.5-coder-0.5b", "openai:qwen2.5-7b@http://127.0.0.1:8080/v1"]
    suites = ["capability", "reliability"]   # or task ids: tasks = ["IR-1", "SC-2"]
    temperatures = [0.3, 0.7, 1.0]
    repeats = 3
    instances = 1            # each task in the worlds 0..N-1 (0: the curated task; docs/tasks.md)
    include_curated = true   # false: the drawn worlds 1..N only (`--drawn-only`)
    levels = [1, 2, 3]       # ladder levels beside each family's base (docs/tasks.md, "Levels")
    out = "runs/sweep"
    toolset = "task"         # "all": every task offers the ten tools (the seed's setting)
    skip_code_tasks = false  # true: leave out tasks needing code_interpreter (no bubblewrap)

    [concurrency]            # parallel trials per server model (openai:, ollama:, llamaserver:)
    "openai:qwen2.5-7b@http://127.0.0.1:8080/v1" = 4

    server_parallel_models = 1   # server models run at once per server (default 1)

    [retry]                  # transient backend faults (docs/servers.md)
    attempts = 30
    window_s = 120

    executor = "ray"         # run the models on Ray actors (docs/scale-out.md); default "local"
    ray_address = "ray://head:10001"   # default: a local Ray instance, or RAY_ADDRESS

    [ray_models."llamacpp:qwen2.5-coder-0.5b"]   # optional, per model
    replicas = 2             # actors holding the model (default 1)
    num_cpus = 2             # default from the registry's size; num_gpus default 0
    timeout_s = 600          # a call not answered by then replaces its replica (the default)

Flags given on the command line override the file's values.
"""

from __future__ import annotations

import difflib
import hashlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from slmbench.agents.runner.cache import CachePolicy
from slmbench.agents.runner.model_reports import model_slug
from slmbench.agents.runner.retry import RetryPolicy
from slmbench.core.errors import ConfigError, ModelSpecError
from slmbench.core.tomlfile import first_error, load_toml
from slmbench.models.llamaserver import default_in_flight
from slmbench.models.placement import RayModelOptions
from slmbench.models.spec import SERVER_BACKENDS, parse_spec

# The fields that decide which trials a run holds (per model) and how they run.
_HINT = "see `slmbench run --help`; the experiment file format is in docs/report-schema.md"
_TOML_HINT = "fix the place shown; strings need quotes, lists use [a, b]"
GRID_FIELDS = ("suites", "tasks", "variants", "temperatures", "repeats", "seed", "scaffold",
               "max_steps", "toolset", "skip_code_tasks", "prompts", "instances",
               "include_curated", "levels")
# grid fields added later, hashed only away from their default: a grid that does not use them
# keeps the fingerprint (and the default run folder) it had before they existed
_LATER_GRID_DEFAULTS: dict[str, Any] = {"instances": 1, "include_curated": True, "levels": []}


DEFAULT_TASK_SUITES = ("capability", "reliability")  # what a run without suites or ids runs

class Experiment(BaseModel):
    """The full description of a run; saved in the run store so ``resume`` can redo it."""

    model_config = ConfigDict(extra="forbid")

    name: str | None = None
    models: list[str] = Field(min_length=1, description="model spec strings")
    suites: list[str] = Field(default_factory=list, description="suite names or YAML files")
    tasks: list[str] = Field(default_factory=list, description="task ids (filter suites)")
    variants: list[str] | None = Field(
        default=None, description="variant names to keep; None keeps every variant a task has")
    temperatures: list[float] = Field(default_factory=lambda: [0.3, 0.7, 1.0], min_length=1)
    repeats: int = Field(default=3, ge=1, le=1000)
    instances: int = Field(
        default=1, ge=1, le=1000,
        description="instances of each task: the worlds 0..N-1 (seed 0: the curated task)")
    include_curated: bool = Field(
        default=True, description="false: the drawn worlds 1..N only, the curated seed 0 left out")
    levels: list[int] = Field(
        default_factory=list,
        description="the difficulty ladder's levels each capability family also runs at, beside "
                    "its base instance (which always runs; a level that is a family's base is "
                    "its base trial); empty: the base instances only")
    seed: int = Field(default=0, ge=0, description="base seed mixed into every trial's seed")
    scaffold: Literal["react", "native"] = "react"
    max_steps: int = Field(default=12, ge=1, le=200)
    toolset: Literal["task", "all"] = Field(
        default="task", description="task: the tools each task lists; all: the ten tools")
    skip_code_tasks: bool = Field(
        default=False, description="leave out the tasks that need code_interpreter")
    # Measurement only (docs/results/harness-validity.md): "legacy" reruns the pre-#15
    # ReAct wording. Not a CLI flag: it is not a knob for steering a model.
    prompts: Literal["neutral", "legacy"] = "neutral"
    refusal_judge: str | None = Field(
        default=None, description="model spec that labels refusals instead of the rules")
    concurrency: dict[str, int] = Field(
        default_factory=dict, description="parallel trials per server model spec")
    default_concurrency: int | None = Field(
        default=None, ge=1, le=64,
        description="trials in flight per server model; None: a llamaserver's slots, else 4")
    deterministic: bool = Field(
        default=False, description="one request at a time per model: no batching across trials")
    server_parallel_models: int = Field(
        default=1, ge=1, le=64,
        description="server models run at once per server (one: no loading and evicting)")
    cache: CachePolicy = "auto"
    retry: RetryPolicy = Field(default_factory=RetryPolicy)
    out: Path | None = None
    # Where the models run (not a grid field: a run started locally may be resumed on Ray).
    executor: Literal["local", "ray"] = Field(
        default="local", description="local: this process; ray: one Ray actor per replica")
    ray_address: str | None = Field(
        default=None, description="Ray cluster address; None: RAY_ADDRESS, else a local Ray")
    ray_models: dict[str, RayModelOptions] = Field(
        default_factory=dict, description="replicas and resources per model spec (executor ray)")

    @field_validator("models")
    @classmethod
    def _specs_parse(cls, models: list[str]) -> list[str]:
        for i, spec in enumerate(models):
            try:
                parse_spec(spec)
            except ModelSpecError as exc:  # as a field error: the file and field get named
                raise ValueError(f"entry {i}: {exc}" + (f" ({exc.hint})" if exc.hint else "")
                                 ) from exc
        return list(dict.fromkeys(models))

    @field_validator("temperatures")
    @classmethod
    def _temperatures_in_range(cls, temps: list[float]) -> list[float]:
        for t in temps:
            if not 0.0 <= t <= 2.0:
                raise ValueError(f"temperature {t} is outside [0, 2]")
        return list(dict.fromkeys(round(float(t), 4) for t in temps))

    @field_validator("levels", mode="before")
    @classmethod
    def _levels_parse(cls, levels: Any) -> list[int]:
        from slmbench.agents.tasks.families.levels import parse_levels

        if levels is None or levels == [] or levels == "":
            return []
        try:
            return parse_levels(levels)
        except ConfigError as exc:
            raise ValueError(f"{exc} ({exc.hint})") from exc

    @field_validator("concurrency")
    @classmethod
    def _concurrency_positive(cls, conc: dict[str, int]) -> dict[str, int]:
        for spec, n in conc.items():
            if n < 1:
                raise ValueError(f"concurrency of {spec!r} must be at least 1, not {n}")
        return conc

    @model_validator(mode="after")
    def _something_to_run(self) -> Experiment:
        if not self.suites and not self.tasks:
            raise ValueError("name at least one suite or task id")
        for table in ("concurrency", "ray_models"):
            unknown = sorted(set(getattr(self, table)) - set(self.models))
            if unknown:
                raise ValueError(
                    f"{table} names a model the experiment does not run: {unknown[0]}")
        return self

    def workers(self, spec: str) -> int:
        """Trials of ``spec`` that may run at once: 1 for in-process models, or if deterministic."""
        if self.deterministic or parse_spec(spec).backend not in SERVER_BACKENDS:
            return 1
        if spec in self.concurrency:
            return self.concurrency[spec]
        if self.default_concurrency is not None:
            return self.default_concurrency
        return default_in_flight(spec)

    def server_of(self, spec: str) -> str | None:
        """The server a server model runs on (its URL; every ``llamaserver:`` model shares this
        machine), or None for an in-process model. Models of one server share
        ``server_parallel_models`` lanes."""
        parsed = parse_spec(spec)
        if parsed.backend not in SERVER_BACKENDS:
            return None
        if parsed.backend == "llamaserver":
            return "llamaserver"
        url = parsed.target.partition("@")[2]
        return f"{parsed.backend}:{url or 'default'}"

    def instance_seeds(self) -> list[int]:
        """The world seeds each task runs in: ``0..instances-1``, or ``1..instances`` when
        ``include_curated`` is false (drawn worlds only)."""
        first = 0 if self.include_curated else 1
        return list(range(first, first + self.instances))

    def grid_fingerprint(self) -> str:
        """A short hash of the fields that decide each model's trials and how they run (a
        field added later only when it is not at its default)."""
        grid = self.model_dump(mode="json", include=set(GRID_FIELDS))
        for name, default in _LATER_GRID_DEFAULTS.items():
            if grid[name] == default:
                del grid[name]
        blob = json.dumps(grid, sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:12]

    def out_dir(self) -> Path:
        """Where the run lives: ``out``, else ``runs/<name>``, else ``runs/run-<fingerprint>``.

        The default is a pure function of the experiment, so re-running the
        same command finds (and resumes) the same run.
        """
        if self.out is not None:
            return self.out
        return Path("runs") / (self.name or f"run-{self.grid_fingerprint()}")


def build_experiment(data: dict[str, Any], *, source: str = "flags") -> Experiment:
    """Validate a plain dict as an Experiment, turning errors into one clear line. A model
    spec given as a flag (``source`` "flags") that does not parse is the spec's own error and
    hint; one in a file names the file and its field."""
    if source == "flags":
        for spec in data.get("models") or []:
            parse_spec(spec)
    try:
        return Experiment.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(f"{source}: {first_error(exc)}", _HINT) from exc


def overridden(data: dict[str, Any], overrides: dict[str, Any]) -> dict[str, Any]:
    """``data`` with each ``overrides`` value that is not None in place of its own; a table
    (``retry = {"attempts": 2}``) replaces only the keys it gives."""
    out = dict(data)
    for key, value in overrides.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = {**out[key], **value}
        elif value is not None:
            out[key] = value
    return out


def load_experiment(path: str | Path, overrides: dict[str, Any] | None = None) -> Experiment:
    """Read an experiment TOML file; ``overrides`` (flags given) replace its values."""
    path = Path(path)
    data = load_toml(path, what="experiment file", hint=_TOML_HINT)
    exp = build_experiment(overridden(data, overrides or {}), source=str(path))
    _check_task_ids(exp, path)
    return exp


def no_such_task(task_id: str, known: list[str], suites: Sequence[str]) -> ConfigError:
    """The error for a task id none of ``suites`` has (``known``: their ids)."""
    close = difflib.get_close_matches(task_id, known, n=3)
    return ConfigError(f"no task {task_id!r} in suite(s) {', '.join(suites)}",
                       f"did you mean {', '.join(close)}?" if close
                       else "list task ids with `slmbench tasks list`")


def _check_task_ids(exp: Experiment, path: Path) -> None:
    """Every task id the file names is in its suites, else the error names the file and the
    field (``tasks.N``)."""
    if not exp.tasks:
        return
    from slmbench.agents.tasks import load_suite

    suites = exp.suites or DEFAULT_TASK_SUITES
    if "quick" in suites:  # the runner's pick of a few tasks (runner.plan): checked there
        return
    known = [t.id for suite in suites for t in load_suite(suite)]
    for i, task_id in enumerate(exp.tasks):
        if task_id not in known:
            err = no_such_task(task_id, known, suites)
            raise ConfigError(f"{path}: field tasks.{i}: {err}", err.hint)


def parse_temperatures(values: list[str] | None) -> list[float] | None:
    """``--temperature 0.3,0.7 --temperature 1.0`` as numbers; None when not given."""
    out: list[float] = []
    for value, part in ((v, p) for v in values or [] for p in v.split(",")):
        try:
            out.append(float(part))
        except ValueError:
            raise ConfigError(f"--temperature {value!r}: {part.strip()!r} is not a number",
                              "write temperatures like 0.3,0.7,1.0") from None
    return out or None


def experiment_of(path: Path | None, flags: dict[str, Any]) -> Experiment:
    """The experiment ``slmbench run`` runs: the file at ``path`` with the ``flags`` given (not
    None) over its values, else the flags alone, which must name a model."""
    if path is not None:
        return load_experiment(path, flags)
    if not flags.get("models"):
        raise ConfigError("no model to run",
                          "give --model SPEC (repeatable) or an experiment .toml file")
    return build_experiment({k: v for k, v in flags.items() if v is not None})


#: the model ``slmbench demo`` runs when none is given: the embedded Qwen2.5-Coder-0.5B with
#: the context it was trained for (32k tokens; the backend's default is 4096), so that no demo
#: trial ends in ``context_overflow`` for want of a setting. It costs memory (about 0.4 GB of
#: KV cache), not time: attention runs over the tokens a prompt has, not the window.
DEMO_MODEL = "llamacpp:qwen2.5-coder-0.5b?n_ctx=32768"


def demo_dir(model: str) -> Path:
    """``runs/demo-<model slug>``: the same model always resumes the same demo."""
    return Path("runs") / f"demo-{model_slug(model)}"
