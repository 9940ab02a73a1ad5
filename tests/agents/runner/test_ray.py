"""The Ray executor on a local Ray cluster (``ray.init(num_cpus=2)``, one per module) with
scripted models: the planned keys exactly, the local executor's records, actors killed
mid-run and a driver SIGKILLed and resumed (issue #20)."""

# ruff: noqa: E402  (imports that need an extra come after its importorskip)
from __future__ import annotations

import contextlib
import random
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from extras import need

ray = need("ray", "ray")

from rich.console import Console
from runner_fakes import fake_load_suite, fake_trial, fake_variants
from test_kill_resume import assert_exactly

from killsoak import run_until_killed, slmbench, stored
from slmbench.agents.records import Outcome, Trial
from slmbench.agents.runner.config import build_experiment
from slmbench.agents.runner.executor import RunSummary, execute
from slmbench.agents.runner.meta import saved_experiment
from slmbench.agents.runner.plan import build_plan, plan_of
from slmbench.agents.runner.progress import PlainProgress
from slmbench.agents.store import RunStore
from slmbench.core.errors import ConfigError, ModelNotFoundError
from slmbench.models.base import Model
from slmbench.models.factory import load_model
from slmbench.models.placement import RayModelOptions, resources_of
from slmbench.models.ray import NAMESPACE

pytestmark = pytest.mark.slow

MODEL = "scripted:echo?delay=0.02"
# The real evaluator over the quick suite (no code task: no sandbox needed), greedy and sampled.
GRID = {"models": [MODEL], "suites": ["quick"], "temperatures": [0.0, 0.7], "repeats": 1,
        "skip_code_tasks": True}
TIMING = {"wall_s", "latency_s"}


@pytest.fixture(scope="module")
def cluster() -> Iterator[str]:
    """A local Ray instance for the whole module; its address, for driver processes."""
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, namespace=NAMESPACE)
    yield ray.get_runtime_context().gcs_address
    ray.shutdown()


def quiet() -> PlainProgress:
    return PlainProgress(console=Console(quiet=True))


def records(run_dir: Path) -> dict[Any, dict[str, Any]]:
    """Every stored trial by key, timing fields left out (the rest must match exactly)."""
    with RunStore(run_dir) as store:
        out = {}
        for row in store.trials():
            d = Trial.model_validate(row.record).model_dump(mode="json", exclude=TIMING)
            d["steps"] = [{k: v for k, v in s.items() if k not in TIMING} for s in d["steps"]]
            out[row.key] = d
        return out


def ray_grid(**over: Any) -> dict[str, Any]:
    return {**GRID, "executor": "ray", "ray_models": {MODEL: {"replicas": 2}}, **over}


@pytest.fixture(scope="module")
def local_records(tmp_path_factory: pytest.TempPathFactory) -> dict[Any, dict[str, Any]]:
    run_dir = tmp_path_factory.mktemp("local") / "run"
    summary = execute(build_experiment(GRID), run_dir=run_dir, progress=quiet())
    assert summary.complete
    return records(run_dir)


def actors_of(spec: str) -> list[Any]:
    names = [a["name"] for a in ray.util.list_named_actors(all_namespaces=True)
             if a["namespace"] == NAMESPACE and a["name"].startswith(f"{spec}#")]
    found = []
    for name in names:
        with contextlib.suppress(ValueError):  # ended between the listing and the lookup
            found.append(ray.get_actor(name, namespace=NAMESPACE))
    return found


def count(run_dir: Path) -> int:
    return stored(run_dir / "run.sqlite", "trials")


def test_a_scripted_grid_completes_with_exactly_the_planned_keys(
        cluster: str, tmp_path: Path) -> None:
    exp = build_experiment({"models": ["scripted:echo", "scripted:silent"], "suites": ["alpha"],
                            "temperatures": [0.3, 0.7], "repeats": 3, "executor": "ray",
                            "ray_models": {"scripted:echo": {"replicas": 2}}})
    summary = execute(exp, run_dir=tmp_path / "run", trial_fn=fake_trial,
                      load_suite=fake_load_suite, variants=fake_variants, progress=quiet())
    planned = build_plan(exp, load_suite=fake_load_suite, variants=fake_variants).keys()
    assert summary.complete and summary.stored == summary.planned == len(planned) == 48
    assert_exactly(tmp_path / "run", planned)
    assert not actors_of("scripted:echo")  # the run ends its replicas


def test_ray_stores_the_records_the_local_executor_stores(
        cluster: str, tmp_path: Path, local_records: dict[Any, dict[str, Any]]) -> None:
    summary = execute(build_experiment(ray_grid()), run_dir=tmp_path / "run", progress=quiet())
    assert summary.complete
    got = records(tmp_path / "run")
    assert got.keys() == local_records.keys() == plan_of(build_experiment(GRID)).keys()
    assert got == local_records


# what a real backend records of itself (llamacpp: its window and the one it was trained for)
SETTINGS = {"backend": "test", "n_ctx": 4096, "n_ctx_train": 32768, "top_k": 40}


