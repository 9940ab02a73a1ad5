"""The Ray executor of Part A: each model's replicas are Ray actors; the trials stay here.

``executor = "ray"`` changes where models run, nothing else. The replicas, their placement
and their replacement are :mod:`slmbench.models.ray`'s (shared with Part B); this module
sets them up for an :class:`~slmbench.agents.runner.config.Experiment`. The driver runs the
same trials as the local executor (``_Run.run_one``: the evaluator's ``run_trial`` with
retries and the response cache) in ``replicas × concurrency`` threads per model, each thread
bound to one actor, so a trial's calls go to one replica and trials finish in parallel. The
driver is the only writer of the run store: every trial is stored by ``RunStore.put`` as it
finishes, so the progress bar, resume and the trial keys are those of the local executor.

An actor that dies (node lost, OOM, ``ray.kill``) or does not answer a call within its
``timeout_s`` fails that call with a transient ``BackendError``; the slot gets a fresh actor
and the call is retried there by the trial's ``RetryingModel`` (``[retry]``). The trial
itself stays in the driver, so it is neither lost nor run twice; once the retry policy's
attempts are spent, it is stored as ``backend_error`` naming the cause. See
docs/scale-out.md.
"""

from __future__ import annotations

from slmbench.agents.runner.config import Experiment
from slmbench.models.ray import ModelLoader, RayCluster


def experiment_cluster(exp: Experiment, *, loader: ModelLoader, check: bool = True,
                       wait_ready_s: float | None = None) -> RayCluster:
    """The Ray cluster of ``exp``'s models: its ``ray_address`` and ``ray_models``, each
    replica serving ``exp.workers(spec)`` trials, the readiness check (with the native-tools
    check under the native scaffold) run in each actor, and a replica that dies while
    starting replaced up to ``[retry] attempts`` times."""
    return RayCluster(exp.ray_address, exp.ray_models, loader=loader, concurrency=exp.workers,
                      check=check, native_tools=exp.scaffold == "native",
                      wait_ready_s=wait_ready_s, attempts=exp.retry.attempts)
