"""What an Ollama model can do is read from the server (``/api/show``'s ``capabilities``), and
a run that asks for more stops at the preflight: one line and a hint, exit 2, no run folder.

The server is the failfast tests' loopback stand-in; ``/api/show`` answers with recorded
bodies from ``tests/models/fixtures/ollama/`` (no Ollama server is installable here).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from fake_servers import ReferenceServer

from slmbench.core.errors import ConfigError
from slmbench.models.readiness import check_ready

SHOWN = Path(__file__).parents[2] / "models" / "fixtures" / "ollama"
# tags the registry does not know, so only the server can say what they do
SHOWS = {"thinker:4b": "show_qwen3.json", "plain:7b": "show_llama2.json"}


@pytest.fixture
def server() -> Iterator[ReferenceServer]:
    shows = {tag: json.loads((SHOWN / name).read_text()) for tag, name in SHOWS.items()}
    running = ReferenceServer(models=tuple(SHOWS), shows=shows).start()
    try:
        yield running
    finally:
        running.stop()


def test_a_native_run_of_a_model_without_tools_stops_before_the_run_folder(
        server: ReferenceServer, tmp_path: Path) -> None:
    out = tmp_path / "run"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    result = subprocess.run(
        [sys.executable, "-m", "slmbench.cli.main", "run", "-m", f"ollama:plain:7b@{server.url}",
         "--scaffold", "native", "--task", "IR-1", "--out", str(out)],
        capture_output=True, text=True, env=env, timeout=120, check=False)
    assert result.returncode == 2, result.stderr
    problem, hint = result.stderr.strip().splitlines()
    assert "has no native tool calling (the server lists: completion)" in problem
    assert hint.startswith("what to do:") and "--scaffold react" in hint
    assert not out.exists()
    assert server.shown == ["plain:7b"]


def test_think_on_needs_a_model_that_thinks(server: ReferenceServer) -> None:
    with pytest.raises(ConfigError, match="does not think") as err:
        check_ready(f"ollama:plain:7b@{server.url}?think=on")
    assert "think=on" in err.value.hint and len(str(err.value).splitlines()) == 1
    check_ready(f"ollama:thinker:4b@{server.url}?think=on")  # "thinking" is listed
    check_ready(f"ollama:thinker:4b@{server.url}", native_tools=True)  # and "tools"
    check_ready(f"ollama:plain:7b@{server.url}?think=off")  # nothing asked: not shown
    assert server.shown == ["plain:7b", "thinker:4b", "thinker:4b"]
