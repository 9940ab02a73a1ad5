"""``slmbench models`` (what the registry knows, what is here) and ``slmbench pull NAME``."""

from __future__ import annotations

import warnings

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from slmbench.cli.console import wide_console
from slmbench.models.catalog import availability, load_registry
from slmbench.models.pull import pull as pull_model


def models() -> None:
    """List the models slmbench knows, with the spec string that loads each."""
    registry = load_registry()
    local = availability(registry)
    table = Table(title="slmbench models")
    for col in ("name", "family", "params", "quant", "chat", "source", "spec", "local"):
        table.add_column(col, justify="right" if col == "params" else "left",
                         no_wrap=col in ("name", "spec"))
    for m in registry.models:
        table.add_row(m.name, m.family, f"{m.params:g}B", m.quantization,
                      "yes" if m.chat else "no", m.source.kind, m.spec, local[m.name])
    wide_console().print(table)


def pull(
    name: str = typer.Argument(..., help="registry name, e.g. qwen2.5-coder-0.5b"),
    force: bool = typer.Option(False, "--force", help="download again even if the file is here"),
) -> None:
    """Download a registry GGUF into the model cache, verify its sha256, print its path."""
    err = Console(stderr=True)
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), console=err, transient=True) as bar:
        task = bar.add_task(f"pull {name}", total=None)

        def show(done: int, total: int, message: str) -> None:
            bar.update(task, completed=done, total=total, description=f"{name}: {message}")

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # printed below instead
            result = pull_model(name, force=force, progress=show)
    if result.warning:
        err.print(f"[bold yellow]warning:[/] {result.warning}", highlight=False, soft_wrap=True)
    state = "downloaded and verified" if result.downloaded else "already present, verified"
    err.print(f"{name}: {state} (sha256 {result.sha256})", highlight=False, soft_wrap=True)
    print(result.path)


def register(app: typer.Typer) -> None:
    app.command("models")(models)
    app.command("pull")(pull)
