"""Where a study page's numbers were made: the slmbench version and git commit, Python and the
runtimes' versions (:func:`versions`), and the sha256 of each model file (:func:`model_hashes`)."""

from __future__ import annotations

import platform
import subprocess
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from slmbench.core.errors import ConfigError, ModelNotFoundError
from slmbench.core.sources import sha256_file
from slmbench.core.version import VERSION
from slmbench.models.catalog import PypiSource, load_registry, resolve_target
from slmbench.models.pull import read_record
from slmbench.models.spec import parse_spec


def versions() -> dict[str, str]:
    """slmbench (and its git commit when run from a checkout), Python, llama-cpp-python."""

    out = {"slmbench": VERSION}
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                                text=True, timeout=10, cwd=Path(__file__).parent)
        if commit.returncode == 0 and commit.stdout.strip():
            out["commit"] = commit.stdout.strip()
    except (OSError, subprocess.SubprocessError):
        pass
    out["Python"] = platform.python_version()
    for dist in ("llama-cpp-python", "transformers", "torch"):
        try:
            out[dist] = version(dist)
        except PackageNotFoundError:
            continue
    return out


def model_hashes(specs: list[str]) -> dict[str, str]:
    """sha256 of each llama.cpp model file: from its pull record, else hashed now, else (no
    file here, e.g. a fresh clone regenerating a page) the sha256 its registry entry pins."""
    out: dict[str, str] = {}
    for spec in specs:
        parsed = parse_spec(spec)
        if parsed.backend != "llamacpp":
            continue
        record = None if parsed.target.endswith(".gguf") else read_record(parsed.target)
        if record is not None:
            out[f"{parsed.target}.gguf"] = record.sha256
            continue
        try:
            path = resolve_target(parsed.target)
        except (ConfigError, ModelNotFoundError):
            entry = load_registry().find(parsed.target)
            if entry is not None and isinstance(entry.source, PypiSource) and entry.source.sha256:
                out[f"{parsed.target}.gguf"] = entry.source.sha256
            continue  # not pulled and not pinned: nothing to show
        out[path.name] = sha256_file(path)
    return out