def with_settings(spec: str) -> Model:
    model = load_model(spec)
    model.settings = dict(SETTINGS)  # type: ignore[attr-defined]
    return model


def test_a_trial_on_ray_records_its_backends_settings_as_a_local_trial_does(
        cluster: str, tmp_path: Path) -> None:
    # a trial without them has no window: its overflow could not be told ours or the model's
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])  # the loader, to actors
    grid = {"models": [MODEL], "tasks": ["IR-1", "IR-2"], "temperatures": [0.7],
            "repeats": 1}
    for name, over in (("local", {}), ("ray", {"executor": "ray"})):
        summary = execute(build_experiment({**grid, **over}), run_dir=tmp_path / name,
                          model_loader=with_settings, progress=quiet())
        assert summary.complete and summary.stored == 2
        with RunStore(tmp_path / name) as store:
            settings = [Trial.model_validate(row.record).settings for row in store.trials()]
        assert settings == [SETTINGS, SETTINGS], name


def run_in_thread(exp: Any, run_dir: Path) -> tuple[threading.Thread, list[RunSummary]]:
    out: list[RunSummary] = []
    thread = threading.Thread(target=lambda: out.append(
        execute(exp, run_dir=run_dir, progress=quiet())), daemon=True)
    thread.start()
    return thread, out


def test_an_actor_killed_mid_run_loses_no_trial_and_doubles_none(
        cluster: str, tmp_path: Path, local_records: dict[Any, dict[str, Any]]) -> None:
    run_dir = tmp_path / "run"
    thread, out = run_in_thread(build_experiment(ray_grid()), run_dir)
    for _ in range(600):  # bounded: at most ~60 s
        if count(run_dir) >= 3:
            break
        time.sleep(0.1)
    victims = actors_of(MODEL)
    assert len(victims) == 2
    ray.kill(victims[0])  # the replica is busy: a trial's call is in flight on it
    thread.join(timeout=300)
    assert not thread.is_alive() and out[0].complete
    summary = out[0].models[0]
    assert summary.retries >= 1 and summary.backend_errors == 0  # re-sent, and answered
    assert_exactly(run_dir, plan_of(build_experiment(GRID)).keys())
    assert records(run_dir) == local_records


def test_a_replica_that_keeps_dying_stores_backend_error_with_the_cause(
        cluster: str, tmp_path: Path) -> None:
    spec = "scripted:echo?delay=0.5"
    exp = build_experiment({"models": [spec], "suites": ["beta"], "temperatures": [0.3],
                            "repeats": 1, "executor": "ray",
                            "retry": {"attempts": 2, "base_s": 0.0}})
    done = threading.Event()

    def killer() -> None:  # once the replica is up, ends it and every one replacing it
        while not (up := actors_of(spec)) and not done.is_set():
            time.sleep(0.02)
        with contextlib.suppress(ray.exceptions.RayActorError):
            ray.get(up[0].ready.remote())
        while not done.is_set():
            for actor in actors_of(spec):
                ray.kill(actor)
            time.sleep(0.02)

    k = threading.Thread(target=killer, daemon=True)
    k.start()
    try:
        summary = execute(exp, run_dir=tmp_path / "run", trial_fn=fake_trial,
                          load_suite=fake_load_suite, variants=fake_variants, progress=quiet())
    finally:
        done.set()
        k.join()
    assert summary.complete and summary.stored == 2  # stored, not lost, not run twice
    with RunStore(tmp_path / "run") as store:
        trials = [Trial.model_validate(row.record) for row in store.trials()]
    assert [t.outcome for t in trials] == [Outcome.BACKEND_ERROR] * 2
    for t in trials:
        assert t.error is not None and "gave up after 2 attempts" in t.error
        assert "its Ray actor died during a call" in t.error


