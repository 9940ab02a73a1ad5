"""``slmbench models`` (what the registry knows, what is here) and ``slmbench pull NAME``."""

from __future__ import annotations

import os
import warnings
from pathlib import Path

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from slmbench.cli.console import wide_console
from slmbench.models.catalog import (
    HFSource,
    OllamaSource,
    PypiSource,
    RegistryEntry,
    gguf_path,
    load_registry,
)
from slmbench.models.pull import pull as pull_model

NO_SERVER = "no server"


def _ollama_tags() -> set[str] | None:
    """Tags the local Ollama server holds, or None when no server answers."""
    import ollama

    try:
        listing = ollama.Client(host=os.environ.get("OLLAMA_HOST"), timeout=2.0).list()
    except Exception:  # connection refused, timeout, bad answer: all mean "can't tell"
        return None
    return {m.model for m in listing.models if m.model}


def _hf_cache() -> Path:
    if cache := os.environ.get("HF_HUB_CACHE"):
        return Path(cache).expanduser()
    hf_home = os.environ.get("HF_HOME")
    base = Path(hf_home).expanduser() if hf_home else Path.home() / ".cache" / "huggingface"
    return base / "hub"


def _hf_present(repo_id: str) -> bool:
    snapshots = _hf_cache() / f"models--{repo_id.replace('/', '--')}" / "snapshots"
    return snapshots.is_dir() and any(snapshots.iterdir())


def local_status(entry: RegistryEntry, ollama_tags: set[str] | None) -> str:
    """``yes`` / ``no`` (or ``no server`` for Ollama tags when no server answers)."""
    src = entry.source
    if isinstance(src, PypiSource):
        present = gguf_path(entry.name).is_file()
    elif isinstance(src, OllamaSource):
        if ollama_tags is None:
            return NO_SERVER
        present = src.tag in ollama_tags or f"{src.tag}:latest" in ollama_tags
    else:
        assert isinstance(src, HFSource)
        present = _hf_present(src.repo_id)
    return "yes" if present else "no"


def models() -> None:
    """List the models slmbench knows, with the spec string that loads each."""
    registry = load_registry()
    needs_ollama = any(isinstance(m.source, OllamaSource) for m in registry.models)
    tags = _ollama_tags() if needs_ollama else None
    table = Table(title="slmbench models")
    for col in ("name", "family", "params", "quant", "chat", "source", "spec", "local"):
        table.add_column(col, justify="right" if col == "params" else "left",
                         no_wrap=col in ("name", "spec"))
    for m in registry.models:
        table.add_row(m.name, m.family, f"{m.params:g}B", m.quantization,
                      "yes" if m.chat else "no", m.source.kind, m.spec, local_status(m, tags))
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
