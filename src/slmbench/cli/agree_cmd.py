"""``slmbench agree SPEC SPEC [SPEC…]``: does a verdict survive a change of runtime?

It writes a study file with an ``[agreement]`` table (``slmbench study FILE`` runs it again,
resumes it, exports and merges it like any study) and runs it: the capability suite at T = 0
and ``--limit`` items each of the Part B tasks on every spec and its noise floor, then the
page (``docs/servers.md``, "What carries over between runtimes")."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Annotated

import typer

from slmbench.cli.console import wide_console
from slmbench.cli.tables import print_summary
from slmbench.study import agreement_block, load_study, run_study, write_agreement_file


def register(app: typer.Typer) -> None:
    @app.command()
    def agree(
        specs: Annotated[list[str], typer.Argument(
            help="two or more model specs of one model, e.g. llamacpp:qwen2.5-coder-0.5b "
                 "llamaserver:qwen2.5-coder-0.5b 'hf:qwen2.5-coder-0.5b?dtype=fp32'")],
        name: Annotated[str | None, typer.Option(help="the study's name")] = None,
        out: Annotated[Path | None, typer.Option(
            help="where the stores go (default runs/agree-<digest of the specs>)")] = None,
        page: Annotated[Path | None, typer.Option(help="the page (default OUT/agreement.md)")
                        ] = None,
        file: Annotated[Path | None, typer.Option(
            "--file", help="the study file written (default OUT/agreement.toml)")] = None,
        suite: Annotated[list[str] | None, typer.Option(
            "--suite", help="Part A suites (default capability)")] = None,
        task: Annotated[list[str] | None, typer.Option(
            "--task", "-t", help="Part B tasks (default approval and tools)")] = None,
        limit: Annotated[int, typer.Option(min=1, help="Part B items per task")] = 200,
        margin: Annotated[float, typer.Option(help="Part A equivalence margin")] = 0.10,
        floor: Annotated[bool, typer.Option(
            "--floor/--no-floor", help="also read each runtime's noise floor")] = True,
        page_only: Annotated[bool, typer.Option(
            "--page-only", help="write the page from what is stored; load no model")] = False,
        merge: Annotated[list[Path] | None, typer.Option(
            "--merge", help="another machine's `out`, or the exports beside a page")] = None,
    ) -> None:
        """Run one model through several runtimes and say, per pair, what carries over."""
        block = agreement_block(specs=specs, margin=margin, suites=suite or ["capability"],
                               tasks=task or ["approval", "tools"], limit=limit, floor=floor)
        digest = hashlib.sha256("\n".join(specs).encode()).hexdigest()[:8]
        out = out or Path("runs") / f"agree-{digest}"
        where = write_agreement_file(file or out / "agreement.toml",
                                     name=name or specs[0].split(":", 1)[-1], out=out,
                                     page=page or out / "agreement.md", block=block)
        console = wide_console()
        done = run_study(load_study(where), where, page_only=page_only, merge=merge or [],
                         console=console, on_summary=lambda s: print_summary(s, console))
        for path, n in done.merged.items():
            console.print(f"{path}: {n} records merged", highlight=False)
        console.print(f"agreement page: {done.page}" if done.page else done.no_page,
                      highlight=False)
        console.print(f"run it again with: slmbench study {where}", highlight=False)
