"""``slmbench demo`` as one call: the study file shipped with the package (``demo.toml``) on
one model: its Part A grid, that grid's report, its Part B slice, and the one page holding both
halves, with the time elapsed and an estimate printed before each phase. It composes both halves
and ``report``, so it lives here (``agents`` may not import ``report``)."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from rich.console import Console

from slmbench.agents.runner.config import build_experiment, demo_dir, overridden
from slmbench.agents.runner.executor import RunSummary
from slmbench.core.errors import ConfigError
from slmbench.microtasks.demo import demo_slice, ensure_datasets
from slmbench.microtasks.matrix import CellProgress
from slmbench.report import ReportFiles, build_report
from slmbench.report.demo_page import write_demo_page
from slmbench.study.plan import PlanRow, size_plan
from slmbench.study.run import run_part_a
from slmbench.study.spec import Study, load_study

DEMO_FILE = "demo.toml"
#: a benchmark's measured seconds per trial and per reading (``benchmarks/study_throughput.py``,
#: read from the current folder like ``runs/``): the estimate of a model with nothing stored
MEASURED = Path("benchmarks/results/study_throughput.json")


@dataclass(frozen=True)
class DemoRun:
    """What :func:`run_demo` wrote: the Part B slice's lines to show and the page."""

    part_b: list[str]
    page: Path


def demo_study(model: str, *, out: Path | None = None, suite: str | None = None,
               tasks: Sequence[str] | None = None, temperature: float | None = None,
               repeats: int | None = None, skip_code_tasks: bool | None = None) -> Study:
    """The demo's study file on ``model``, into ``out`` (default :func:`demo_dir`), with the
    options given (not None) in place of its ``[part_a]`` values."""
    with resources.as_file(resources.files("slmbench.study") / DEMO_FILE) as path:
        study = load_study(path, base=Path(), fill={"model": model,
                                                    "out": str(out or demo_dir(model))})
    if len(study.part_a) != 1 or len(study.part_b) != 1 or study.part_b[0].limit is None \
            or not study.part_b[0].sequential:
        raise ConfigError(f"slmbench/study/{DEMO_FILE}: the demo is one [part_a] and one "
                          "sequential [part_b] with a limit",
                          "restore the demo study file of this slmbench version")
    given = {"suites": [suite] if suite else None, "tasks": list(tasks) if tasks else None,
             "temperatures": None if temperature is None else [temperature],
             "repeats": repeats, "skip_code_tasks": skip_code_tasks}
    exp = build_experiment(overridden(study.part_a[0].model_dump(), given),
                           source="slmbench demo")
    return study.model_copy(update={"part_a": [exp]})


def _duration(seconds: float) -> str:
    whole = round(seconds)
    return f"{whole // 3600}:{whole // 60 % 60:02d}:{whole % 60:02d}"


def _count(n: int, unit: str) -> str:
    return f"{n} {unit}{'' if n == 1 else 's'}"


def measured_rate(path: Path, model: str, unit: str) -> tuple[float, str] | None:
    """Seconds per ``unit`` (trial or reading) measured in the benchmark results ``path`` on
    ``model``'s runtime (its spec without options): a side's Part A (Part B) seconds over its
    trials (readings), and the spec it was measured on; None if the file has none."""
    if not path.is_file():
        return None
    spent, count = ("part_a_s", "trials") if unit == "trial" else ("part_b_s", "readings")
    found = json.loads(path.read_text(encoding="utf-8"))
    for side in (found.get("in_process"), found.get("server")):
        if isinstance(side, dict) and str(side.get("model")).split("?", 1)[0] == \
                model.split("?", 1)[0] and side.get(count):
            return float(side[spent]) / int(side[count]), str(side["model"])
    return None


def estimate(row: PlanRow, measured: Path) -> str:
    """What a phase of ``row`` (the ``--plan`` row of its block) has left and the model time
    that should take: the rest at the mean of this run's stored trials (readings), else at
    the rate :func:`measured_rate` finds in ``measured``."""
    bound = "at most " if row.at_most else ""
    head = f"{bound}{_count(row.planned, row.unit)} planned, {row.stored} stored"
    if row.remaining == 0:
        return f"{head}; nothing left to {'run' if row.unit == 'trial' else 'read'}"
    if row.seconds_per is not None:
        per, where = row.seconds_per, (f"the mean of the {_count(row.measured_n, row.unit)} "
                                       "this run stored"
                                       + (f" of {row.rate_from}" if row.rate_from else ""))
    elif (found := measured_rate(measured, row.model, row.unit)) is not None:
        per, where = found[0], f"measured on {found[1]} in {measured}"
    else:
        return (f"{head}; no estimate: no {row.unit} of {row.model} stored yet, and none of its "
                f"runtime measured in {measured}")
    return (f"{head}; {bound}about {_duration(row.remaining * per)} of model time "
            f"({row.remaining} x {per:.2f} s a {row.unit}: {where})")


def _phase(console: Console, started: float, name: str, what: str) -> None:
    console.print(f"{_duration(time.monotonic() - started)} elapsed · {name}: {what}",
                  highlight=False, soft_wrap=True)


def run_demo(model: str, *, out: Path | None, suite: str | None, tasks: Sequence[str] | None,
             temperature: float | None, repeats: int | None, skip_code_tasks: bool | None,
             command: str, console: Console, cell_progress: CellProgress | None = None,
             on_part_a: Callable[[RunSummary, ReportFiles], None] = lambda s, f: None,
             measured: Path = MEASURED) -> DemoRun:
    """Run (resume) :func:`demo_study`'s Part A grid into its run directory and write its
    report (``on_part_a`` is given both as soon as they exist), then read its Part B slice
    into ``<run>/part-b`` and write ``<run>/demo-report.md`` (``command``: the command the page
    records). Before each phase, the time elapsed and the phase's :func:`estimate`."""
    started = time.monotonic()
    study = demo_study(model, out=out, suite=suite, tasks=tasks, temperature=temperature,
                       repeats=repeats, skip_code_tasks=skip_code_tasks)
    run_dir, b = study.part_a_dir(0), study.part_b[0]
    [row] = size_plan(study.model_copy(update={"part_b": []}))
    _phase(console, started, "Part A grid", estimate(row, measured))
    [summary] = run_part_a(study, None, console)
    _phase(console, started, "Part A report", "no model time (it reads the stored trials)")
    files = build_report(run_dir)
    on_part_a(summary, files)
    slice_tasks = b.micro_tasks
    ensure_datasets(slice_tasks, b.source)
    [row] = size_plan(study.model_copy(update={"part_a": []}))
    _phase(console, started, "Part B slice", estimate(row, measured))
    assert b.limit is not None  # demo_study refuses a file without one
    part_b = demo_slice(model, slice_tasks, out=study.part_b_dir, cap=b.limit,
                        prompts=b.prompts, seed=b.seed, source=b.source,
                        cell_progress=cell_progress)
    _phase(console, started, "page", "no model time (it reads the stores)")
    page = write_demo_page(run_dir, study.part_b_dir, model=model, command=command,
                           html=files.html)
    return DemoRun(part_b=list(part_b.lines), page=page)
