"""Paths as outputs show them: no machine prefix in a report, and a recorded command reruns."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from slmbench.core.paths import shown_argument, shown_command, shown_path


@pytest.fixture
def places(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """A home folder and, outside it, a repository that is the current folder."""
    user, repo = tmp_path / "user", tmp_path / "repo"
    user.mkdir()
    repo.mkdir()
    monkeypatch.setenv("HOME", str(user))
    monkeypatch.chdir(repo)
    return user, repo


def test_a_path_in_the_current_folder_is_relative_and_one_in_home_starts_with_tilde(
        places: tuple[Path, Path]) -> None:
    user, repo = places
    assert shown_path(repo / "runs" / "q05") == "runs/q05"
    assert shown_path(str(user / ".cache" / "m.gguf")) == "~/.cache/m.gguf"
    assert shown_path(user) == "~"
    assert shown_path(repo) == "."


def test_the_current_folder_wins_over_home_when_it_lies_inside_home(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / "repo").mkdir()
    monkeypatch.chdir(tmp_path / "repo")
    assert shown_path(tmp_path / "repo" / "out") == "out"
    assert shown_path(tmp_path / "other") == "~/other"


def test_other_paths_and_names_are_left_as_given(places: tuple[Path, Path]) -> None:
    _, repo = places
    assert shown_path("/srv/models/m.gguf") == "/srv/models/m.gguf"  # neither here nor home
    assert shown_path("runs/x") == "runs/x"
    assert shown_path("qwen2.5-coder-0.5b") == "qwen2.5-coder-0.5b"
    # a sibling whose name merely starts like the repository is not inside it
    assert shown_path(f"{repo}-old/x") == f"{repo}-old/x"
    assert shown_path(repo / "runs", base=repo / "runs") == "."


def test_arguments_show_their_path_also_inside_an_option_or_a_model_spec(
        places: tuple[Path, Path]) -> None:
    user, repo = places
    assert shown_argument(f"llamacpp:{user}/m.gguf") == "llamacpp:~/m.gguf"
    assert shown_argument(f"--out={repo}/q") == "--out=q"
    assert shown_argument("llamacpp:qwen2.5-coder-0.5b?n_ctx=4096") == (
        "llamacpp:qwen2.5-coder-0.5b?n_ctx=4096")
    assert shown_argument("--limit") == "--limit"


def test_a_shown_command_has_no_machine_prefix_and_the_shell_expands_its_tilde(
        places: tuple[Path, Path]) -> None:
    user, repo = places
    argv = ["slmbench", "quantize", "-m", f"{user}/.cache/m o.gguf", "--out", f"{repo}/runs/q",
            "--note", "it's"]
    line = shown_command(argv)
    assert str(user) not in line and str(repo) not in line
    assert line.startswith("slmbench quantize -m ~/")  # unquoted: a shell expands it
    words = shlex.split(line)
    assert Path(words[3]).expanduser() == user / ".cache" / "m o.gguf"
    assert (repo / words[5]).resolve() == (repo / "runs" / "q").resolve()
    assert words[-1] == "it's"
