"""``slmbench diagnose`` (threshold table + failure regime per cell), ``slmbench probe``
(context length), ``slmbench cascade`` (BM25 shortlist + model re-rank; the Cascade router)
and ``slmbench quantize`` (precisions of one model, eligibility per cell)."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.console import Console

from slmbench.cli.console import command_line, read_through, rows_table, wide_console
from slmbench.cli.options import EvalLimit, ItemSeed, Models, OutFolder, ReadingsStore, Tasks
from slmbench.cli.scaleout import ScaleOut, scale_out_options
from slmbench.core.errors import ConfigError
from slmbench.microtasks import tasks as registry
from slmbench.microtasks.diagnostics.cascade import run_cascade
from slmbench.microtasks.diagnostics.diagnose import run_diagnose
from slmbench.microtasks.diagnostics.probes import run_probe
from slmbench.microtasks.matrix import check_can_read
from slmbench.microtasks.session import Session
from slmbench.microtasks.store import DEFAULT_NAME
from slmbench.report.cascade_page import cascade_markdown
from slmbench.report.diagnostics_page import (
    CALIB_COLUMNS,
    DIAG_COLUMNS,
    calibration_rows,
    diagnostic_rows,
    diagnostics_markdown,
)
from slmbench.report.probe_page import probe_markdown
from slmbench.report.quantization_page import quantization_markdown

console = Console()


def _say(message: str) -> None:
    console.print(f"[dim]{message}[/]")


def _write_page(stem: Path, report_json: str, page: str) -> None:
    """Write STEM.json and STEM.md (making the folder), print the page and what was written."""
    stem.parent.mkdir(parents=True, exist_ok=True)
    stem.with_suffix(".json").write_text(report_json, encoding="utf-8")
    stem.with_suffix(".md").write_text(page, encoding="utf-8")
    console.print(page, markup=False, highlight=False)
    console.print(f"wrote {stem.with_suffix('.json')} and {stem.with_suffix('.md')}")


# --- diagnose ---------------------------------------------------------------------------------

@scale_out_options
def diagnose_cmd(
    model: Models,
    task: Tasks = None,
    limit: EvalLimit = None,
    fit_limit: int | None = typer.Option(None, "--fit-limit", min=1,
                                         help="fit items per task (default: same as --limit)"),
    seed: ItemSeed = 0,
    out: OutFolder = Path("diagnostics"),
    store_path: Path | None = typer.Option(
        None, "--store", help="readings store, reused and resumed; point it at an eligibility "
        f"run's store to reuse its p0 readings (default: OUT/{DEFAULT_NAME})"),
    scale: ScaleOut = ScaleOut(),
) -> None:
    """Threshold diagnostic per (task, model): AUC, default vs fit-split threshold, regime."""
    tasks = registry.resolve(task)
    check_can_read(model, tasks)  # before the store: a run that cannot start writes nothing
    with scale.read_on(model) as ray:
        report = read_through(store_path or out / DEFAULT_NAME, lambda store: run_diagnose(
            model, tasks, limit=limit, fit_limit=fit_limit or limit, seed=seed,
            command=command_line("slmbench diagnose"), progress=_say, store=store, ray=ray))
    out.mkdir(parents=True, exist_ok=True)
    (out / "diagnostics.json").write_text(report.model_dump_json(indent=1), encoding="utf-8")
    (out / "diagnostics.md").write_text(diagnostics_markdown(report), encoding="utf-8")
    wide_console(200).print(rows_table(
        "Threshold diagnostics (eval split; thresholds fitted on the fit split)",
        DIAG_COLUMNS, diagnostic_rows(report)))
    wide_console(200).print(rows_table(
        "Calibration and selective prediction (log-prob reading; coverage = the most "
        "confident share of items)", CALIB_COLUMNS, calibration_rows(report)))
    for r in report.regimes:
        console.print(f"{r.task} · {r.model}: [bold]{r.regime}[/] — {r.reason}", highlight=False)
    console.print(f"wrote {out / 'diagnostics.json'} and {out / 'diagnostics.md'}")


# --- probe ------------------------------------------------------------------------------------

@scale_out_options
def probe_cmd(
    model: Models,
    task: list[str] | None = typer.Option(None, "--task", "-t", help="memory and/or ranking"),
    lengths: str = typer.Option("4,8,16,32", "--turns", help="history lengths in turns"),
    limit: EvalLimit = None,
    seed: ItemSeed = 0,
    out: OutFolder = Path("probe"),
    store_path: ReadingsStore = None,
    scale: ScaleOut = ScaleOut(),
) -> None:
    """Context-length probe: memory and ranking scores as the history in the prompt grows."""
    try:
        turns = [int(x) for x in lengths.split(",") if x.strip()]
    except ValueError as exc:
        raise ConfigError(f"--turns {lengths!r} is not a list of integers",
                          "write e.g. --turns 4,8,16,32") from exc
    tasks = registry.resolve(task or ["memory", "ranking"])
    # before the store, so a run that cannot start writes nothing; memory's conversations
    # widen either task
    check_can_read(model, sorted({*tasks, "memory"}))
    with scale.read_on(model) as ray:
        report = read_through(store_path or out / DEFAULT_NAME, lambda store: run_probe(
            model, tasks, turns, limit=limit, seed=seed, command=command_line("slmbench probe"),
            session=Session(ray=ray, store=store, progress=_say)))
    _write_page(out / "probe", report.model_dump_json(indent=1), probe_markdown(report))


# --- cascade ----------------------------------------------------------------------------------

@scale_out_options
def cascade_cmd(
    model: str = typer.Option(..., "--model", "-m", help="model spec"),
    task: str = typer.Option("ranking", "--task", "-t", help="ranking or tools"),
    k: int = typer.Option(3, "--k", min=2, help="shortlist size"),
    turns: int | None = typer.Option(None, "--turns", min=2,
                                     help="ranking: widen each item to this many history turns"),
    limit: int | None = typer.Option(None, "--limit", min=1, help="eval items"),
    fit_limit: int | None = typer.Option(None, "--fit-limit", min=1, help="fit items"),
    seed: ItemSeed = 0,
    out: OutFolder = Path("cascade"),
    store_path: ReadingsStore = None,
    scale: ScaleOut = ScaleOut(),
) -> None:
    """BM25 shortlist + model re-rank (paired gain), and the Cascade router's accuracy/share."""
    (name,) = registry.resolve([task])
    # before the store, so a run that cannot start writes nothing; memory's conversations
    # widen ranking's items
    check_can_read([model], [name, "memory"] if turns else [name])
    with scale.read_on([model]) as ray:
        report = read_through(store_path or out / DEFAULT_NAME, lambda store: run_cascade(
            model, name, k=k, turns=turns, limit=limit, fit_limit=fit_limit or limit,
            seed=seed, command=command_line("slmbench cascade"),
            session=Session(ray=ray, store=store, progress=_say)))
    _write_page(out / "cascade", report.model_dump_json(indent=1), cascade_markdown(report))


