"""Build small but valid wheels in tests, for code that reads or pip-downloads wheels."""

from __future__ import annotations

import zipfile
from collections.abc import Mapping
from pathlib import Path


def build_wheel(folder: Path, dist: str, version: str,
                members: Mapping[str, str | bytes]) -> Path:
    """Write ``dist==version`` as a pure-Python wheel holding ``members``; return its path."""
    mod = dist.replace("-", "_")
    info = f"{mod}-{version}.dist-info"
    path = folder / f"{mod}-{version}-py3-none-any.whl"
    files: dict[str, str | bytes] = {
        **members,
        f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n",
        f"{info}/WHEEL": "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\n"
                         "Tag: py3-none-any\n",
    }
    record = "".join(f"{name},,\n" for name in files) + f"{info}/RECORD,,\n"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in files.items():
            zf.writestr(name, data)
        zf.writestr(f"{info}/RECORD", record)
    return path
