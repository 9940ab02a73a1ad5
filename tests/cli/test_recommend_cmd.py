"""``slmbench recommend`` on an eligibility folder: the table, and a routing table on disk."""

from __future__ import annotations

import sys
from pathlib import Path

from clirun import CliRunner

from slmbench.microtasks.diagnostics.cascade import RoutingTable
from slmbench.microtasks.matrix import run_matrix
from slmbench.microtasks.store import ReadingStore

sys.path.insert(0, str(Path(__file__).parents[1] / "microtasks"))
from seq_fakes import Oracle, write_approval, write_tools


def test_recommend_prints_the_decider_and_writes_routes(cli: CliRunner, tmp_path: Path) -> None:
    golds = write_approval(tmp_path)
    model = Oracle(golds, spec="scripted:right")
    with ReadingStore(tmp_path / "readings.sqlite") as store:
        run = run_matrix(["scripted:right"], ["approval"], ["p0"], source=tmp_path,
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
