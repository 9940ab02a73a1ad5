"""Reading a user's TOML file (experiments, studies): with the file, line and column.

:func:`load_toml` is the one reader for TOML a user writes. Every problem is a
:class:`~slmbench.core.errors.ConfigError` whose message starts with the file's path
(``FILE:LINE:COLUMN:`` for a syntax error), so a user who keeps several files knows which
one to fix. A schema error found later is written ``FILE: field: what is wrong`` by the
caller, with :func:`first_error`.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from slmbench.core.errors import ConfigError

__all__ = ["first_error", "load_toml"]

# Python 3.11-3.13 put the place in the message only: "Unclosed array (at line 3, column 1)"
_AT = re.compile(r"^(?P<msg>.*?) \(at (?:line (?P<line>\d+), column (?P<col>\d+)|"
                 r"(?P<end>end of document))\)$")


def _where(path: Path, text: str, exc: tomllib.TOMLDecodeError) -> str:
    """``FILE:LINE:COLUMN: problem`` (the end of the document has a place too)."""
    found = _AT.match(str(exc))
    if found is None:
        return f"{path}: {exc}"
    if found["end"]:
        lines = text.split("\n")
        line, col = len(lines), len(lines[-1]) + 1
    else:
        line, col = int(found["line"]), int(found["col"])
    return f"{path}:{line}:{col}: {found['msg']}"


def load_toml(path: Path, *, what: str, hint: str) -> dict[str, Any]:
    """The table in ``path``, or a one-line ConfigError (with ``hint``) naming the file.

    ``what`` names the kind of file in the not-found message (``experiment file``).
    """
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{what} {path} does not exist", hint) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read it: {exc}", hint) from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{_where(path, text, exc)} (not valid TOML)", hint) from None
    except RecursionError:  # tomllib parses nested arrays and tables recursively
        raise ConfigError(f"{path}: nested too deeply (not valid TOML here)", hint) from None


def first_error(exc: ValidationError) -> str:
    """``field.path: what is wrong (got VALUE)`` for a validation error's first error, and how
    many more; the caller puts the file in front (``FILE: field: what is wrong``)."""
    err = exc.errors()[0]
    where = ".".join(str(p) for p in err["loc"]) or "(top level)"
    got = err.get("input")
    shown = f" (got {got!r})" if isinstance(got, str | int | float) and err["loc"] else ""
    more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
    return f"{where}: {err['msg'].removeprefix('Value error, ')}{shown}{more}"
