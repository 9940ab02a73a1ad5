"""The console every command prints tables through."""

from __future__ import annotations

import shlex
import sys

from rich.console import Console

MIN_WIDTH = 160


def wide_console(min_width: int = MIN_WIDTH) -> Console:
    """A console at least ``min_width`` columns wide.

    Piped or logged output (no terminal) would otherwise be 80 columns, and rich squeezes
    table columns to nothing to fit: the spec strings of ``slmbench models`` vanished.
    """
    console = Console()
    return console if console.width >= min_width else Console(width=min_width)


def command_line(default: str) -> str:
    """The command as the user typed it (shown on pages), or ``default`` without arguments."""
    return "slmbench " + shlex.join(sys.argv[1:]) if sys.argv[1:] else default
