"""Run the planned trials that the run store does not hold yet.

Why a kill at any moment loses no finished trial and stores none twice:
each trial is written by one ``RunStore.put`` — a single autocommitted
SQLite INSERT (WAL, ``synchronous=FULL``) keyed by the trial's
:class:`~slmbench.agents.records.TrialKey`, done right after the trial ends. SQLite
commits a row atomically: after a SIGKILL a trial is either wholly stored or
absent. A resumed run plans the same grid (seeds are a pure function of the
trial's identity), subtracts the stored keys and runs only the rest; if two
processes ever race on one trial, ``INSERT ... ON CONFLICT DO NOTHING`` keeps
the first row. A trial killed mid-way is simply run again; its model calls
are then mostly answered from the response cache.

Server models (``openai:``, ``ollama:``, ``llamaserver:``) each get a thread pool of their
``concurrency``, and the models of one server take turns: ``server_parallel_models`` (default
1) of them run at once, so nine Ollama tags on one GPU are not loaded and evicted in turn.
In-process models (``llamacpp:``, ``hf:``, ``scripted:``) run one at a time, one trial at a
time, in a single lane (one loaded model in memory), with ``llamaserver:`` models (started
here: ``computes_here``), so two models never contend for this machine's cores; the lanes of
servers at an address (``openai:``, ``ollama:``) run beside it. With ``executor = "ray"``
(``ray_cluster.py`` over ``models/ray.py``) each model's replicas are Ray actors and every
model is its own lane of ``replicas × concurrency`` threads; the trials and the store stay here.

Before anything is written, each model is checked (``check_ready``: a server answers and
has the model), so a run against an absent server stops with one line and leaves no run
folder. A model whose last ``STOP_AFTER`` finished trials all ended ``backend_error`` with
the same cause (after the retries) is stopped with that cause; the other models go on. A
configuration fault (:class:`~slmbench.models.faults.ConfigurationFault`: the server has no
such model, the model does not support tools, it does not fit in memory) stops its model at
once with one line, and the trial it interrupted is not stored: a resume runs it once the
cause is fixed.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from concurrent.futures import FIRST_EXCEPTION, Future, ThreadPoolExecutor, wait
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from slmbench.agents.records import Outcome, Trial
from slmbench.agents.runner.cache import CachingModel
from slmbench.agents.runner.config import Experiment
from slmbench.agents.runner.meta import merge_meta
from slmbench.agents.runner.model_reports import RunnerStats, write_reports
from slmbench.agents.runner.plan import Plan, PlannedTrial, SuiteLoader, VariantsFn
from slmbench.agents.runner.preflight import preflight
from slmbench.agents.runner.progress import PlainProgress, RunProgress
from slmbench.agents.runner.retry import RetryingModel
from slmbench.agents.store import RunStore
from slmbench.core.errors import BackendError, SlmbenchError
from slmbench.models.base import Model
from slmbench.models.factory import load_model
from slmbench.models.faults import ConfigurationFault
from slmbench.models.spec import computes_here

TrialFn = Callable[..., Trial]
# Runner counters (retries, cache hits, throughput) are saved at most this often and at the
# end of each model's lane: a kill can lose the last second of counts, never a trial.
STATS_FLUSH_S = 1.0
ModelLoader = Callable[[str], Model]
STOP_AFTER = 5  # finished trials in a row with the same backend error stop that model


class RunInterrupted(SlmbenchError):
    """The user stopped the run; finished trials are stored."""


class ModelSummary(BaseModel):
    model_config = ConfigDict(frozen=True)

    model: str
    planned: int
    stored: int
    run_now: int  # trials this session ran
    successes: int  # among stored trials
    backend_errors: int  # among stored trials
    retries: int  # all sessions
    cache_hits: int  # all sessions
    trials_per_min: float
    tokens_per_s: float
    stopped: str | None = None  # why the run stopped this model early (a repeated backend error)


class RunSummary(BaseModel):
    model_config = ConfigDict(frozen=True)

    run_dir: str
    planned: int
    stored: int
    run_now: int
    complete: bool
    wall_s: float
    models: list[ModelSummary]
    reports: dict[str, str]


def _default_trial_fn() -> TrialFn:
    from slmbench.agents.evaluator import run_trial

    return run_trial


def _backend_error_trial(p: PlannedTrial, scaffold: str, exc: BackendError,
                         wall_s: float) -> Trial:
    k = p.key
    return Trial(model=k.model, task_id=k.task, suite=p.suite, variant=k.variant,
                 scaffold=scaffold, temperature=k.temperature, seed=k.seed, repeat=k.repeat,
                 instance=k.instance, level=k.level, outcome=Outcome.BACKEND_ERROR,
                 fault_plan=p.fault_plan, wall_s=wall_s, error=str(exc))


def _check_identity(trial: Trial, p: PlannedTrial) -> None:
    k = p.key
    got = (trial.task_id, trial.variant, round(trial.temperature, 4), trial.seed, trial.repeat,
           trial.instance, trial.level)
    want = (k.task, k.variant, k.temperature, k.seed, k.repeat, k.instance, k.level)
    if got != want:
        raise RuntimeError(f"the trial function returned trial {got} for planned trial {want}")


class _Run:
    def __init__(self, exp: Experiment, store: RunStore, plan: Plan, *, trial_fn: TrialFn,
                 model_loader: ModelLoader, progress: RunProgress,
                 sleep: Callable[[float], None], workers: Callable[[str], int] | None = None,
                 one_lane: Callable[[str], bool] | None = None) -> None:
        self.exp, self.store, self.plan = exp, store, plan
        # trials of a model in flight at once; whether it shares the one in-process lane
        self.workers = workers or exp.workers
        self.one_lane = one_lane or computes_here
        self.trial_fn, self.model_loader, self.progress = trial_fn, model_loader, progress
        self.sleep = sleep
        self.stop = threading.Event()
        self.lock = threading.RLock()
        prior = store.get_meta("runner_stats", {}) or {}
        self.stats: dict[str, RunnerStats] = {
            m: RunnerStats.model_validate(prior.get(m, {})) for m in exp.models}
        self.run_now: dict[str, int] = dict.fromkeys(exp.models, 0)
        self.streak: dict[str, tuple[str | None, int]] = dict.fromkeys(exp.models, (None, 0))
        self.stopped: dict[str, str] = {}
        self._flushed_at = 0.0
        stored = store.keys()
        self.pending = {m: [p for p in plan.for_model(m) if p.key not in stored]
                        for m in exp.models}
        self.judge_kw: dict[str, Any] = {}
        if exp.refusal_judge:
            from slmbench.agents.scoring import ModelJudge

            self.judge_kw = {"refusal_judge": ModelJudge(model_loader(exp.refusal_judge))}

    # -- one trial ---------------------------------------------------------------
    def run_one(self, model: Model, p: PlannedTrial, lane_start: float,
                wall_before: float) -> None:
        retrying = RetryingModel(model, self.exp.retry, seed=p.key.seed, sleep=self.sleep)
        wrapped = CachingModel(retrying, self.store, policy=self.exp.cache)
        start = time.perf_counter()
        try:
            trial = self.trial_fn(
                wrapped, self.plan.task_of(p.key), temperature=p.key.temperature, seed=p.key.seed,
                repeat=p.key.repeat, instance=p.key.instance, level=p.key.level,
                family=self.plan.tasks[p.key.task], variant=p.key.variant,
                fault_plan=p.fault_plan,
                scaffold=self.exp.scaffold, max_steps=self.exp.max_steps,
                toolset=self.exp.toolset, prompts=self.exp.prompts, **self.judge_kw,
            )
        except ConfigurationFault as exc:  # the model cannot run as configured: stop it
            self.stop_model(p.key.model, f"{exc} ({exc.hint})" if exc.hint else str(exc))
            return
        except BackendError as exc:  # the evaluator should catch these; never lose the trial
            trial = _backend_error_trial(p, self.exp.scaffold, exc, time.perf_counter() - start)
        _check_identity(trial, p)
        self.store.put(p.key, trial.outcome.value, trial)
        with self.lock:
            s = self.stats[p.key.model]
            self.stats[p.key.model] = s.model_copy(update={
                "trials_run": s.trials_run + 1,
                "retries": s.retries + retrying.retries,
                "backend_errors": s.backend_errors + (trial.outcome == Outcome.BACKEND_ERROR),
                "cache_hits": s.cache_hits + wrapped.hits,
                "model_calls": s.model_calls + retrying.calls,
                "completion_tokens": s.completion_tokens + retrying.completion_tokens,
            })
            self.run_now[p.key.model] += 1
            self._track_errors(p.key.model, trial)
            self._refresh_rates(p.key.model, wall_before + time.perf_counter() - lane_start)
            if time.monotonic() - self._flushed_at >= STATS_FLUSH_S:
                self.flush_stats()
        self.progress.advance(p.key, trial.outcome.value)

    def _track_errors(self, model: str, trial: Trial) -> None:
        """Stop ``model`` once ``STOP_AFTER`` finished trials in a row failed the same way."""
        cause = trial.error if trial.outcome == Outcome.BACKEND_ERROR else None
        last, n = self.streak[model]
        n = n + 1 if cause is not None and cause == last else int(cause is not None)
        self.streak[model] = (cause, n)
        if cause is not None and n >= STOP_AFTER and model not in self.stopped:
            self.stopped[model] = cause
            self.progress.note(f"stopped {model}: its last {n} trials all ended with: {cause}")

    def stop_model(self, model: str, cause: str) -> None:
        """Start no more trials of ``model``; say why in one line (once)."""
        with self.lock:
            if model in self.stopped:
                return
            self.stopped[model] = cause
        self.progress.note(f"stopped {model}: {cause}")

    def halted(self, model: str) -> bool:
        """Whether no more trials of ``model`` are to start."""
        return self.stop.is_set() or model in self.stopped

    def flush_stats(self) -> None:
        """Save the runner counters in the store's metadata (one fsync'd write)."""
        with self.lock:
            self.store.set_meta("runner_stats", {m: s.model_dump() for m, s in self.stats.items()})
            self._flushed_at = time.monotonic()

    def _refresh_rates(self, model: str, wall_s: float) -> None:
        s = self.stats[model]
        self.stats[model] = s.model_copy(update={
            "wall_s": wall_s,
            "trials_per_min": 60.0 * s.trials_run / wall_s if wall_s > 0 else 0.0,
            "tokens_per_s": s.completion_tokens / wall_s if wall_s > 0 else 0.0,
        })

    # -- lanes ---------------------------------------------------------------------
    def run_model(self, spec: str) -> None:
        todo = self.pending[spec]
        if not todo or self.stop.is_set():
            return
        model = self.model_loader(spec)
        try:
            lane_start, wall_before = time.perf_counter(), self.stats[spec].wall_s
            workers = self.workers(spec)
            if workers == 1:
                for p in todo:
                    if self.halted(spec):
                        break
                    self.run_one(model, p, lane_start, wall_before)
                return
            with ThreadPoolExecutor(max_workers=workers,
                                    thread_name_prefix=f"trials-{spec[:20]}") as pool:
                futures = [pool.submit(self._guarded, model, p, lane_start, wall_before)
                           for p in todo]
                done, _ = wait(futures, return_when=FIRST_EXCEPTION)
                for f in futures:
                    if f in done and f.exception() is not None:
                        self.stop.set()
                        raise f.exception()  # type: ignore[misc]
        finally:
            model.close()
            self.flush_stats()

    def _guarded(self, model: Model, p: PlannedTrial, lane_start: float,
                 wall_before: float) -> None:
        if not self.halted(p.key.model):
            self.run_one(model, p, lane_start, wall_before)

    def run_in_process(self, specs: list[str]) -> None:
        for spec in specs:
            if self.stop.is_set():
                return
            self.run_model(spec)

    def run(self) -> None:
        in_process = [m for m in self.exp.models if self.one_lane(m)]
        servers = [m for m in self.exp.models if m not in in_process]
        slots = {self.exp.server_of(m): threading.Semaphore(self.exp.server_parallel_models)
                 for m in servers}

        def server_lane(spec: str) -> None:  # the server's models take turns
            with slots[self.exp.server_of(spec)]:
                self.run_model(spec)

        with ThreadPoolExecutor(max_workers=1 + len(servers), thread_name_prefix="lane") as lanes:
            futures: list[Future[None]] = [lanes.submit(self.run_in_process, in_process)]
            futures += [lanes.submit(server_lane, m) for m in servers]
            try:
                while not all(f.done() for f in futures):
                    done, _ = wait(futures, timeout=0.5, return_when=FIRST_EXCEPTION)
                    if any(f.exception() is not None for f in done):
                        self.stop.set()
            except KeyboardInterrupt:
                self.stop.set()
                self.progress.note("interrupted: finishing the trials under way, then stopping")
                wait(futures)
                raise RunInterrupted(
                    f"run stopped by the user; finished trials are in {self.store.run_dir}",
                    f"resume with `slmbench resume {self.store.run_dir}`",
                ) from None
            for f in futures:
                if f.exception() is not None:
                    raise f.exception()  # type: ignore[misc]


def execute(
    exp: Experiment,
    *,
    run_dir: str | Path | None = None,
    trial_fn: TrialFn | None = None,
    load_suite: SuiteLoader | None = None,
    variants: VariantsFn | None = None,
    model_loader: ModelLoader = load_model,
    progress: RunProgress | None = None,
    sleep: Callable[[float], None] = time.sleep,
    check_servers: bool = True,
    wait_ready_s: float | None = None,
    retry_errors: bool = False,
) -> RunSummary:
    """Run every planned trial not yet stored in ``run_dir``; write reports; summarise.

    First :func:`preflight` (``check_servers`` False skips its model checks; a server that
    refuses connections is waited for up to ``wait_ready_s``): whatever would stop the run
    before its first trial raises before ``run_dir`` exists.
    ``retry_errors``: the stored ``backend_error`` trials of ``exp``'s models are run again
    (after the preflight passed). ``trial_fn``, ``load_suite`` and ``variants`` default to
    ``slmbench.agents.evaluator.run_trial``, ``slmbench.agents.tasks.load_suite`` and the
    variants of ``slmbench.agents.tasks.perturb``; tests inject their own.

    With ``exp.executor == "ray"`` each model runs on Ray actors (``ray_cluster``, over
    ``slmbench.models.ray.RayCluster``: ``model_loader`` and the readiness check, with the
    native-tools check under the native scaffold, run inside each actor when its model's trials
    start; a cluster that can never hold a model's replicas is refused before ``run_dir``
    exists); the trials, the store and everything else stay here.
    """
    started = time.perf_counter()
    run_dir = Path(run_dir) if run_dir is not None else exp.out_dir()
    progress = progress or PlainProgress()
    # an injected ``model_loader`` decides what its specs mean, so the backends' checks do not
    plan = preflight(exp, load_suite=load_suite, variants=variants,
                     check_servers=check_servers and model_loader is load_model,
                     wait_ready_s=wait_ready_s, on_wait=progress.note)
    cluster = None
    try:
        if exp.executor == "ray":
            from slmbench.agents.runner.ray_cluster import experiment_cluster

            cluster = experiment_cluster(exp, loader=model_loader, check=check_servers,
                                         wait_ready_s=wait_ready_s)
            cluster.check(exp.models)
        return _execute(exp, run_dir, plan, started=started, cluster=cluster,
                        trial_fn=trial_fn or _default_trial_fn(), model_loader=model_loader,
                        progress=progress, sleep=sleep, retry_errors=retry_errors)
    finally:
        if cluster is not None:
            cluster.close()


def _execute(exp: Experiment, run_dir: Path, plan: Plan, *, started: float, cluster: Any,
             trial_fn: TrialFn, model_loader: ModelLoader, progress: RunProgress,
             sleep: Callable[[float], None], retry_errors: bool = False) -> RunSummary:
    with RunStore(run_dir) as store:
        planned = merge_meta(store, exp, plan)
        if retry_errors and (n := store.forget(Outcome.BACKEND_ERROR.value, exp.models)):
            progress.note(f"running again {n} stored backend_error trial(s)")
        placed: dict[str, Any] = {} if cluster is None else {
            "workers": cluster.workers, "one_lane": lambda m: False}  # every model its own lane
        run = _Run(exp, store, plan, trial_fn=trial_fn, progress=progress, sleep=sleep,
                   model_loader=cluster.model if cluster else model_loader, **placed)
        totals = {m: len(plan.for_model(m)) for m in exp.models}
        stored_outcomes = {m: [t.outcome for t in store.trials(m)] for m in exp.models}
        progress.start(totals, {m: totals[m] - len(run.pending[m]) for m in exp.models},
                       {m: sum(o == "success" for o in stored_outcomes[m]) for m in exp.models})
        session = {"started_at": datetime.now(UTC).isoformat(timespec="seconds")}
        try:
            run.run()
        finally:
            run.flush_stats()
            progress.stop()
            stats = {m: RunnerStats.model_validate(v)
                     for m, v in (store.get_meta("runner_stats", {}) or {}).items()}
            reports = write_reports(store, planned=planned, runner=stats, experiment=exp.name,
                                    fingerprint=exp.grid_fingerprint(), tasks=plan.tasks)
            sessions = store.get_meta("sessions", []) or []
            sessions.append({**session, "ended_at": datetime.now(UTC).isoformat(timespec="seconds"),
                             "trials_run": sum(run.run_now.values())})
            store.set_meta("sessions", sessions)
        models = []
        for m in exp.models:
            outcomes = [t.outcome for t in store.trials(m)]
            s = stats.get(m, RunnerStats())
            models.append(ModelSummary(
                model=m, planned=totals[m], stored=len(outcomes), run_now=run.run_now[m],
                successes=sum(o == "success" for o in outcomes),
                backend_errors=sum(o == "backend_error" for o in outcomes),
                retries=s.retries, cache_hits=s.cache_hits, trials_per_min=s.trials_per_min,
                tokens_per_s=s.tokens_per_s, stopped=run.stopped.get(m),
            ))
        return RunSummary(
            run_dir=str(run_dir), planned=sum(totals.values()),
            stored=sum(x.stored for x in models), run_now=sum(run.run_now.values()),
            complete=all(x.stored >= x.planned for x in models),
            wall_s=time.perf_counter() - started, models=models,
            reports={m: str(p) for m, p in reports.items()},
        )
