"""``analysis_summary.json``: an :class:`~slmbench.agents.summary.AnalysisSummary` written
atomically as indented JSON, and read back with its schema version checked."""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import ValidationError

from slmbench.agents.summary import ANALYSIS_SCHEMA_VERSION, AnalysisSummary
from slmbench.core.errors import ConfigError

SUMMARY_NAME = "analysis_summary.json"


def write_summary(summary: AnalysisSummary, path: str | Path) -> Path:
    """Write the summary as indented JSON, atomically."""
    path = Path(path)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(summary.model_dump_json(indent=2), encoding="utf-8")
    tmp.replace(path)
    return path


def read_summary(path: str | Path) -> AnalysisSummary:
    """Read an ``analysis_summary.json``; ConfigError if missing, malformed or another version."""
    path = Path(path)
    hint = "re-run `slmbench analyze RUN` with this slmbench"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise ConfigError(f"no {path}", "run `slmbench analyze RUN` first") from exc
    except (OSError, json.JSONDecodeError) as exc:
        raise ConfigError(f"{path} is not readable JSON: {exc}", hint) from exc
    found = data.get("schema_version") if isinstance(data, dict) else None
    if found != ANALYSIS_SCHEMA_VERSION:
        raise ConfigError(f"{path} has analysis schema {found}; this slmbench reads "
                          f"{ANALYSIS_SCHEMA_VERSION}", hint)
    try:
        return AnalysisSummary.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(f"{path} is not an analysis summary: {exc.errors()[0]['msg']}",
                          hint) from exc
