"""``file_manager``: read / write / list / delete inside the world's scratch folder only.

The scratch folder is the in-memory ``world.files`` mapping; a path is a name
relative to it (``notes.txt``, ``reports/q1.txt``; a leading ``./`` or
``scratch/`` is dropped). Absolute paths, ``..`` parts, ``~`` and backslashes
are refused: nothing outside the folder can be named, let alone touched.
"""

from __future__ import annotations

from pathlib import PurePosixPath
from typing import Any, Literal

from pydantic import Field

from slmbench.agents.tools.base import ToolError
from slmbench.agents.tools.common import StrictParams, WorldTool
from slmbench.agents.world import World

MAX_FILE_CHARS = 200_000


def scratch_name(path: str) -> str:
    """The scratch-folder name for ``path``, or ToolError when it would escape the folder."""
    raw = path.strip()
    if not raw or "\x00" in raw or "\\" in raw or raw.startswith("~"):
        raise ToolError(f"invalid path {path!r}: use a file name inside the scratch folder")
    p = PurePosixPath(raw)
    if p.is_absolute() or ".." in p.parts:
        raise ToolError(f"refused: {path!r} is outside the scratch folder; "
                        "only relative names inside it are allowed")
    parts = [x for x in p.parts if x != "."]
    if parts and parts[0] == "scratch":
        parts = parts[1:]
    if not parts:
        raise ToolError(f"invalid path {path!r}: name a file, not the folder")
    return "/".join(parts)


class FileManager(WorldTool, name="file_manager"):
    """Files in your scratch folder: action=list, read (path), write (path, content; replaces the
    file) or delete (path). Paths outside the scratch folder are refused."""

    class Params(StrictParams):
        action: Literal["read", "write", "list", "delete"]
        path: str | None = Field(default=None, description="file name inside the scratch folder")
        content: str | None = Field(default=None, max_length=MAX_FILE_CHARS,
                                    description="write: the full new text of the file")

    def run(self, world: World, params: Params) -> dict[str, Any]:
        if params.action == "list":
            return {"files": [{"name": n, "chars": len(t)} for n, t in sorted(world.files.items())]}
        if params.path is None:
            raise ToolError(f"{params.action} needs path")
        name = scratch_name(params.path)
        if params.action == "write":
            if params.content is None:
                raise ToolError("write needs content")
            existed = name in world.files
            world.files[name] = params.content
            return {"written": name, "chars": len(params.content), "replaced": existed}
        if name not in world.files:
            raise ToolError(f"no file {name!r} in the scratch folder; "
                            f"files: {', '.join(sorted(world.files)) or 'none'}")
        if params.action == "read":
            return {"name": name, "content": world.files[name]}
        del world.files[name]
        return {"deleted": name}
