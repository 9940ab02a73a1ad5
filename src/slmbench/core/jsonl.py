"""Gzipped JSON-lines exports: the committed form of stored trials and readings.

:func:`write_jsonl_gz` writes them reproducibly (no timestamp in the gzip header, so the same
records give the same bytes); :func:`read_jsonl_gz` reads them back, a bad file or line being
a ``ConfigError`` that names it.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from slmbench.core.errors import ConfigError
from slmbench.core.tomlfile import first_error

__all__ = ["read_jsonl_gz", "validated", "write_jsonl_gz"]

M = TypeVar("M", bound=BaseModel)


def write_jsonl_gz(path: Path, records: Iterable[str]) -> Path:
    """One JSON document per line, gzipped reproducibly (no timestamp in the header). The file
    appears whole or not at all: it is written beside ``path`` and renamed onto it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    part = path.with_name(path.name + ".part")
    try:
        with open(part, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as out:
            out.write("".join(r + "\n" for r in records).encode("utf-8"))
        part.replace(path)
    finally:
        part.unlink(missing_ok=True)
    return path


def read_jsonl_gz(path: Path, hint: str) -> list[dict[str, Any]]:
    """The JSON documents of a :func:`write_jsonl_gz` file; ConfigError (with ``hint``) naming
    the line if one is not JSON, or the file if it is not gzipped text."""
    out = []
    try:
        with gzip.open(path, "rt", encoding="utf-8") as fh:
            for n, line in enumerate(fh, 1):
                if line.strip():
                    try:
                        out.append(json.loads(line))
                    except json.JSONDecodeError as exc:
                        raise ConfigError(f"{path}: line {n} is not JSON: {exc}", hint) from None
    except (OSError, EOFError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path} is not a gzipped JSON-lines export: {exc}", hint) from None
    return out


def validated(model: type[M], path: Path, rows: Iterable[object], hint: str) -> list[M]:
    """Each row of the export at ``path`` as a ``model``; ConfigError (with ``hint``) naming the
    first line that is not one."""
    out = []
    for n, row in enumerate(rows, 1):
        try:
            out.append(model.model_validate(row))
        except ValidationError as exc:
            raise ConfigError(f"{path}: line {n} is not a {model.__name__}: "
                              f"{first_error(exc)}", hint) from None
    return out
