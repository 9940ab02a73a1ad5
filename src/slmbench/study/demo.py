"""``slmbench demo`` as one call: the quick Part A grid on one model, its report, the Part B
slice, and the one page holding both halves. It composes both halves and ``report``, so it
lives here (``agents`` may not import ``report``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console

from slmbench.agents.runner.config import demo_experiment
from slmbench.agents.runner.executor import RunSummary, execute
from slmbench.agents.runner.progress import make_progress
from slmbench.microtasks import tasks as micro_tasks
from slmbench.microtasks.demo import DEMO_TASKS, demo_slice
from slmbench.microtasks.matrix import CellProgress
from slmbench.report import ReportFiles, build_report
from slmbench.report.demo_page import write_demo_page


@dataclass(frozen=True)
class DemoRun:
    """What :func:`run_demo` wrote: the Part B slice's lines to show and the page."""

    part_b: list[str]
    page: Path


def run_demo(model: str, *, out: Path | None, suite: str, tasks: Sequence[str] | None,
             temperature: float, repeats: int, skip_code_tasks: bool, command: str,
             console: Console, cell_progress: CellProgress | None = None,
             on_part_a: Callable[[RunSummary, ReportFiles], None] = lambda s, f: None
             ) -> DemoRun:
    """Run (resume) the demo grid of ``model`` into its run directory (``out``, default a
    pure function of the model) and write its report (``on_part_a`` is given both as soon as
    they exist), then read the Part B slice into ``<run>/part-b`` and write
    ``<run>/demo-report.md`` (``command``: the command the page records)."""
    exp = demo_experiment(model, out=out, suite=suite, tasks=list(tasks) if tasks else None,
                          temperature=temperature, repeats=repeats,
                          skip_code_tasks=skip_code_tasks)
    run_dir = exp.out_dir()
    summary = execute(exp, run_dir=run_dir, progress=make_progress(console))
    files = build_report(run_dir)
    on_part_a(summary, files)
    part_b = demo_slice(model, micro_tasks.lookup(DEMO_TASKS), out=run_dir / "part-b",
                        cell_progress=cell_progress)
    page = write_demo_page(run_dir, run_dir / "part-b", model=model, command=command,
                           html=files.html)
    return DemoRun(part_b=list(part_b.lines), page=page)
