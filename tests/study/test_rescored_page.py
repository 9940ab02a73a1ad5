"""A study page lists, under "What changed", the stored trials a rescoring moved (its exports'
``rescored.json``, written by ``slmbench rescore``)."""

from __future__ import annotations

import gzip
from pathlib import Path

from rich.console import Console

from slmbench.agents.records import Outcome, Trial
from slmbench.agents.rescoring import rescore_exports
from slmbench.core.jsonl import write_jsonl_gz
from slmbench.study import load_study, run_part_a, write_page

# IR-1 answered with the search result's JSON: a dump, not an answer
SCRIPT = """\
rules:
  - match: "4,612"
    reply: 'Final Answer: {"title": "Mount Varrick", "text": "Mount Varrick is 4,612 metres"}'
  - match: "(?i)varrick"
    reply: '{"name": "web_search", "arguments": {"query": "Mount Varrick height"}}'
default: "Final Answer: I don't know"
"""


def _study(tmp: Path) -> Path:
    (tmp / "script.yaml").write_text(SCRIPT, encoding="utf-8")
    path = tmp / "study.toml"
    path.write_text(f"""\
name = "rescored study"
out = "runs/r"
page = "docs/r.md"

[part_a]
models = ["scripted:{tmp / 'script.yaml'}"]
suites = ["capability"]
tasks = ["IR-1"]
temperatures = [0.0]
repeats = 1
""", encoding="utf-8")
    return path


def test_the_page_lists_each_trial_the_rescoring_moved_with_its_rule(tmp_path: Path) -> None:
    study = load_study(_study(tmp_path), base=tmp_path)
    run_part_a(study, None, Console(quiet=True))
    page = write_page(study, study_file=tmp_path / "study.toml", command="c")
    assert "What changed: stored trials" not in page.read_text(encoding="utf-8")  # not rescored

    # the page's export as a scorer without the dump rule left it: the dump a success
    export = tmp_path / "docs" / "r" / "trials.jsonl.gz"
    [line] = gzip.decompress(export.read_bytes()).decode().splitlines()
    trial = Trial.model_validate_json(line)
    assert trial.outcome == Outcome.DUMPED and trial.score is not None
    old = trial.model_copy(update={"outcome": Outcome.SUCCESS, "score": trial.score.model_copy(
        update={"reason": trial.score.reason.split("; dumped:")[0]})})
    write_jsonl_gz(export, [old.model_dump_json()])
    [done] = rescore_exports([export.parent])
    assert len(done.moved) == 1

    text = write_page(study, study_file=tmp_path / "study.toml", command="c").read_text(
        encoding="utf-8")
    assert "## What changed: stored trials the scoring moved" in text
    assert "1 trial moved:" in text
    k = trial.key
    assert (f"| {tmp_path / 'script.yaml'} | IR-1 | base | 0 | {k.seed} | 0 | 0 | success | "
            "dumped | rule: dumped answers (issue #59); ") in text
    assert "dumped: the answer is a JSON object |" in text