def test_run_retry_attempts_bounds_the_tries_of_a_call_its_replica_never_answers(
        cluster: str, tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from slmbench.agents.runner.retry import RetryPolicy
    from slmbench.cli.main import app

    spec = "scripted:echo?delay=5"
    experiment = tmp_path / "experiment.toml"
    experiment.write_text(f"""models = ["{spec}"]
tasks = ["IR-1"]
variants = ["base"]
temperatures = [0.3]
repeats = 1
executor = "ray"
out = "{tmp_path / 'run'}"

[retry]
attempts = 5
base_s = 0.0

[ray_models."{spec}"]
timeout_s = 0.5
""", encoding="utf-8")
    done = CliRunner().invoke(app, ["run", str(experiment), "--retry-attempts", "2"])
    assert done.exit_code == 0, done.output
    # the flag replaced the file's attempts and kept the rest of its [retry]
    assert saved_experiment(tmp_path / "run").retry == RetryPolicy(attempts=2, base_s=0.0)
    with RunStore(tmp_path / "run") as store:
        [trial] = [Trial.model_validate(row.record) for row in store.trials()]
    assert trial.outcome == Outcome.BACKEND_ERROR and trial.error is not None
    assert "gave up after 2 attempts" in trial.error
    assert "its Ray actor did not answer a call within 0.5 s and was replaced" in trial.error


def test_a_model_that_cannot_load_stops_the_run_with_its_own_error(
        cluster: str, tmp_path: Path) -> None:
    spec = f"scripted:{tmp_path / 'missing.yaml'}"
    exp = build_experiment({"models": [spec], "suites": ["beta"], "temperatures": [0.3],
                            "repeats": 1, "executor": "ray"})
    with pytest.raises(ModelNotFoundError, match=r"missing\.yaml does not exist"):
        execute(exp, run_dir=tmp_path / "run", trial_fn=fake_trial, load_suite=fake_load_suite,
                variants=fake_variants, progress=quiet())
    assert not actors_of(spec)  # its actors and their reservation are ended
    assert ray.util.placement_group_table() and all(
        g["state"] == "REMOVED" for g in ray.util.placement_group_table().values())


def test_the_native_tools_check_runs_in_the_actor_under_the_native_scaffold(
        cluster: str, tmp_path: Path) -> None:
    spec = "llamacpp:phi3.5-3.8b"  # the llamacpp backend: no native tool calling
    exp = build_experiment({"models": [spec], "suites": ["beta"], "temperatures": [0.3],
                            "repeats": 1, "executor": "ray", "scaffold": "native",
                            "ray_models": {spec: {"num_cpus": 1}}})
    with pytest.raises(ConfigError, match=r"phi3\.5-3\.8b has no native tool calling"):
        execute(exp, run_dir=tmp_path / "run", trial_fn=fake_trial, load_suite=fake_load_suite,
                variants=fake_variants, progress=quiet())
    assert not actors_of(spec)


def test_a_cluster_too_small_for_a_replica_is_refused_before_the_run_folder(
        cluster: str, tmp_path: Path) -> None:
    exp = build_experiment({**ray_grid(), "ray_models": {MODEL: {"num_cpus": 3}}})
    with pytest.raises(ConfigError, match="no node of the Ray cluster has"):
        execute(exp, run_dir=tmp_path / "run", progress=quiet())
    exp = build_experiment({**ray_grid(), "ray_models": {MODEL: {"replicas": 3}}})
    with pytest.raises(ConfigError, match=r"3 replicas of .* need 3 CPU; the Ray cluster has 2"):
        execute(exp, run_dir=tmp_path / "run", progress=quiet())
    assert not (tmp_path / "run").exists()


def test_a_driver_sigkilled_and_resumed_completes_the_grid(cluster: str, tmp_path: Path) -> None:
    out = tmp_path / "run"
    argv = slmbench("run", "--model", MODEL, "--suite", "quick", "--temperature", "0.0,0.7",
                    "--repeats", "1", "--skip-code-tasks", "--executor", "ray",
                    "--ray-address", cluster, "--out", str(out))
    planned = plan_of(build_experiment(GRID)).keys()
    rng = random.Random(20)
    counts = [run_until_killed(argv, out / "run.sqlite", "trials", rng, at_least=rng.randint(1, 4))
              for _ in range(3)]
    assert counts == sorted(counts) and counts[-1] < len(planned)
    done = subprocess.run(argv, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert_exactly(out, planned)


def test_replicas_reserve_cpus_by_the_registry_size_unless_overridden() -> None:
    assert resources_of("llamacpp:qwen2.5-coder-0.5b") == {"num_cpus": 2.0, "num_gpus": 0}
    assert resources_of("hf:Qwen/Qwen3-4B")["num_cpus"] == 4.0
    assert resources_of("hf:Qwen/Qwen3-8B")["num_cpus"] == 8.0  # capped
    assert resources_of("scripted:echo")["num_cpus"] == 1.0
    assert resources_of("openai:m@http://127.0.0.1:8000/v1")["num_cpus"] < 1
    over = RayModelOptions(num_cpus=4, num_gpus=1, resources={"vllm": 1})
    assert resources_of("llamacpp:qwen2.5-coder-0.5b", over) == {
        "num_cpus": 4, "num_gpus": 1, "resources": {"vllm": 1}}


def test_a_study_file_sets_the_executor_of_its_part_a_blocks(tmp_path: Path) -> None:
    from slmbench.study import load_study
    from slmbench.study.spec import part_a_experiment

    study = tmp_path / "study.toml"
    study.write_text(f"""name = "s"
out = "{tmp_path / 'out'}"
executor = "ray"
ray_address = "ray://head:10001"

[[part_a]]
models = ["{MODEL}"]
suites = ["quick"]

[[part_a]]
models = ["{MODEL}"]
suites = ["quick"]
executor = "local"
""", encoding="utf-8")
    loaded = load_study(study)
    first, second = (part_a_experiment(loaded, b) for b in range(2))
    assert (first.executor, first.ray_address) == ("ray", "ray://head:10001")
    assert second.executor == "local"  # a block's own setting wins
    assert first.grid_fingerprint() == second.grid_fingerprint()  # where, not what
