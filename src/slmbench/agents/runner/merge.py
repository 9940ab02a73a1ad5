"""Trials written into a run store by a merge or an import (another machine's, a committed
export), not by :func:`~slmbench.agents.runner.executor.execute`: one harness per task, and the
store's harness fingerprint set as the executor would (so a run resumes it) only when every
trial was made by this checkout's harness."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path

from slmbench.agents.harness import fingerprint
from slmbench.agents.records import Trial
from slmbench.agents.runner.config import Experiment
from slmbench.agents.runner.meta import harness_of
from slmbench.agents.runner.plan import plan_of
from slmbench.agents.store import DB_NAME, RunStore, carried
from slmbench.core.errors import ConfigError


def check_one_harness(run_dir: Path, trials: Sequence[Trial], source: str) -> None:
    """ConfigError when writing ``trials`` into the store of ``run_dir`` would put trials of
    one task made by two harnesses (their per-task fingerprints, ``Trial.harness``) side by
    side: trials of different harnesses never mix in a store."""
    made: dict[str, set[str | None]] = {}
    for t in trials:
        made.setdefault(t.task_id, set()).add(t.harness)
    if (run_dir / DB_NAME).is_file():
        with RunStore(run_dir) as store:
            for stored in store.trials():
                made.setdefault(stored.key.task, set()).add(stored.record.get("harness"))
    for task, found in sorted(made.items()):
        if len(found) > 1:
            shown = ", ".join(sorted(str(h) for h in found))
            raise ConfigError(f"{source} and {run_dir} hold trials of {task} made by several "
                              f"harnesses ({shown}); trials of different harnesses must not mix",
                              "merge only stores made by the same slmbench harness (prompts, "
                              "parser, tools, tasks), or keep them apart under another --out")


def merge_trials(exp: Experiment, run_dir: Path, sources: Sequence[tuple[Path, Sequence[Trial]]],
                 *, dry_run: bool = False) -> int:
    """Merge the trials of ``sources`` (per folder) into the run store of ``exp`` at ``run_dir``
    (:meth:`~slmbench.agents.store.RunStore.merge`: new keys only, a key stored with other
    content refused) unless they would put trials of one task made by two harnesses side by side
    (:func:`check_one_harness`); how many were new (``dry_run``: would be; nothing written).

    When every trial the store then holds was made by this checkout's harness (each trial's
    per-task fingerprint is the one its task has here), the store records the experiment's
    harness fingerprint (:func:`~slmbench.agents.runner.executor.harness_of`), so a run
    resumes it; otherwise ``merged-<digest of the trials' fingerprints>``, which a run refuses
    to add to (a page is still made from it)."""
    rows = [(folder, carried(trials)) for folder, trials in sources]
    found = RunStore.merge(run_dir, rows, dry_run=True)
    check_one_harness(run_dir, [t for _, trials in sources for t in trials],
                      " and ".join(str(folder) for folder, _ in sources))
    if dry_run or not found:
        return found
    new = RunStore.merge(run_dir, rows)
    plan = plan_of(exp)
    here = {tid: fingerprint([task], toolset=exp.toolset, prompts=exp.prompts,
                             scaffold=exp.scaffold) for tid, task in plan.tasks.items()}
    with RunStore(run_dir) as store:
        if store.get_meta("harness_fingerprint") is None:
            made = {t.key.task: t.record.get("harness") for t in store.trials()}
            digest = hashlib.sha256(json.dumps(sorted(made.items())).encode()).hexdigest()[:8]
            store.set_meta("harness_fingerprint", harness_of(exp, plan) if all(
                h == here.get(task) for task, h in made.items()) else f"merged-{digest}")
    return new
