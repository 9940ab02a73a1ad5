"""Part B readings on a local Ray cluster (``ray.init(num_cpus=2)``, one per module) with
scripted models: the same stored readings as the local executor, an actor killed mid-read,
a replica that hangs, and the CLI and study settings (issue #20)."""

# ruff: noqa: E402  (imports that need an extra come after its importorskip)
from __future__ import annotations

import contextlib
import functools
import json
import sqlite3
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from extras import need

ray = need("ray", "ray")

from typer.testing import CliRunner

from slmbench.cli.main import app
from slmbench.core.errors import ConfigError
from slmbench.microtasks import tasks as registry
from slmbench.microtasks.datasets.records import ApprovalItem, Provenance
from slmbench.microtasks.matrix import MatrixRun, run_matrix
from slmbench.microtasks.session import read_on
from slmbench.microtasks.store import ReadingStore
from slmbench.models.factory import load_model
from slmbench.models.ray import NAMESPACE
from slmbench.models.records import Completion, Message

APPROVAL = registry.get("approval")

pytestmark = pytest.mark.slow

PROV = (Provenance(package="synthetic", version="0", licence="CC0", archive_sha256="0" * 64,
                   source_path="tests", record_id="x"),)
ITEMS = 8  # eval items; 2 prompts: 16 readings a run
PROMPTS = ["p0", "p1"]
HANGS = "rm -rf /srv/2"  # the command of the one item a HangingModel never answers


@pytest.fixture(autouse=True)
def _task_file_forgotten() -> Iterator[None]:
    """An eligibility run of the example task file registers its task in this process; it is
    removed after each test, so later tests see the registry as they would alone."""
    yield
    registry.unregister("my-tools")


