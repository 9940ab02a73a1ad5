"""Where slmbench keeps things on disk."""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Sequence
from pathlib import Path


def home() -> Path:
    """Root of slmbench's cache: ``$SLMBENCH_HOME``, else ``$XDG_CACHE_HOME/slmbench``."""
    env = os.environ.get("SLMBENCH_HOME")
    if env:
        return Path(env).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "slmbench"


def models_dir() -> Path:
    """Directory holding pulled GGUF files, one per registry entry."""
    return home() / "models"


def datasets_dir() -> Path:
    """Directory holding Part B datasets built by ``slmbench data prepare``."""
    return home() / "datasets"


def bin_dir() -> Path:
    """Directory holding programs slmbench builds itself (``make llama-server``)."""
    return home() / "bin"


# -- paths as outputs show them -----------------------------------------------------------------

_PATH_ARGUMENT = re.compile(r"^(--[\w-]+=|[A-Za-z][\w-]*:)?(/.*)$")


def shown_path(path: str | os.PathLike[str], *, base: Path | None = None,
               published: bool = False) -> str:
    """How a report, a page or a recorded command shows a local path.

    An absolute path inside ``base`` (default: the current folder, normally the repository)
    is shown relative to it; else one inside the home folder as ``~/...``; else as given.
    A relative path or a name that is not a path comes back unchanged. Nothing is resolved
    through links, so the text stays the one the user typed, minus this machine's prefix.
    ``published`` (pages, reports, exports): a path neither here nor at home is shown by its
    last two parts, so no absolute path of the machine that ran it is published.
    """
    text = os.fspath(path)
    if not os.path.isabs(text):
        return text
    here = Path(text)
    for root, shown in ((base or Path.cwd(), None), (Path.home(), "~")):
        if here.is_relative_to(root):
            rest = here.relative_to(root).as_posix()
            if shown is None:
                return rest
            return shown if rest == "." else f"{shown}/{rest}"
    if published:
        return Path(*here.parts[-2:]).as_posix() if len(here.parts) > 2 else here.name
    return text


def shown_argument(argument: str, *, base: Path | None = None) -> str:
    """One command-line argument with its absolute path shown by :func:`shown_path`: the whole
    argument, or the value of ``--option=/path``, or the target of a ``backend:/path`` spec
    (model targets expand ``~``)."""
    match = _PATH_ARGUMENT.match(argument)
    if match is None:
        return argument
    return (match.group(1) or "") + shown_path(match.group(2), base=base)


def shown_command(argv: Sequence[str], *, base: Path | None = None) -> str:
    """A command line as outputs record it: each argument through :func:`shown_argument`,
    quoted for a POSIX shell, with a leading ``~/`` left unquoted so the shell expands it."""
    return " ".join(_quoted(shown_argument(a, base=base)) for a in argv)


def _quoted(argument: str) -> str:
    if argument == "~" or argument.startswith("~/"):
        rest = argument[2:]
        return "~/" + shlex.quote(rest) if rest else "~"
    return shlex.quote(argument)
