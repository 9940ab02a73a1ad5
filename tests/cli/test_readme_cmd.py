"""``slmbench readme``: the README's result entries written again from their reports."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from clirun import CliRunner

from slmbench.report.readme import RESULT_MARKER

ROOT = Path(__file__).resolve().parents[2]


def test_readme_writes_over_a_hand_edit_and_refuses_a_missing_file(
        cli: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    readme = ROOT / "README.md"
    text = readme.read_text(encoding="utf-8")
    for shown in RESULT_MARKER.findall(text):  # each report, and every file beside it
        source = ROOT / shown
        shutil.copytree(source.parent, tmp_path / shown.rsplit("/", 1)[0], dirs_exist_ok=True)
        for page in (source.with_suffix(".md"), source.parent.with_suffix(".md")):
            if page.is_file():
                shutil.copy2(page, tmp_path / page.relative_to(ROOT))
    edited = text.replace("gold item on 22 of 40 items", "gold item on 23 of 40 items")
    assert edited != text
    (tmp_path / "README.md").write_text(edited, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    res = cli("readme")
    assert res.code == 0 and "2 result entries of README.md: written again" in res.out
    assert (tmp_path / "README.md").read_text(encoding="utf-8") == text
    res = cli("readme")
    assert res.code == 0 and "already up to date" in res.out
    (tmp_path / "docs/results/context-probe-qwen2.5-coder-0.5b/probe.json").write_text("{}")
    res = cli("readme")
    assert res.code == 2 and "is not a probe.json report" in res.err
    assert (tmp_path / "README.md").read_text(encoding="utf-8") == text  # nothing written
    missing = cli("readme", "NOPE.md")
    assert missing.code == 2 and "NOPE.md does not exist" in missing.err
