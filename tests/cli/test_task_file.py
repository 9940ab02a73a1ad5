"""A user's own micro-task from a YAML file: validated on load, run end to end, recommended."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from clirun import CliRunner

from slmbench.core.errors import ConfigError
from slmbench.microtasks import tasks as registry
from slmbench.microtasks.diagnostics.routes import RoutingTable
from slmbench.microtasks.matrix import MatrixRun
from slmbench.microtasks.taskfile import load_task_file

EXAMPLE = Path(__file__).parents[2] / "examples" / "my-tools.yaml"
KEYWORDS = {"calendar.add_event": "calendar|schedule|event|birthday|appointment",
            "weather.forecast": "rain|weather|forecast|jacket|snow|hot",
            "email.send": "email|mail|message",
            "timer.start": "timer|countdown|count down|time my",
            "notes.search": "note"}


@pytest.fixture
def example(tmp_path: Path) -> Iterator[Path]:
    """A copy of the shipped example (items beside it); the task unregistered after."""
    for name in ("my-tools.yaml", "my-tools.jsonl"):
        shutil.copy(EXAMPLE.parent / name, tmp_path / name)
    yield tmp_path / "my-tools.yaml"
    registry.unregister("my-tools")


def _script(tmp_path: Path) -> Path:
    """A scripted model that reads the request line (not the tool list) for keywords."""
    rules = [{"match": rf"(?i)Request: [^\n]*({words})", "reply": tool}
             for tool, words in KEYWORDS.items()]
    path = tmp_path / "router.json"
    path.write_text(json.dumps({"rules": rules, "default": "none",
                                "logprobs": {"none": -1.0, "*": -2.0}}))
    return path


def _eligibility(cli: CliRunner, task_file: Path, script: Path, out: Path) -> MatrixRun:
    res = cli("eligibility", "--task-file", str(task_file), "-m", f"scripted:{script}",
              "--until-decided", "--out", str(out))
    assert res.code == 0, res.out + res.err
    return MatrixRun.model_validate_json((out / "eligibility.json").read_text())


def test_the_example_task_runs_end_to_end_and_24_items_do_not_decide_it(
        example: Path, tmp_path: Path, cli: CliRunner, home: Path) -> None:
    """The shipped example has 24 eval items: a keyword router right on nearly all of them
    clears τ with its anytime-valid bound, but 24 items cannot show it better than BM25 on
    the same items, so it stays undecided and the baseline is deployed."""
    run = _eligibility(cli, example, _script(tmp_path), tmp_path / "run")
    assert run.tasks == ["my-tools"]
    gen = next(c for c in run.cells if c.reading == "generation")
    assert gen.tau_anchor == "bm25" and gen.n_split == 24  # the example's eval items
    assert {"always none", "first listed first", "majority"} <= set(gen.baseline_scores)
    assert gen.score.estimate >= 0.95  # the keyword script routes nearly every request
    assert gen.interval_kind == "anytime-valid" and gen.seed_rule and not gen.paired
    assert gen.verdict == "undecided" and gen.n_items == 24 and not gen.eligible
    lp = next(c for c in run.cells if c.reading == "logprob")
    # its log-probs always favour "none": a constant answer, but 24 items are too few to show
    # it, so it is judged like any cell, and its bound is below τ
    assert lp.top_share == 1.0 and not lp.constant and lp.verdict == "ineligible"
    registry.unregister("my-tools")  # as in a new process: recommend reads the stored run
    rec = cli("recommend", str(tmp_path / "run"))
    assert rec.code == 0, rec.out + rec.err
    route = RoutingTable.load(tmp_path / "run" / "routes.json").route("my-tools")
    assert route.deploy == "baseline"


def test_the_example_task_at_240_items_is_decided_and_recommended(
        example: Path, tmp_path: Path, cli: CliRunner, home: Path) -> None:
    """The same router on the example's requests ten times over (240 eval items): settled
    eligible before the last item, family-wise too, and recommended."""
    items = [json.loads(x) for x in (example.parent / "my-tools.jsonl").read_text().splitlines()]
    (example.parent / "my-tools.jsonl").write_text("".join(
        json.dumps({**item, "id": f"{item['id']}-{k}"}) + "\n" for k in range(10)
        for item in items))
    run = _eligibility(cli, example, _script(tmp_path), tmp_path / "run")
    gen = next(c for c in run.cells if c.reading == "generation")
    assert gen.n_split == 240 and gen.eligible and gen.family_eligible
    assert gen.n_items < gen.n_split  # settled before the last item
    lp = next(c for c in run.cells if c.reading == "logprob")
    # "none" on every item: its bound falls below τ long before "constant" could be shown
    assert lp.verdict == "ineligible" and lp.n_items < 240 and not lp.eligible
    rec = cli("recommend", str(tmp_path / "run"))
    assert rec.code == 0, rec.out + rec.err
    assert "my-tools" in rec.out
    route = RoutingTable.load(tmp_path / "run" / "routes.json").route("my-tools")
    assert route.deploy == "model" and route.reading == "generation"


@pytest.mark.parametrize(("change", "message"), [
    ({"candidates": None}, "give either options"),
    ({"options": ["a", "b"]}, "not both or neither"),
    ({"baselines": [{"kind": "magic"}]}, "baselines.0"),
    ({"items": "missing.jsonl"}, "does not exist"),
    ({"gold": "nothere"}, "lacks the field(s) nothere"),
    ({"metric": "f1"}, "metric f1 needs two fixed options"),
])
def test_a_bad_task_file_is_a_one_line_error(example: Path, change: dict, message: str) -> None:
    spec = yaml.safe_load(example.read_text())
    spec.update(change)
    spec = {k: v for k, v in spec.items() if v is not None}
    example.write_text(yaml.safe_dump(spec))
    with pytest.raises(ConfigError) as exc:
        load_task_file(example)
    assert message in str(exc.value) and "\n" not in str(exc.value)


def test_an_item_whose_gold_is_not_an_answer_names_its_line(example: Path) -> None:
    items = example.with_name("my-tools.jsonl")
    lines = items.read_text().splitlines()
    bad = json.loads(lines[3])
    bad["label"] = "fax.send"
    lines[3] = json.dumps(bad)
    items.write_text("\n".join(lines) + "\n")
    with pytest.raises(ConfigError, match=r"my-tools.jsonl:4 .*gold 'fax.send'"):
        load_task_file(example)
