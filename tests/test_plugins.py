"""Backends and micro-tasks from installed packages (entry points, ``slmbench.core.plugins``).

``tests/fixtures/slmbench-plugin-example`` is a real package: pip installs it into a
temporary folder (never the project's environment), which is put on ``sys.path`` so
``importlib.metadata`` sees its ``dist-info``. The clash and import-failure cases need only
what discovery reads, a ``dist-info`` written by hand. Every test forgets what was discovered
before and after, so no other test sees a plugin.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from slmbench.cli.main import main
from slmbench.core.errors import ConfigError, ModelSpecError, PluginError
from slmbench.microtasks import tasks
from slmbench.microtasks.matrix import MatrixRun
from slmbench.models.factory import load_model
from slmbench.models.spec import backend_names, parse_spec

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "tests" / "fixtures" / "slmbench-plugin-example"
BUILT_INS = ("approval", "memory", "ranking", "tools")
Show = Callable[[Path], None]  # puts a folder of installed packages on sys.path


@pytest.fixture(scope="module")
def example_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The example plugin pip-installed (offline, no dependencies) into a temporary folder;
    built from a copy, so the source tree gets no build/ or egg-info."""
    tmp = tmp_path_factory.mktemp("plugin")
    shutil.copytree(EXAMPLE, tmp / "src")
    done = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps",
                           "--no-build-isolation", "--no-index", "--target", str(tmp / "site"),
                           str(tmp / "src")], capture_output=True, text=True)
    assert done.returncode == 0, f"pip (needs setuptools here) failed: {done.stderr}"
    return tmp / "site"


def _forget() -> None:
    tasks.forget_plugins()  # also forgets the entry points read, backends' included
    for name in [m for m in sys.modules if m.split(".")[0] in {"slmbench_plugin_example",
                                                              "rogue"}]:
        del sys.modules[name]


@pytest.fixture
def visible(monkeypatch: pytest.MonkeyPatch) -> Iterator[Show]:
    """Put a folder of installed packages on ``sys.path``, as if installed; all forgotten
    after the test."""
    def show(folder: Path) -> None:
        monkeypatch.syspath_prepend(str(folder))
        _forget()

    _forget()
    yield show
    _forget()


@pytest.fixture
def example(example_site: Path, visible: Show) -> None:
    visible(example_site)


def declare(folder: Path, dist: str, entry_points: str) -> Path:
    """A hand-made installed distribution ``dist`` declaring ``entry_points`` (INI text)."""
    info = folder / f"{dist}-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(entry_points)
    return folder


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    with pytest.raises(SystemExit) as done:
        main(list(argv))
    captured = capsys.readouterr()
    return int(done.value.code or 0), captured.out, captured.err


def test_an_installed_backend_is_named_by_its_spec_and_generates(example: None) -> None:
    assert backend_names()[-1] == "parrot"
    model = load_model("parrot:calm")
    reply = model.generate([{"role": "user", "content": "SHOUT BACK AT ME"}])
    assert (model.spec, reply.text, reply.finish_reason) == ("parrot:calm", "calm", "stop")
    with pytest.raises(ModelSpecError, match="unknown option"):
        load_model("parrot:calm?volume=11")  # the plugin's own from_spec checks its options


def test_without_the_package_the_backend_and_task_are_unknown(visible: Show) -> None:
    with pytest.raises(ModelSpecError, match="unknown model backend 'parrot'"):
        parse_spec("parrot:calm")
    # (a user's task file registered by an earlier test in this process may sit after them)
    assert tasks.names()[:4] == BUILT_INS and "shouting" not in tasks.names()
    with pytest.raises(ConfigError, match="unknown micro-task 'shouting'"):
        tasks.get("shouting")


