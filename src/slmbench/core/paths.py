"""Where slmbench keeps things on disk."""

from __future__ import annotations

import os
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
