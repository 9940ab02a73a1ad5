"""``slmbench agree``: a study of one model through several runtimes, from the file it writes
to the page, regenerated from the exports on a fresh checkout."""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path

import pytest
from rich.console import Console

from slmbench.agents.tasks.loader import load_suite
from slmbench.agents.tasks.reference import reference_replies
from slmbench.cli.main import main
from slmbench.core.errors import ConfigError
from slmbench.study import (
    AgreementBlock,
    Study,
    import_exports,
    load_study,
    run_part_a,
    run_study,
    write_agreement_file,
)
from slmbench.study.agree import agreement_facts
from test_study import SCRIPT, write_approval


def _specs(tmp: Path) -> list[str]:
    for name in ("a", "b"):
        (tmp / f"{name}.yaml").write_text(SCRIPT, encoding="utf-8")
    return [f"scripted:{tmp / 'a.yaml'}", f"scripted:{tmp / 'b.yaml'}"]


def test_the_agreement_table_makes_the_blocks_and_each_runtimes_floor() -> None:
    study = Study.model_validate({"name": "q", "out": "o", "agreement": {"specs": [
        "llamacpp:m", "llamaserver:m", "hf:m?dtype=fp32"]}})
    (a,) = study.part_a
    assert a.models == ["llamacpp:m", "llamaserver:m", "hf:m?dtype=fp32",
                        "llamacpp:m?chunking=prompt", "llamaserver:m?slots=1"]
    assert (a.temperatures, a.repeats, a.cache, a.suites) == ([0.0], 1, "off", ["capability"])
    (b,) = study.part_b
    assert b.models == ["llamacpp:m", "llamaserver:m", "hf:m?dtype=fp32",
                        "llamacpp:m?chunking=prompt"]  # a server reads Part B one at a time
    assert (b.tasks, b.prompts, b.limit, b.sequential) == (["approval", "tools"], ["p0"], 200,
                                                           False)
    with pytest.raises(ValueError, match="blocks follow from the agreement"):
        Study.model_validate({"name": "q", "out": "o", "part_b": {"models": ["scripted:echo"]},
                              "agreement": {"specs": ["llamacpp:m", "hf:m"]}})