@pytest.fixture(scope="module")
def cluster() -> Iterator[None]:
    """A local Ray instance for the whole module; this module's models pickled by value."""
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, namespace=NAMESPACE)
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
    yield
    ray.shutdown()


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("datasets")
    lines = [ApprovalItem(
        id=f"a-{split}-{k}", split=split, command=f"ls dir{k}" if k % 2 else f"rm -rf /srv/{k}",
        label="approve" if k % 2 else "deny", rule="test", origin="test",
        provenance=PROV).model_dump_json() for split in ("fit", "eval") for k in range(ITEMS)]
    (out / "approval.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return out


@pytest.fixture(scope="module")
def spec(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A scripted model with log-probabilities that denies ``rm`` and approves the rest."""
    script = tmp_path_factory.mktemp("script") / "careful.json"
    script.write_text(json.dumps({
        "rules": [{"match": "rm -rf", "reply": "deny"}], "default": "Approve.",
        "logprobs": {"*": -3.0, "deny": -0.5, "Deny": -1.5, "approve": -1.0}}), "utf-8")
    return f"scripted:{script}?delay=0.1"


def matrix(spec: str, source: Path, store: ReadingStore, ray_cluster: Any = None,
           prompts: Sequence[str] = PROMPTS) -> MatrixRun:
    return run_matrix([spec], [APPROVAL], prompts, source=source, store=store, ray=ray_cluster)


TIMINGS = ("seconds", "score_seconds")  # a raw reading's timings


def rows(db: Path, table: str = "readings") -> list[tuple[Any, ...]]:
    """A store's rows in key order; a reading's raw outputs without their timing."""
    with sqlite3.connect(db) as conn:
        found = conn.execute(f"SELECT * FROM {table} ORDER BY 1, 2, 3, 4, 5").fetchall()
    if table != "readings":
        return [row[:-1] for row in found]  # created_at
    return [(*row[:5], {k: v for k, v in json.loads(row[5]).items() if k not in TIMINGS})
            for row in found]


@pytest.fixture(scope="module")
def local(tmp_path_factory: pytest.TempPathFactory, spec: str, source: Path
          ) -> tuple[MatrixRun, list[tuple[Any, ...]]]:
    db = tmp_path_factory.mktemp("local") / "readings.sqlite"
    with ReadingStore(db) as store:
        run = matrix(spec, source, store)
    assert run.read_counts.read_now == 2 * ITEMS
    return run, rows(db)


def same_as_local(run: MatrixRun, db: Path, local: tuple[MatrixRun, list[Any]]) -> None:
    assert rows(db) == local[1]
    assert run.readings == local[0].readings and run.cells == local[0].cells
    assert rows(db, "failures") == []


def actors_of(spec: str) -> list[Any]:
    found = []
    for a in ray.util.list_named_actors(all_namespaces=True):
        if a["namespace"] == NAMESPACE and a["name"].startswith(f"{spec}#"):
            with contextlib.suppress(ValueError):  # ended between the listing and the lookup
                found.append(ray.get_actor(a["name"], namespace=NAMESPACE))
    return found


def test_a_matrix_on_ray_stores_the_readings_the_local_executor_stores(
        cluster: None, tmp_path: Path, spec: str, source: Path,
        local: tuple[MatrixRun, list[Any]]) -> None:
    db = tmp_path / "readings.sqlite"
    with ReadingStore(db) as store, read_on("ray", [spec], replicas=2) as on_ray:
        run = matrix(spec, source, store, on_ray)
        assert run.read_counts.read_now == 2 * ITEMS and not actors_of(spec)  # all ended
        again = matrix(spec, source, store, on_ray)  # resumes like a local run: all stored
    assert (again.read_counts.from_store, again.read_counts.read_now) == (2 * ITEMS, 0)
    same_as_local(run, db, local)


def test_an_actor_killed_mid_read_loses_no_reading_and_doubles_none(
        cluster: None, tmp_path: Path, spec: str, source: Path,
        local: tuple[MatrixRun, list[Any]]) -> None:
    db = tmp_path / "readings.sqlite"
    out: list[MatrixRun] = []
    with ReadingStore(db) as store, read_on("ray", [spec], replicas=2) as on_ray:
        thread = threading.Thread(target=lambda: out.append(matrix(spec, source, store, on_ray)),
                                  daemon=True)
        thread.start()
        for _ in range(600):  # bounded: at most ~60 s
            if store.count() >= 3:
                break
            time.sleep(0.1)
        victims = actors_of(spec)
        assert len(victims) == 2
        ray.kill(victims[0])  # the replica is busy: a reading's call is in flight on it
        thread.join(timeout=120)
    assert not thread.is_alive() and out
    assert out[0].read_counts.read_now == 2 * ITEMS and out[0].read_counts.backend_errors == 0
    same_as_local(out[0], db, local)


class HangingModel:
    """A scripted model (loaded by its spec) that never answers about :data:`HANGS`."""

    supports_native_tools = False

    def __init__(self, spec: str) -> None:
        self.inner = load_model(spec)
        self.spec = spec
        self.supports_logprobs = self.inner.supports_logprobs

    def _wait(self, messages: Sequence[Message | dict[str, Any]]) -> None:
        last = messages[-1]
        if HANGS in (last.content if isinstance(last, Message) else str(last["content"])):
            time.sleep(120)

    def generate(self, messages: Sequence[Message | dict[str, Any]], **kw: Any) -> Completion:
        self._wait(messages)
        return self.inner.generate(messages, **kw)

    def score(self, messages: Sequence[Message | dict[str, Any]], candidates: Sequence[str]
              ) -> Any:
        self._wait(messages)
        return self.inner.score(messages, candidates)

    def close(self) -> None:
        self.inner.close()


def test_a_replica_that_hangs_is_replaced_and_a_reading_it_never_makes_is_a_backend_error(
        cluster: None, tmp_path: Path, spec: str, source: Path,
        local: tuple[MatrixRun, list[Any]]) -> None:
    db = tmp_path / "readings.sqlite"
    with ReadingStore(db) as store, read_on("ray", [spec], replicas=2, timeout_s=1.5,
                                            attempts=2, loader=HangingModel) as on_ray:
        run = matrix(spec, source, store, on_ray, ["p0"])
    assert (run.read_counts.backend_errors, run.read_counts.read_now) == (1, ITEMS - 1)
    # the replica that hung was replaced: the other readings are the local ones; the hung
    # item is in no rate, and stored with its cause, to be read again by a later run
    assert run.readings == [r for r in local[0].readings
                            if r.prompt_id == "p0" and r.item_id != "a-eval-2"]
    assert rows(db) == [r for r in local[1] if r[2] == "p0" and r[3] != "a-eval-2"]
    [failure] = rows(db, "failures")
    assert failure[:4] == (spec, "approval", "p0", "a-eval-2")
    assert "gave up after 2 attempts" in failure[5]
    assert "did not answer a call within 1.5 s" in failure[5]
    assert run.cells and all(c.n_items == ITEMS - 1 for c in run.cells)
    assert any("backend error, in no rate" in n for n in run.notes)


class KilledModel(HangingModel):
    """A scripted model whose replica, asked about :data:`HANGS`, writes its actor's name in
    ``marks`` and waits to be killed (the test's :func:`killer` ends it with ``ray.kill``),
    as long as fewer than ``times`` replicas did so; then it answers."""

    def __init__(self, spec: str, marks: Path, times: int) -> None:
        super().__init__(spec)
        self.marks, self.times = marks, times

    def _wait(self, messages: Sequence[Message | dict[str, Any]]) -> None:
        last = messages[-1]
        text = last.content if isinstance(last, Message) else str(last["content"])
        if HANGS in text and len(list(self.marks.iterdir())) < self.times:
            name = ray.get_runtime_context().get_actor_name()
            (self.marks / f"{len(list(self.marks.iterdir()))}").write_text(name, "utf-8")
            time.sleep(120)


@contextlib.contextmanager
def killer(marks: Path) -> Iterator[list[str]]:
    """``ray.kill`` each replica that writes its name in ``marks``; the names killed."""
    done, killed = threading.Event(), []

    def loop() -> None:
        while not done.is_set():
            for mark in sorted(marks.iterdir()):
                if (name := mark.read_text("utf-8")) and name not in killed:
                    with contextlib.suppress(ValueError):
                        ray.kill(ray.get_actor(name, namespace=NAMESPACE))
                    killed.append(name)
            time.sleep(0.05)

    thread = threading.Thread(target=loop, daemon=True)
    thread.start()
    try:
        yield killed
    finally:
        done.set()
        thread.join()


@pytest.mark.parametrize("attempts", [2, 4])
def test_a_reading_killed_more_often_than_its_attempts_is_a_backend_error_with_the_cause(
        cluster: None, tmp_path: Path, spec: str, source: Path,
        local: tuple[MatrixRun, list[Any]], attempts: int) -> None:
    marks = tmp_path / "marks"
    marks.mkdir()
    db = tmp_path / "readings.sqlite"
    loader = functools.partial(KilledModel, marks=marks, times=99)
    with killer(marks) as killed, ReadingStore(db) as store, read_on(
            "ray", [spec], replicas=2, attempts=attempts, loader=loader) as on_ray:
        run = matrix(spec, source, store, on_ray, ["p0"])
    assert len(killed) == attempts  # each try of the reading on a fresh replica, then no more
    assert (run.read_counts.backend_errors, run.read_counts.read_now) == (1, ITEMS - 1)
    assert rows(db) == [r for r in local[1] if r[2] == "p0" and r[3] != "a-eval-2"]
    [failure] = rows(db, "failures")
    assert failure[:4] == (spec, "approval", "p0", "a-eval-2")
    assert f"gave up after {attempts} attempts" in failure[5]
    assert "its Ray actor died during a call (The actor is dead because it was killed by " \
        "`ray.kill`" in failure[5]


def test_a_reading_killed_fewer_times_than_its_attempts_is_read_once_and_stored_once(
        cluster: None, tmp_path: Path, spec: str, source: Path,
        local: tuple[MatrixRun, list[Any]]) -> None:
    marks = tmp_path / "marks"
    marks.mkdir()
    db = tmp_path / "readings.sqlite"
    loader = functools.partial(KilledModel, marks=marks, times=2)
    with killer(marks) as killed, ReadingStore(db) as store, read_on(
            "ray", [spec], replicas=2, attempts=3, loader=loader) as on_ray:
        run = matrix(spec, source, store, on_ray)
    assert len(killed) == 2
    assert run.read_counts.read_now == 2 * ITEMS and run.read_counts.backend_errors == 0
    same_as_local(run, db, local)  # nothing lost, nothing doubled, no failure left


def test_eligibility_retry_attempts_bounds_the_tries_of_a_reading_on_ray(
        cluster: None, tmp_path: Path) -> None:
    task = Path(__file__).resolve().parents[2] / "examples" / "my-tools.yaml"
    out = tmp_path / "out"
    done = CliRunner().invoke(app, [
        "eligibility", "--task-file", str(task), "-m", "scripted:echo?delay=5", "--limit", "1",
        "--out", str(out), "--executor", "ray", "--ray-timeout", "0.5",
        "--retry-attempts", "2"])
    # every call outlasts --ray-timeout: the one item is given up after 2 tries, so the
    # block has no reading and the run stops with the cause, stored for the next run
    assert isinstance(done.exception, ConfigError)
    assert "gave up after 2 attempts" in str(done.exception)
    [failure] = rows(out / "readings.sqlite", "failures")
    assert "gave up after 2 attempts" in failure[5] and "within 0.5 s" in failure[5]


def test_a_cluster_too_small_for_a_replica_is_refused_before_reading(
        cluster: None, spec: str) -> None:
    refused = pytest.raises(ConfigError, match=r"3 replicas of .* need 3 CPU; the Ray cluster "
                            "has 2")
    with refused, read_on("ray", [spec], replicas=3):
        raise AssertionError("nothing may be read")


def test_eligibility_executor_ray_stores_what_a_local_run_stores(
        cluster: None, tmp_path: Path, spec: str) -> None:
    task = Path(__file__).resolve().parents[2] / "examples" / "my-tools.yaml"
    runner = CliRunner()
    stores = []
    for executor in ("local", "ray"):
        out = tmp_path / executor
        args = ["eligibility", "--task-file", str(task), "-m", spec, "--limit", "4",
                "--out", str(out), "--executor", executor]
        done = runner.invoke(app, args)
        assert done.exit_code == 0, done.output
        stores.append(rows(out / "readings.sqlite"))
    assert stores[0] == stores[1] and len(stores[0]) == 4


def test_a_study_file_sets_the_executor_of_its_part_b_blocks(tmp_path: Path) -> None:
    from slmbench.study import load_study

    study = tmp_path / "study.toml"
    study.write_text(f"""name = "s"
out = "{tmp_path / 'out'}"
executor = "ray"
ray_address = "ray://head:10001"
retry = {{attempts = 5, base_s = 0.0}}

[[part_a]]
models = ["scripted:echo"]
suites = ["quick"]

[[part_b]]
models = ["scripted:echo"]
tasks = ["approval"]
[part_b.ray_models."scripted:echo"]
replicas = 2
timeout_s = 30

[[part_b]]
models = ["scripted:echo"]
tasks = ["approval"]
executor = "local"
retry = {{attempts = 2}}
""", encoding="utf-8")
    loaded = load_study(study)
    first, second = loaded.part_b
    assert (first.executor, first.ray_address) == ("ray", "ray://head:10001")
    assert first.ray_models["scripted:echo"].replicas == 2
    assert first.ray_models["scripted:echo"].timeout_s == 30
    assert second.executor == "local"  # a block's own setting wins
    # the study's [retry]: Part A's retry policy, and the tries of a Part B reading on Ray
    assert (loaded.part_a[0].retry.attempts, loaded.part_a[0].retry.base_s) == (5, 0.0)
    assert (first.retry.attempts, second.retry.attempts) == (5, 2)
