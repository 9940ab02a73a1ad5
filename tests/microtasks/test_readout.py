"""Both readings of a decision, the no-log-prob fallback, prompts, and the matrix end to end."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from slmbench.cli.main import main
from slmbench.microtasks import tasks
from slmbench.microtasks import tasks as registry
from slmbench.microtasks.datasets.records import ApprovalItem, RankItem, ToolItem
from slmbench.microtasks.matrix import run_matrix
from slmbench.microtasks.prompts import PROMPT_IDS, resolve_prompt_ids
from slmbench.microtasks.readout import NO_LOGPROBS_NOTE, read_item
from slmbench.models.catalog import precision_of
from slmbench.models.scripted import Script, ScriptedModel

APPROVAL = registry.get("approval")
RANKING = registry.get("ranking")

ITEM = ApprovalItem(id="a1", split="eval", provenance=(), command="rm -rf build", label="deny",
                    rule="D1", origin="test")


def test_both_readings_are_recorded() -> None:
    table = {"approve": -2.3, "deny": -1.2, "Approve": -0.4, "Deny": -3.0}
    model = ScriptedModel(Script(default="Approve.", logprobs=table))
    got = read_item(model, APPROVAL, "p0", ITEM)
    assert got.logprob_ranking == ["approve", "deny"]  # "Approve" counts for approve
    assert got.logprobs == pytest.approx({"approve": math.log(math.exp(-2.3) + math.exp(-0.4)),
                                          "deny": math.log(math.exp(-1.2) + math.exp(-3.0))})
    assert got.generation_ranking == ["approve"]
    assert got.reply == "Approve." and not got.format_failure and got.note is None


def test_a_model_without_logprobs_falls_back_to_generation_with_a_note() -> None:
    model = ScriptedModel(Script(default="deny"))
    got = read_item(model, APPROVAL, "p0", ITEM)
    assert got.logprobs is None and got.logprob_ranking is None
    assert got.generation_ranking == ["deny"]
    assert got.note == NO_LOGPROBS_NOTE


def test_unparseable_reply_is_a_format_failure() -> None:
    got = read_item(ScriptedModel(Script(default="I am not sure.")), APPROVAL, "p0", ITEM)
    assert got.format_failure and got.generation_ranking == []


# (the scripted model cuts a reply at max_tokens space-separated words: 6 for approval)
@pytest.mark.parametrize(("reply", "decided"), [
    ("<think>\nDeny?\nNo:\nbuild\noutput.\n</think>\n\nApprove.", ["approve"]),  # Qwen3
    ("Deny?\nNo:\nbuild\noutput.\n</think>\n\nApprove.", ["approve"]),  # R1: headless
    ("<think>\nIt deletes files, so deny", []),  # cut inside its reasoning: no decision
])
def test_a_generation_reading_is_read_after_the_think_block(reply: str,
                                                             decided: list[str]) -> None:
    got = read_item(ScriptedModel(Script(default=reply)), APPROVAL, "p0", ITEM)
    assert got.generation_ranking == decided and got.format_failure is (not decided)
    assert got.reply == reply  # stored as the model wrote it; only the reading skips the block


def parse_reply(task: str, text: str, options: list[str]) -> list[str]:
    return tasks.get(task).parse_reply(text, options)


def test_parse_reply() -> None:
    opts = ["get_weather", "get_weather_forecast", "none"]
    assert parse_reply("tools", "`get_weather_forecast`", opts) == ["get_weather_forecast"]
    assert parse_reply("tools", "Call get_weather(city='Oslo')", opts) == ["get_weather"]
    assert parse_reply("tools", "None of them.", opts) == ["none"]
    assert parse_reply("approval", "Denied: it deletes files", ["approve", "deny"]) == ["deny"]
    assert parse_reply("ranking", "3, 1, 3, 9", ["1", "2", "3"]) == ["3", "1"]
    assert parse_reply("ranking", "none of them", ["1", "2"]) == []


def test_every_task_has_the_frozen_prompt_and_three_paraphrases() -> None:
    tool = ToolItem(id="t", split="eval", provenance=(), request="Weather in Oslo?",
                    functions=({"name": "weather", "description": "Forecast."},), label="weather")
    rank = RankItem(id="r", split="eval", provenance=(), query="Where?", turns=("a", "b"), gold=0)
    items = {"approval": ITEM, "tools": tool, "ranking": rank}
    for task in ("approval", "memory", "tools", "ranking"):
        prompts = tasks.get(task).prompt_set().prompts
        assert sorted(prompts) == sorted(PROMPT_IDS)
        texts = {prompts[p].user for p in PROMPT_IDS}
        assert len(texts) == 4  # paraphrases really differ
    for task, item in items.items():
        for p in PROMPT_IDS:
            user = tasks.get(task).render(p, item)[1].content
            assert "{" not in user.replace("{'", "")  # every placeholder filled
    assert tasks.get("tools").options_for(tool) == ["weather", "none"]
    assert resolve_prompt_ids("all") == list(PROMPT_IDS)


def test_matrix_on_fixture_datasets_with_a_scripted_model(built: Path) -> None:
    model = ScriptedModel(Script(default="deny", logprobs={"*": -1.0, "deny": -0.2}),
                          spec="scripted:deny")
    run = run_matrix(["scripted:deny"], [APPROVAL, RANKING], ["p0", "p1"], source=built,
                     loader=lambda spec: model)
    n_appr = len([i for i in tasks.get("approval").load_items(built) if i.split == "eval"])
    approval = [c for c in run.cells if c.task == "approval"]
    assert {(c.prompt_id, c.reading) for c in approval} == {
        ("p0", "generation"), ("p0", "logprob"), ("p1", "generation"), ("p1", "logprob")}
    assert all(c.n_items == n_appr for c in approval)
    ranking = [c for c in run.cells if c.task == "ranking" and c.reading == "generation"]
    assert {c.metric for c in ranking} == {"ndcg@5", "mrr"}
    assert all(c.format_failures == c.n_items for c in ranking)  # "deny" names no turn
    assert len(run.readings) == 2 * (n_appr + len(run.items["ranking"]))


def test_cli_writes_the_matrix_json(built: Path, tmp_path: Path,
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    script = tmp_path / "m.json"
    script.write_text(json.dumps({"default": "approve"}))
    monkeypatch.setenv("SLMBENCH_HOME", str(built.parent))
    (built.parent / "datasets").mkdir(exist_ok=True)
    for f in built.iterdir():
        (built.parent / "datasets" / f.name).write_bytes(f.read_bytes())
    out = tmp_path / "out"
    with pytest.raises(SystemExit) as done:
        main(["eligibility", "--model", f"scripted:{script}", "--task", "approval",
              "--prompt", "p0", "--out", str(out), "--tau-sweep"])
    assert done.value.code == 0
    data = json.loads((out / "eligibility.json").read_text())
    assert [c["reading"] for c in data["cells"]] == ["generation"]
    assert data["cells"][0]["note"] == NO_LOGPROBS_NOTE
    assert data["tau_sweep"] and data["by_prompt"][0]["prompt_id"] == "p0"
    # the page's row says what the JSON says: one answer to each of 4 items is no evidence
    # of a constant cell (that takes ~80 items), so it is judged like any cell: ineligible
    row = next(x for x in (out / "eligibility.md").read_text().splitlines()
               if x.startswith("| approval |"))
    cell = data["cells"][0]
    assert cell["top_share"] == 1.0 and not cell["constant"] and cell["constant_p"] > 0.05
    assert "constant" not in row and "| ineligible |" in row and row.endswith("| no |")


def test_precision_comes_from_the_registry_or_the_spec() -> None:
    assert precision_of("llamacpp:qwen2.5-coder-0.5b?threads=1") == "Q4_K_M"
    assert precision_of("llamacpp:/models/smollm2-135m.gguf") == "Q4_1"
    assert precision_of("hf:/x?precision=fp16") == "fp16"
