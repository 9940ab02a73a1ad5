"""What an analysis reads: a run directory's trials (its store), the shipped suites' tasks,
and the registry's model sizes."""

from __future__ import annotations

from pathlib import Path

from pydantic import ValidationError

from slmbench.agents.records import Trial
from slmbench.agents.store import DB_NAME, RunStore
from slmbench.agents.tasks import Task, load_tasks
from slmbench.core.errors import ConfigError


def load_trials(run_dir: str | Path) -> list[Trial]:
    """Every trial of a run directory, validated; ConfigError if it is not a run."""
    run = Path(run_dir)
    if not (run / DB_NAME).is_file():
        raise ConfigError(f"{run} is not a run directory (no {DB_NAME})",
                          "pass the directory `slmbench run` wrote, e.g. runs/<name>")
    out: list[Trial] = []
    with RunStore(run) as store:
        for row in store.trials():
            try:
                out.append(Trial.model_validate(row.record))
            except ValidationError as exc:
                raise ConfigError(
                    f"{run}: trial {row.key.model}/{row.key.task} is not a valid trial record: "
                    f"{exc.errors()[0]['msg']}",
                    "the run was written by an incompatible slmbench; re-run it") from exc
    return out


def shipped_tasks() -> dict[str, Task]:
    """The shipped suites' tasks by id."""
    return load_tasks()


def registry_params() -> dict[str, float]:
    """Model spec and name → billions of parameters, from the model registry."""
    try:
        from slmbench.models.catalog import load_registry

        reg = load_registry()
    except (ImportError, ConfigError):
        return {}
    out: dict[str, float] = {}
    for entry in reg.models:
        out[entry.name] = entry.params
        out[entry.spec] = entry.params
    return out
