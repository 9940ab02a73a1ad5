"""The README's result entries: generated from the reports committed beside the pages."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from slmbench.core.errors import ConfigError
from slmbench.report.readme import RESULT_MARKER, refresh_results

ROOT = Path(__file__).resolve().parents[2]
COMMAND = "slmbench readme README.md"


def test_the_committed_readme_says_what_its_reports_say() -> None:
    # a number typed over, or a report changed without `slmbench readme`, fails here
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    again, sources = refresh_results(text, ROOT, command=COMMAND)
    assert again == text
    # the eligibility-embedded entry is retired (issue #38): Part B is the reference study's
    assert {Path(s).name for s in sources} == {"cascade.json", "probe.json"}


def test_a_hand_edit_between_the_markers_is_written_over() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "the gold item on 22 of 40 items" in text  # from cascade.json's per-item rows
    edited = text.replace("the gold item on 22 of 40 items", "the gold item on 39 of 40 items")
    again, _ = refresh_results(edited, ROOT, command=COMMAND)
    assert again == text


def _copy(tmp: Path, names: list[str]) -> Path:
    for name in names:
        target = tmp / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, target)
    return tmp


def test_an_entry_is_made_from_its_report_and_links_its_page(tmp_path: Path) -> None:
    folder = "docs/results/reference-study"
    base = _copy(tmp_path, [f"{folder}/eligibility.json", f"{folder}/routes.json",
                            f"{folder}.md"])
    shown = f"{folder}/eligibility.json"
    text = f"intro\n<!-- result:{shown} -->\nold\n<!-- /result:{shown} -->\nend\n"
    again, sources = refresh_results(text, base, command=COMMAND)
    assert sources == [shown] and again.startswith("intro\n") and again.endswith("\nend\n")
    assert f"([`{folder}.md`]({folder}.md);" in again and "old" not in again
    assert "What to deploy: approval: the baseline (learned);" in again
    assert RESULT_MARKER.findall(again) == [shown]


@pytest.mark.parametrize(("entry", "message"), [
    ("<!-- result:docs/x/cascade.json -->\n<!-- /result:docs/x/cascade.json -->",
     "docs/x/cascade.json does not exist"),
    ("<!-- result:docs/x/cascade.json -->\nno end", "has no closing"),
    ("<!-- result:docs/x/notes.json -->\n<!-- /result:docs/x/notes.json -->",
     "no README entry is made from a notes.json"),
])
def test_a_broken_entry_is_a_one_line_error(tmp_path: Path, entry: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        refresh_results(f"a\n{entry}\nb\n", tmp_path, command=COMMAND)