def test_agree_writes_its_study_runs_it_and_the_page_regenerates_from_the_exports(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
        ) -> None:
    monkeypatch.chdir(tmp_path)
    write_approval(tmp_path / "data")
    specs = _specs(tmp_path)
    page = tmp_path / "docs" / "agreement.md"
    # the CLI has no --source: write the study file the way agree does, with the fixture data
    block = AgreementBlock(specs=specs, part_a_tasks=["IR-1"], tasks=["approval"], limit=8,
                           source=tmp_path / "data")
    file = write_agreement_file(tmp_path / "agreement.toml", name="scripted", out=Path("runs/q"),
                                page=page, block=block)
    done = run_study(load_study(file), file)
    assert done.page == page
    text = page.read_text(encoding="utf-8")
    assert "the backend does not expose its prompt" in text  # scripted renders no template
    # one task: neither runtime can solve 3, so the pair is at the floor (issue #60)
    assert "| IR-1" not in text and "1 (1 tasks)" in text
    assert "both at the floor: not comparable on success" in text
    assert "| approval | p0 | 8 | 8/8 = 100.0" in text
    assets = page.parent / page.stem
    facts = json.loads((assets / "agreement.json").read_text(encoding="utf-8"))
    assert facts["specs"] == specs and facts["part_a"][0]["pairs"] == 1
    assert {p.name for p in assets.iterdir()} >= {"agreement.json", "templates.json",
                                                  "trials.jsonl.gz", "readings.jsonl.gz"}
    # a fresh checkout: the stores rebuilt from the exports, the page from them, no model
    fresh = load_study(file).rooted(tmp_path / "fresh")
    import_exports(assets, fresh)
    run_study(fresh, file, page_only=True)
    again = page.read_text(encoding="utf-8")
    assert _without_made(again) == _without_made(text)
    # the README entry, like every study's: between its markers, refused without them
    readme = tmp_path / "README.md"
    readme.write_text("# r\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="study:agreement"):
        run_study(fresh, file, page_only=True, readme=readme)
    assert readme.read_text(encoding="utf-8") == "# r\n"  # nothing half-written
    readme.write_text("# r\n<!-- study:agreement -->\n<!-- /study:agreement -->\nend\n",
                      encoding="utf-8")
    run_study(fresh, file, page_only=True, readme=readme)
    entry = readme.read_text(encoding="utf-8")
    assert entry.startswith("# r\n<!-- study:agreement -->\n- **Backend agreement: scripted**")
    assert entry.endswith("<!-- /study:agreement -->\nend\n")
    assert "(docs/agreement.md)" in entry and "--page-only --readme README.md" in entry
    assert (f"`{specs[0]}` against `{specs[1]}`: both at the floor: not comparable on "
            "success") in entry
    assert "Part B approval · p0 (8 items)" in entry and "decisions agree on 8/8" in entry
    # the same command again writes the same file; another study at that path is refused
    assert write_agreement_file(file, name="scripted", out=Path("runs/q"), page=page,
                                block=block) == file
    with pytest.raises(ConfigError, match="holds another study"):
        write_agreement_file(file, name="other", out=Path("runs/q"), page=page, block=block)


def _without_made(page: str) -> str:
    return "\n".join(line for line in page.splitlines() if not line.startswith("Made "))


def test_the_command_needs_two_runtimes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as exit_:
        main(["agree", "llamacpp:qwen2.5-coder-0.5b"])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert "specs" in err and "at least 2" in err and "llamaserver:NAME" in err
    assert not (tmp_path / "runs").exists()  # nothing half-written


def test_a_runtime_with_part_of_its_grid_stored_is_not_compared_yet(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A comparison over the tasks that happened to run first would be over another sample
    than the finished grid's: until every planned trial of every runtime is stored, Part A
    shows no pair, and the page says why."""
    monkeypatch.chdir(tmp_path)
    write_approval(tmp_path / "data")
    specs = _specs(tmp_path)
    block = AgreementBlock(specs=specs, part_a_tasks=["IR-1", "IR-2"], tasks=["approval"],
                           limit=4, source=tmp_path / "data")
    file = write_agreement_file(tmp_path / "agreement.toml", name="s", out=Path("runs/q"),
                                page=tmp_path / "agreement.md", block=block)
    study = load_study(file)
    run_part_a(study, None, Console(quiet=True))
    assert agreement_facts(study, command="c").part_a  # both grids stored: compared
    with sqlite3.connect(study.part_a_dir(0) / "run.sqlite") as conn:
        conn.execute("DELETE FROM trials WHERE model = ? AND task = 'IR-2'", (specs[1],))
    facts = agreement_facts(study, command="c")
    assert facts.part_a == [] and any("Part A not shown" in n for n in facts.notes)


#: a ChatML-like template: the one the script below was "trained" on
CHATML = ("{% for m in messages %}{{ '<|im_start|>' + m.role + '\\n' + m.content + "
          "'<|im_end|>\\n' }}{% endfor %}"
          "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}")


def _solver_script(tasks: int) -> dict[str, object]:
    """A script that solves the first ``tasks`` curated capability tasks (each one's reference
    solution, a step per rule keyed on the task's prompt and the reply before it) only when its
    prompt is rendered by :data:`CHATML`: every rule ends at ChatML's generation prompt, so
    under another template nothing matches and every answer is "I don't know"."""
    rules: list[dict[str, str]] = []
    solved = 0
    for task in load_suite("capability"):
        replies = reference_replies(task)
        if solved == tasks or len(set(replies)) < len(replies):
            continue
        solved += 1
        for j in reversed(range(len(replies))):
            after = "" if j == 0 else ".*" + re.escape(replies[j - 1])
            rules.append({"match": f"(?s){re.escape(task.instruction)}{after}.*"
                                   f"{re.escape('<|im_start|>assistant')}\\n\\Z",
                          "reply": replies[j]})
    assert solved == tasks
    return {"rules": rules, "default": "Final Answer: I don't know"}


def test_a_broken_chat_template_is_named_and_its_runtime_called_different_while_two_identical_runtimes_are_equivalent(  # noqa: E501
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Three scripted runtimes of one script over the 31 capability tasks: two behind the
    template it was written for (identical), one fed the built-in ``plain`` template instead
    (it solves none of the 8 tasks the others solve: different). The page shows the template
    difference first. The identical pair's exact TOST (p 0.038 at 31 tasks) is no claim after
    Holm over the three pairs; compared alone, the two are equivalent within ±10 points. Made
    to differ (the second runtime broken too), a pair is no longer called equivalent."""
    monkeypatch.chdir(tmp_path)
    write_approval(tmp_path / "data")
    script, template = tmp_path / "solver.json", tmp_path / "chatml.jinja"
    script.write_text(json.dumps(_solver_script(8)), encoding="utf-8")
    template.write_text(CHATML, encoding="utf-8")
    good = f"scripted:{script}?chat_format={template}"
    twin = f"scripted:{script}?chat_format={template}&delay=0"  # another label, same runtime
    broken = f"scripted:{script}?chat_format=plain"

    def agree(specs: list[str], name: str) -> str:
        page = tmp_path / f"{name}.md"
        block = AgreementBlock(specs=specs, tasks=["approval"], limit=4,
                               source=tmp_path / "data")
        file = write_agreement_file(tmp_path / f"{name}.toml", name=name,
                                    out=Path(f"runs/{name}"), page=page, block=block)
        run_study(load_study(file), file)
        return page.read_text(encoding="utf-8")

    text = agree([good, twin, broken], "three")
    templates = text[text.index("## The chat template"):text.index("## Part A")]
    assert f"`{twin}`: the same text as `{good}`" in templates
    assert f"`{broken}`: **differs** from `{good}`" in templates
    assert "\n-<|im_start|>user\n" in templates and "\n+User:\n" in templates  # the diff
    part_a = text[text.index("## Part A"):text.index("## Part B")]
    rows = {(r.split(" | ")[0][3:-1], r.split(" | ")[1][1:-1]): r
            for r in part_a.splitlines() if r.startswith("| `")}
    assert "| 0.038, Holm 0.114 [-9.2, 9.2] |" in rows[(good, twin)]  # exact TOST, 31 tasks
    assert rows[(good, twin)].endswith("| cannot tell at this n |")
    for pair in ((good, broken), (twin, broken)):
        assert rows[pair].endswith("| **different** |"), rows[pair]
        assert "| 25.8 [" in rows[pair] and "| 0.0 [" in rows[pair]  # 8 of 31 against 0

    # the identical pair alone: its one TOST decides
    text = agree([good, twin], "twins")
    [row] = [r for r in text[text.index("## Part A"):text.index("## Part B")].splitlines()
             if r.startswith("| `")]
    assert "| 0.038, Holm 0.038 [-9.2, 9.2] |" in row
    assert "**equivalent within ±10 points**" in row

    # made to differ: the second runtime broken too, the first pair is no longer equivalent
    text = agree([good, broken], "two")
    [row] = [r for r in text[text.index("## Part A"):text.index("## Part B")].splitlines()
             if r.startswith("| `")]
    assert "**equivalent" not in row and row.endswith("| **different** |")
