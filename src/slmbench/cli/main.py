"""``slmbench``: one CLI, one module per command family.

Each module in ``COMMAND_MODULES`` defines ``register(app)``, adding its
commands to the Typer app. Errors a user can act on
(:class:`~slmbench.core.errors.SlmbenchError`) are printed as one line plus a
hint, with exit code 2, never as a traceback.
"""

from __future__ import annotations

import contextlib
import faulthandler
import importlib
import sys

import typer
from rich.console import Console
from rich.markup import escape

from slmbench.core.errors import SlmbenchError

COMMAND_MODULES: list[str] = [
    "slmbench.cli.models_cmd",
    "slmbench.cli.demo_cmd",
    "slmbench.cli.run_cmd",
    "slmbench.cli.analyze_cmd",
    "slmbench.cli.tasks_cmd",
    "slmbench.cli.packs_cmd",
    "slmbench.cli.microtasks_cmd",
    "slmbench.cli.recommend_cmd",
    "slmbench.cli.diagnose_cmd",
    "slmbench.cli.cascade_cmd",
    "slmbench.cli.quantize_cmd",
    "slmbench.cli.humaneval_cmd",
    "slmbench.cli.study_cmd",
    "slmbench.cli.agree_cmd",
    "slmbench.cli.judge_cmd",
]

app = typer.Typer(
    name="slmbench",
    help="Can a small local language model be trusted as an agent? Measure it.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)


@app.callback()
def _root() -> None:
    """Can a small local language model be trusted as an agent? Measure it."""


@app.command()
def version() -> None:
    """Print slmbench's version."""
    from slmbench.core.version import VERSION

    print(VERSION)


for _name in COMMAND_MODULES:
    importlib.import_module(_name).register(app)

err_console = Console(stderr=True)


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point."""
    # a native library that dies (a backend's kernel: SIGSEGV, SIGFPE, SIGABRT...) says where,
    # with the Python stack, instead of ending the process without a word (not possible when
    # stderr is no file, as under a test's capture)
    with contextlib.suppress(ValueError, AttributeError):
        faulthandler.enable()
    try:
        app(args=argv, standalone_mode=True)
    except SlmbenchError as exc:
        # user text (file names like tasks[v2].yaml, hints like slmbench[hf]) is never markup
        err_console.print(f"[bold red]error:[/] {escape(str(exc))}", highlight=False,
                          soft_wrap=True)
        if exc.hint:
            err_console.print(f"[bold]what to do:[/] {escape(exc.hint)}", highlight=False,
                              soft_wrap=True)
        sys.exit(2)


if __name__ == "__main__":  # pragma: no cover
    main()