# --- quantize ---------------------------------------------------------------------------------

@scale_out_options
def quantize_cmd(
    model: str = typer.Option(..., "--model", "-m",
                              help="a transformers model directory or a .gguf file"),
    precision: str = typer.Option("fp32,rtn4", "--precision",
                                  help="comma list of fp32, fp16, bf16, rtn4, rtn4-sym"),
    gguf: list[str] | None = typer.Option(
        None, "--gguf", help="another precision as a model spec: a llamacpp: GGUF, or an hf: "
                             "folder (a GPTQ/AWQ export dequantized)"),
    task: Tasks = None,
    limit: EvalLimit = None,
    margin: float = typer.Option(0.05, "--margin", help="TOST equivalence margin (accuracy)"),
    threads: int = typer.Option(2, "--threads", min=1, help="torch CPU threads"),
    seed: ItemSeed = 0,
    out: OutFolder = Path("quantization"),
    store_path: ReadingsStore = None,
    scale: ScaleOut = ScaleOut(),
) -> None:
    """The same model at several precisions on the same items: eligibility and paired tests."""
    try:  # torch is an optional dependency: import it only for this command
        from slmbench.microtasks.diagnostics.quantize import (
            NOT_AVAILABLE,
            parse_precisions,
            precisions_on,
            run_quantize,
        )
    except ImportError as exc:
        raise ConfigError(f"quantize needs torch and transformers: {exc}",
                          "pip install 'slmbench[hf]'") from exc
    levels, tasks = parse_precisions(precision), registry.resolve(task)
    for name, why in NOT_AVAILABLE.items():
        console.print(f"[yellow]{name.upper()} not run:[/] {why}", highlight=False)
    check_can_read([f"hf:{model}", *(gguf or ())], tasks)  # before the store is made
    with precisions_on(scale.executor.value, model, [*levels, *(gguf or ())], scale.address,
                       replicas=scale.replicas, timeout_s=scale.timeout_s,
                       attempts=scale.attempts, threads=threads) as ray:
        report = read_through(store_path or out / DEFAULT_NAME, lambda store: run_quantize(
            model, levels, tasks, limit=limit, gguf=gguf or (), seed=seed, margin=margin,
            threads=threads, command=command_line("slmbench quantize"), progress=_say,
            store=store, ray=ray))
    out.mkdir(parents=True, exist_ok=True)
    (out / "quantization.json").write_text(report.model_dump_json(indent=1), encoding="utf-8")
    (out / "quantization.md").write_text(quantization_markdown(report), encoding="utf-8")
    console.print(quantization_markdown(report), markup=False, highlight=False)
    console.print(f"wrote {out / 'quantization.json'}")


def quantize_page_cmd(
    report_file: Path = typer.Argument(..., help="a `slmbench quantize` run's quantization.json"),
    page: Path = typer.Option(..., "--page", help="the Markdown page to write; the rescored "
                                                 "report goes beside it as PAGE.json"),
    title: str | None = typer.Option(None, "--title", help="the page's heading"),
) -> None:
    """Write a quantization page from a quantize run's report alone (loads no model)."""
    try:  # the report's module imports torch
        from slmbench.microtasks.diagnostics.quantize import QuantizationReport, rescored
    except ImportError as exc:
        raise ConfigError(f"quantize-page needs torch and transformers: {exc}",
                          "pip install 'slmbench[hf]'") from exc
    if not report_file.is_file():
        raise ConfigError(f"{report_file} is not a file", "pass a quantize run's "
                          "quantization.json (slmbench quantize --out DIR writes DIR/"
                          "quantization.json)")
    report = rescored(QuantizationReport.model_validate_json(
        report_file.read_text(encoding="utf-8")))
    page.parent.mkdir(parents=True, exist_ok=True)
    page.with_suffix(".json").write_text(report.model_dump_json(indent=1), encoding="utf-8")
    page.write_text(quantization_markdown(report, title=title,
                                          made_by=command_line("slmbench quantize-page")),
                    encoding="utf-8")
    console.print(f"wrote {page} and {page.with_suffix('.json')}", highlight=False)


def register(app: typer.Typer) -> None:
    app.command("diagnose")(diagnose_cmd)
    app.command("probe")(probe_cmd)
    app.command("cascade")(cascade_cmd)
    app.command("quantize")(quantize_cmd)
    app.command("quantize-page")(quantize_page_cmd)
