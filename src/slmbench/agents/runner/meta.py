"""A run directory's metadata: the experiment it was started with, the harness fingerprint its
trials were made by (old and new never mix), and the saved configuration and plan counts merged
when a run starts or resumes."""

from __future__ import annotations

from pathlib import Path

from slmbench.agents.runner.config import GRID_FIELDS, Experiment
from slmbench.agents.runner.plan import SEED_SCHEME, Plan
from slmbench.agents.store import DB_NAME, RunStore
from slmbench.agents.world.generate import GENERATOR_VERSION
from slmbench.core.errors import ConfigError


def saved_experiment(run_dir: Path) -> Experiment:
    """The experiment a run directory was started with (what ``slmbench resume`` finishes)."""
    if not (run_dir / DB_NAME).is_file():
        raise ConfigError(f"{run_dir} is not a run directory (no {DB_NAME})",
                          "give the --out directory of an earlier `slmbench run`")
    with RunStore(run_dir) as store:
        saved = store.get_meta("experiment")
    if saved is None:
        raise ConfigError(f"{run_dir} holds no saved experiment",
                          "start it again with `slmbench run ... --out DIR`")
    return Experiment.model_validate(saved)


def harness_of(exp: Experiment, plan: Plan) -> str:
    """The run's harness fingerprint (:func:`slmbench.agents.harness.fingerprint`)."""
    from slmbench.agents.harness import fingerprint

    return fingerprint(plan.tasks.values(), toolset=exp.toolset, prompts=exp.prompts,
                       scaffold=exp.scaffold, levels=[str(n) for n in exp.levels])


def check_harness(store: RunStore, harness: str) -> None:
    """Stop when the store holds trials of another harness: old and new never mix."""
    saved = store.get_meta("harness_fingerprint")
    if saved == harness or (saved is None and store.count() == 0):
        return
    made_by = f"harness {saved}" if saved else "a harness from before fingerprints"
    raise ConfigError(
        f"{store.run_dir} holds trials made by {made_by}, not {harness} (prompts, parser, "
        "tools, tasks or toolset changed)",
        "use a new --out for a new run; trials of different harnesses must not mix",
    )


def merge_meta(store: RunStore, exp: Experiment, plan: Plan) -> dict[str, int]:
    """Check the run dir holds this experiment (or nothing); save config and plan counts."""
    harness = harness_of(exp, plan)
    check_harness(store, harness)
    saved = store.get_meta("experiment")
    if saved is not None and store.get_meta("grid_fingerprint") != exp.grid_fingerprint():
        old = Experiment.model_validate(saved)
        diff = next((f for f in GRID_FIELDS if getattr(old, f) != getattr(exp, f)), None)
        what = (f"{diff}={getattr(old, diff)!r}, not {getattr(exp, diff)!r}" if diff
                else f"grid {store.get_meta('grid_fingerprint')}, not {exp.grid_fingerprint()}")
        raise ConfigError(
            f"{store.run_dir} holds a run with {what}",
            f"use another --out for a new run, or `slmbench resume {store.run_dir}` to finish it",
        )
    models = list(dict.fromkeys([*(saved or {}).get("models", []), *exp.models]))
    store.set_meta("experiment", {**exp.model_dump(mode="json"), "models": models})
    store.set_meta("grid_fingerprint", exp.grid_fingerprint())
    store.set_meta("seed_scheme", SEED_SCHEME)
    store.set_meta("harness_fingerprint", harness)
    store.set_meta("generator", GENERATOR_VERSION)  # the binders that drew its instances
    planned = dict(store.get_meta("planned", {}) or {})
    planned.update({m: len(plan.for_model(m)) for m in exp.models})
    store.set_meta("planned", planned)
    return planned
