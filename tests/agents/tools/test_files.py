"""file_manager stays inside the scratch folder."""

import pytest

from slmbench.agents.tools.toolbox import WorldToolbox
from slmbench.agents.world import World


@pytest.mark.parametrize("path", ["/etc/passwd", "../secret.txt", "reports/../../x", "~/x",
                                  "..\\x", "/tmp/slmbench_escape_probe", "scratch/../../x", ""])
@pytest.mark.parametrize("action", ["read", "write", "delete"])
def test_paths_escaping_the_scratch_folder_are_refused(path: str, action: str) -> None:
    box = WorldToolbox(World.create(), tools=["file_manager"])
    before = dict(box.world.files)
    args = {"action": action, "path": path}
    if action == "write":
        args["content"] = "x"
    result = box.call("file_manager", args)
    assert not result.ok
    assert "refused" in result.observation or "invalid path" in result.observation
    assert box.world.files == before


@pytest.mark.parametrize(("given", "stored"), [("notes2.txt", "notes2.txt"),
                                               ("./notes2.txt", "notes2.txt"),
                                               ("scratch/notes2.txt", "notes2.txt"),
                                               ("reports/q1.txt", "reports/q1.txt")])
def test_relative_names_land_in_the_scratch_folder(given: str, stored: str) -> None:
    box = WorldToolbox(World.create(), tools=["file_manager"])
    assert box.call("file_manager", {"action": "write", "path": given, "content": "hi"}).ok
    assert box.world.files[stored] == "hi"


def test_reading_a_missing_file_lists_what_exists() -> None:
    box = WorldToolbox(World.create(), tools=["file_manager"])
    r = box.call("file_manager", {"action": "read", "path": "missing.txt"})
    assert not r.ok
    assert "files: notes.txt, regional_revenue.csv, sales_q1.csv" in r.observation
