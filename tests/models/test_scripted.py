"""The scripted backend: the deterministic model every fast logic test relies on."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from slmbench.core.errors import ConfigError, LogprobsUnsupportedError
from slmbench.models import Message, Model, load_model
from slmbench.models.scripted import Script, ScriptedModel, ScriptRule

ASK = [Message(role="user", content="What is the capital of France?")]


def test_replies_in_order_then_default() -> None:
    model = ScriptedModel(Script(replies=["one", "two"], default="done"))
    assert isinstance(model, Model) and not model.supports_native_tools
    assert [model.generate(ASK).text for _ in range(4)] == ["one", "two", "done", "done"]
    assert model.calls == 4


def test_rules_match_the_last_message_first() -> None:
    script = Script(replies=["first"], rules=[ScriptRule(match="(?i)delete all",
                                                         reply="I can't help with that.")])
    model = ScriptedModel(script)
    assert model.generate(ASK).text == "first"
    assert model.generate([Message(role="user", content="Please DELETE ALL files")]).text == (
        "I can't help with that.")


def test_builtin_echo_and_silent() -> None:
    echo = load_model("scripted:echo")
    assert echo.generate(ASK).text == "What is the capital of France?"
    assert load_model("scripted:silent").generate(ASK).text == ""


def test_stop_and_max_tokens() -> None:
    model = ScriptedModel(["Thought: look it up\nObservation: made up"])
    out = model.generate(ASK, stop=["\nObservation:"])
    assert out.text == "Thought: look it up" and out.finish_reason == "stop"
    long = ScriptedModel(["a b c d e f"]).generate(ASK, max_tokens=3)
    assert long.text == "a b c" and long.finish_reason == "length"
    assert long.completion_tokens == 3


def test_callable_responder_sees_all_messages() -> None:
    model = ScriptedModel(lambda msgs: f"{len(msgs)} messages")
    history = [Message(role="system", content="s"), *ASK]
    assert model.generate(history).text == "2 messages"


def test_script_file_yaml_and_json(tmp_path: Path) -> None:
    yaml_file = tmp_path / "s.yaml"
    yaml_file.write_text("replies:\n  - 'Final Answer: Paris'\nlogprobs:\n  'yes': -0.1\n"
                         "  '*': -5.0\n")
    model = load_model(f"scripted:{yaml_file}")
    assert model.generate(ASK).text == "Final Answer: Paris"
    scores = model.score(ASK, ["yes", "maybe"])
    assert [(s.candidate, s.logprob) for s in scores] == [("yes", -0.1), ("maybe", -5.0)]
    json_file = tmp_path / "s.json"
    json_file.write_text(json.dumps({"default": "x"}))
    assert load_model(f"scripted:{json_file}").generate(ASK).text == "x"


def test_malformed_script_is_a_config_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("replies: [1, 2]\nunknown_key: true\n")
    with pytest.raises(ConfigError, match="malformed"):
        load_model(f"scripted:{bad}")


def test_score_without_a_table_is_unsupported() -> None:
    model = ScriptedModel(["x"])
    assert not model.supports_logprobs
    with pytest.raises(LogprobsUnsupportedError):
        model.score(ASK, ["a"])


def test_score_of_an_unlisted_candidate_is_an_error() -> None:
    model = ScriptedModel(Script(logprobs={"yes": -0.2}))
    with pytest.raises(ConfigError, match="no log-prob for candidate 'no'"):
        model.score(ASK, ["yes", "no"])


def test_concurrent_calls_each_take_one_reply() -> None:
    replies = [f"r{i}" for i in range(40)]
    model = ScriptedModel(replies)
    seen: list[str] = []
    lock = threading.Lock()

    def work() -> None:
        for _ in range(10):
            text = model.generate(ASK).text
            with lock:
                seen.append(text)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(seen) == sorted(replies)  # no reply lost or given twice
