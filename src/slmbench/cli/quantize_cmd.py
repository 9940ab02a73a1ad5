"""``slmbench quantize`` (precisions of one model, eligibility per cell) and
``slmbench quantize-page`` (its page from a report alone)."""

from __future__ import annotations

from pathlib import Path

import typer

from slmbench.cli.console import command_line, run_job
from slmbench.cli.diagnose_cmd import console, say
from slmbench.cli.options import EvalLimit, ItemSeed, OutFolder, ReadingsStore, Tasks
from slmbench.cli.scaleout import ScaleOut, scale_out_options
from slmbench.core.errors import ConfigError
from slmbench.microtasks import tasks as registry
from slmbench.microtasks.diagnostics.precisions import NOT_AVAILABLE, parse_precisions
from slmbench.microtasks.job import Job
from slmbench.report.quantization_page import quantization_markdown


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
        from slmbench.microtasks.diagnostics.quantize import precisions_on, run_quantize
    except ImportError as exc:
        raise ConfigError(f"quantize needs torch and transformers: {exc}",
                          "pip install 'slmbench[hf]'") from exc
    levels, tasks, extra = parse_precisions(precision), registry.lookup(task), gguf or []
    for name, why in NOT_AVAILABLE.items():
        console.print(f"[yellow]{name.upper()} not run:[/] {why}", highlight=False)
    done = run_job(Job("quantization", [f"hf:{model}", *extra], tasks, lambda store, ray: (
        run_quantize(model, levels, tasks, limit=limit, gguf=extra, seed=seed, margin=margin,
                     threads=threads, command=command_line("slmbench quantize"),
                     progress=say, store=store, ray=ray)), quantization_markdown,
        where=lambda: precisions_on(scale.executor.value, model, [*levels, *extra],
                                    scale.address, replicas=scale.replicas,
                                    timeout_s=scale.timeout_s, attempts=scale.attempts,
                                    threads=threads)), out, store_path)
    console.print(done.page, markup=False, highlight=False)
    console.print(f"wrote {done.json_path}")


def quantize_page_cmd(
    report_file: Path = typer.Argument(..., help="a `slmbench quantize` run's quantization.json"),
    page: Path = typer.Option(..., "--page", help="the Markdown page to write; the rescored "
                                                 "report goes beside it as PAGE.json"),
    title: str | None = typer.Option(None, "--title", help="the page's heading"),
) -> None:
    """Write a quantization page from a quantize run's report alone (loads no model)."""
    from slmbench.microtasks.diagnostics.precisions import load_report, rescored
    from slmbench.report.quantization_page import write_quantization_page

    report = load_report(report_file)
    written = write_quantization_page(rescored(report, registry.lookup(report.tasks)), page,
                                      title=title,
                                      made_by=command_line("slmbench quantize-page"))
    console.print(f"wrote {written} and {written.with_suffix('.json')}", highlight=False)


def register(app: typer.Typer) -> None:
    app.command("quantize")(quantize_cmd)
    app.command("quantize-page")(quantize_page_cmd)
