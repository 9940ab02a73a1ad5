"""``slmbench recommend`` on an eligibility folder: the table, and a routing table on disk."""

from __future__ import annotations

import sys
from pathlib import Path

from clirun import CliRunner

from slmbench.microtasks import tasks as registry
from slmbench.microtasks.diagnostics.routes import RoutingTable
from slmbench.microtasks.matrix import run_matrix
from slmbench.microtasks.store import ReadingStore

sys.path.insert(0, str(Path(__file__).parents[1] / "microtasks"))
from seq_fakes import N_EVAL, Oracle, write_approval, write_tools

APPROVAL = registry.get("approval")


def test_recommend_prints_the_decider_and_writes_routes(cli: CliRunner, tmp_path: Path) -> None:
    golds = write_approval(tmp_path)
    model = Oracle(golds, spec="scripted:right")
    with ReadingStore(tmp_path / "readings.sqlite") as store:
        run = run_matrix(["scripted:right"], [APPROVAL], ["p0"], source=tmp_path,
                         loader=lambda _s: model, store=store, sequential=True)
    (tmp_path / "eligibility.json").write_text(run.model_dump_json())
    res = cli("recommend", str(tmp_path))
    assert res.code == 0, res.out + res.err
    assert "approval" in res.out and "model" in res.out and "scripted:right" in res.out
    assert "tokens" in res.out  # the cost column
    table = RoutingTable.load(tmp_path / "routes.json")
    assert table.route("approval").deploy == "model"
    bad = cli("recommend", str(tmp_path / "nowhere"))
    assert bad.code == 2 and "holds no eligibility.json" in bad.out + bad.err


def test_eligibility_prints_plain_progress_lines_when_not_a_terminal(
        cli: CliRunner, tmp_path: Path, home: Path) -> None:
    (home / "datasets").mkdir(parents=True)
    write_approval(home / "datasets")
    script = tmp_path / "approve.json"
    script.write_text('{"default": "approve", "logprobs": {"approve": -0.1, "*": -3.0}}')
    res = cli("eligibility", "-m", f"scripted:{script}", "-t", "approval", "--limit", "60",
              "--out", str(tmp_path / "out"))
    assert res.code == 0, res.out + res.err
    assert "approval · p0: reading up to 60 items" in res.out
    assert "approval · p0: 50/60 items read" in res.out
    assert "approval · p0: 60/60 items read, full split" in res.out


def test_each_plain_progress_line_names_its_own_cell(
        cli: CliRunner, tmp_path: Path, home: Path) -> None:
    data = home / "datasets"
    data.mkdir(parents=True)
    write_approval(data)
    write_tools(data, 70)
    script = tmp_path / "approve.json"
    script.write_text('{"default": "approve", "logprobs": {"approve": -0.1, "*": -3.0}}')
    res = cli("eligibility", "-m", f"scripted:{script}", "-t", "approval", "-t", "tools",
              "--prompt", "p0,p3", "--limit", "60", "--out", str(tmp_path / "out"))
    assert res.code == 0, res.out + res.err
    progress = [line for line in res.out.splitlines() if " items" in line and " · " in line]
    expected = []
    for task in ("approval", "tools"):
        for prompt in ("p0", "p3"):
            cell = f"scripted:{script} · {task} · {prompt}"
            expected += [f"{cell}: reading up to 60 items", f"{cell}: 50/60 items read",
                         f"{cell}: 60/60 items read, full split"]
    assert [line.rstrip() for line in progress] == expected


class Dying(Oracle):
    """Reads ``left`` items, then the run is killed."""

    def __init__(self, golds: dict[str, str], left: int, spec: str) -> None:
        super().__init__(golds, spec=spec)
        self.left = left

    def generate(self, messages, **kw):  # type: ignore[no-untyped-def]
        if self.left == 0:
            raise KeyboardInterrupt
        self.left -= 1
        return super().generate(messages, **kw)


def test_the_eligibility_page_is_rebuilt_from_the_store_and_flags_an_unfinished_block(
        cli: CliRunner, tmp_path: Path, home: Path) -> None:
    import pytest

    (home / "datasets").mkdir(parents=True)
    golds = write_approval(home / "datasets")
    store_path = tmp_path / "readings.sqlite"
    models = {"scripted:right": Oracle(golds, spec="scripted:right"),
              "scripted:wrong": Oracle(golds, wrong=True, spec="scripted:wrong")}
    with ReadingStore(store_path) as store:
        run = run_matrix(list(models), [APPROVAL], ["p0"], loader=lambda s: models[s],
                         store=store, sequential=True)
    page = tmp_path / "docs" / "elig.md"
    res = cli("eligibility-page", str(store_path), "--page", str(page),
              "--read-with", "slmbench eligibility -m A --until-decided")
    assert res.code == 0, res.out + res.err
    text = page.read_text(encoding="utf-8")
    assert "slmbench eligibility -m A --until-decided\nslmbench " in text  # both commands
    assert "## Undecided while unread items remain\n\nNone: every cell is settled" in text
    for c in run.cells:  # the same cells the reading run scored, each with n read of the split
        line = next(x for x in text.splitlines() if x.startswith(
            f"| approval | {c.model.split(':')[1]} | p0 | {c.reading} |"))
        assert f"| {c.n_items}/{c.n_split} | {c.verdict} |" in line and c.n_items < c.n_split
    assert {c.verdict for c in run.cells} == {"eligible", "ineligible"}
    # the interval that decided each cell, as the cells name it: the confidence sequence
    assert "Methods: accuracy: confidence sequence (confseq beta-binomial mixture" in text
    assert "| approval | model | scripted:right p0 generation |" in text  # the routing table
    assert RoutingTable.load(page.parent / "elig" / "routes.json").route(
        "approval").model == "scripted:right"
    # a third model killed after 5 items: its block is flagged loudly, never scored
    with ReadingStore(store_path) as store, pytest.raises(KeyboardInterrupt):
        run_matrix(["scripted:dying"], [APPROVAL], ["p0"], store=store, sequential=True,
                   loader=lambda s: Dying(golds, 5, spec=s))
    res = cli("eligibility-page", str(store_path), "--page", str(page))
    assert res.code == 0, res.out + res.err
    text = page.read_text(encoding="utf-8")
    assert "**THIS PAGE IS NOT FINAL" in text
    assert f"- **dying · approval · p0: 5 of {N_EVAL} items stored" in text
    assert "| approval | dying |" not in text