def test_an_installed_micro_task_runs_through_eligibility(
        example: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    names = tasks.names()
    assert names[:4] == BUILT_INS and names[-1] == "shouting"  # after the built-ins
    monkeypatch.setenv("SLMBENCH_HOME", str(tmp_path / "home"))  # no dataset: the task ships it
    script = tmp_path / "caps.json"  # a scripted model that says shout for capitals
    script.write_text(json.dumps({"rules": [{"match": r"(?m)^Message: [A-Z !]+$",
                                             "reply": "shout"}], "default": "calm"}))
    out = tmp_path / "run"
    code, stdout, err = run_cli(capsys, "eligibility", "-m", "parrot:calm", "-m",
                                f"scripted:{script}", "-t", "shouting", "--out", str(out))
    assert code == 0, stdout + err
    run = MatrixRun.model_validate_json((out / "eligibility.json").read_text())
    cells = {c.model: c for c in run.cells if c.reading == "generation"}
    assert run.tasks == ["shouting"] and set(cells) == {"parrot:calm", f"scripted:{script}"}
    parrot, caps = cells["parrot:calm"], cells[f"scripted:{script}"]
    assert parrot.n_items == caps.n_items == 24  # the eval items the package ships
    # half the eval items are calm; a model that always says so scores τ and is not eligible
    # (24 items of one answer are too few to show it constant: that takes over a hundred)
    assert parrot.score.estimate == 0.5 and parrot.top_share == 1.0 and not parrot.eligible
    assert not parrot.constant and parrot.verdict != "eligible"
    # the task's own baseline (a message ending in "!" is shouted) gets half right; τ, the best
    # reference, is cleared by 24 of 24
    assert caps.baseline_scores["rules"] == 0.5 and caps.tau == max(caps.baseline_scores.values())
    assert caps.score.estimate == 1.0 and caps.eligible


@pytest.mark.parametrize(("group", "entry", "consult"), [
    ("slmbench.backends", "scripted = rogue:Model", lambda: parse_spec("scripted:echo")),
    ("slmbench.microtasks", "approval = rogue:TASK", tasks.names),
])
def test_a_plugin_cannot_take_a_built_in_name(
        visible: Show, tmp_path: Path, group: str, entry: str,
        consult: Callable[[], object]) -> None:
    visible(declare(tmp_path, "rogue", f"[{group}]\n{entry}\n"))
    with pytest.raises(PluginError, match=r"plugin '\w+' of rogue claims a name a built-in") \
            as err:
        consult()
    assert "uninstall rogue" in err.value.hint


def test_two_packages_cannot_claim_one_name(example: None, visible: Show,
                                            tmp_path: Path) -> None:
    visible(declare(tmp_path, "rogue", "[slmbench.backends]\nparrot = rogue:Model\n"))
    with pytest.raises(PluginError, match=r"'parrot' of .* claims a name .* already has"):
        load_model("parrot:calm")


@pytest.mark.parametrize(("group", "entry", "consult", "says"), [
    ("slmbench.backends", "broken = rogue_missing:Model",
     lambda: load_model("broken:x"), "cannot load: ModuleNotFoundError"),
    ("slmbench.microtasks", "broken = rogue_missing:TASK", tasks.names,
     "cannot load: ModuleNotFoundError"),
    ("slmbench.microtasks", "broken = slmbench.microtasks.tasks.approval:TASK", tasks.names,
     "is not a MicroTask named 'broken'"),
    ("slmbench.backends", "broken = slmbench.microtasks.tasks.approval:TASK",
     lambda: load_model("broken:x"), "is not a class with a from_spec"),
])
def test_a_plugin_that_cannot_load_is_a_one_line_error(
        visible: Show, tmp_path: Path, group: str, entry: str,
        consult: Callable[[], object], says: str) -> None:
    visible(declare(tmp_path, "rogue", f"[{group}]\n{entry}\n"))
    with pytest.raises(PluginError, match=rf"the [\w-]+ plugin 'broken' \(.+\) of rogue {says}") \
            as err:
        consult()
    assert "\n" not in str(err.value) and "rogue" in err.value.hint


def test_the_cli_says_a_broken_plugin_in_one_line(
        visible: Show, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    visible(declare(tmp_path / "site", "rogue", "[slmbench.backends]\nbroken = rogue_x:M\n"))
    code, _, err = run_cli(capsys, "eligibility", "-m", "broken:x", "-t", "approval",
                           "--out", str(tmp_path / "run"))
    assert code == 2 and not (tmp_path / "run").exists()
    assert err.splitlines()[0].startswith("error: the backend plugin 'broken' (rogue_x:M) of "
                                          "rogue cannot load: ModuleNotFoundError")


def test_the_doc_cites_the_example_entry_points() -> None:
    """docs/extending.md shows the example's entry-point tables as they are in its
    pyproject.toml."""
    doc = (ROOT / "docs" / "extending.md").read_text(encoding="utf-8")
    shown = re.findall(r"```toml\n(.*?)```", doc, flags=re.S)
    pyproject = (EXAMPLE / "pyproject.toml").read_text(encoding="utf-8")
    tables = pyproject[pyproject.index("[project.entry-points"):].split("\n[tool.")[0]
    assert tables.strip() in [block.strip() for block in shown]
