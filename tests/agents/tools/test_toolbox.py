"""The toolbox contract: call() never raises, errors are one readable line, calls are recorded."""

from typing import Any, ClassVar

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from slmbench.agents.tools import sandbox as sandbox_mod
from slmbench.agents.tools.base import Toolbox
from slmbench.agents.tools.code import CodeInterpreter
from slmbench.agents.tools.common import StrictParams, WorldTool
from slmbench.agents.tools.sandbox import SandboxUnavailable
from slmbench.agents.tools.toolbox import TOOL_NAMES, WorldToolbox, make_tools
from slmbench.agents.world import World
from slmbench.core.errors import ConfigError


def test_world_toolbox_implements_the_protocol() -> None:
    assert isinstance(WorldToolbox(World.create()), Toolbox)


@pytest.mark.parametrize(("name", "args", "expected"), [
    ("teleport", {}, "unknown tool 'teleport'; available tools: web_search"),
    ("calendar", {"action": "explode"}, "action: Input should be 'list', 'create'"),
    ("calendar", {"action": "list", "date": "next tuesday"}, "date: Input should be a valid date"),
    ("web_search", {"query": "x", "verbose": True}, "verbose: unexpected argument"),
    ("web_search", {}, "query: Field required"),
    ("query_table", {"table": "salaries"}, "table: Input should be 'employees'"),
    ("notify", {"channel": "fax", "recipient": "x", "message": "m"}, "channel: Input should be"),
    ("file_manager", {"action": "read"}, "read needs path"),
    ("calendar", {"action": "cancel", "event_id": "EV999"}, "no event with id 'EV999'"),
    ("fact_lookup", {"key": "lantern"}, "similar keys: lantern_tower_height"),
])
def test_bad_calls_become_error_observations(name: str, args: dict, expected: str) -> None:
    box = WorldToolbox(World.create())
    result = box.call(name, args)
    assert result.ok is False
    assert result.observation.startswith("error")
    assert expected in result.observation
    assert "\n" not in result.observation
    assert box.calls[-1].name == name and box.calls[-1].ok is False


def test_non_dict_arguments_are_an_error_not_a_crash() -> None:
    box = WorldToolbox(World.create())
    result = box.call("web_search", ["lantern"])  # type: ignore[arg-type]
    assert not result.ok and "must be a JSON object" in result.observation


class _Broken:
    name: ClassVar[str] = "broken"
    description: ClassVar[str] = "always crashes"

    class Params(StrictParams):
        pass

    def run(self, world: Any, params: Any) -> Any:
        raise KeyError("boom")


def test_unexpected_exception_in_a_tool_is_contained() -> None:
    box = WorldToolbox(World.create(), tools=[_Broken(), "web_search"])
    result = box.call("broken", {})
    assert not result.ok and "internal error in broken: KeyError" in result.observation
    assert [s.name for s in box.specs()] == ["broken", "web_search"]


def test_a_world_tool_is_named_by_its_keyword_and_described_by_its_docstring() -> None:
    class Echo(WorldTool, name="echo"):
        """Repeat the text
        back, unchanged."""

        class Params(StrictParams):
            text: str

        def run(self, world: Any, params: Any) -> Any:
            return params.text

    (spec,) = WorldToolbox(World.create(), tools=[Echo()]).specs()
    assert (spec.name, spec.description) == ("echo", "Repeat the text back, unchanged.")
    with pytest.raises(TypeError, match="no docstring"):
        class Undescribed(WorldTool, name="undescribed"):
            pass


def test_unknown_tool_names_in_the_constructor_are_a_config_error() -> None:
    with pytest.raises(ConfigError) as err:
        make_tools(["web_search", "hammer"])
    assert "hammer" in str(err.value) and "web_search" in err.value.hint


def test_calls_are_recorded_in_order_with_arguments() -> None:
    box = WorldToolbox(World.create(), tools=["web_search", "notify"])
    box.call("web_search", {"query": "speed of light"})
    box.call("notify", {"channel": "teams", "recipient": "Ops", "message": "hi"})
    box.call("email", {"action": "list"})  # not in this toolbox
    assert [(c.name, c.ok, c.fault) for c in box.calls] == [
        ("web_search", True, None), ("notify", True, None), ("email", False, None)]
    assert box.calls[1].arguments == {"channel": "teams", "recipient": "Ops", "message": "hi"}


_json = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False)
                     | st.text(max_size=20),
                     lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=8), c,
                                                                         max_size=3),
                     max_leaves=8)
_args = st.dictionaries(st.sampled_from(["action", "query", "key", "date", "start", "end",
                                         "attendees", "table", "filters", "path", "content",
                                         "to", "channel", "recipient", "message", "operation",
                                         "csv", "email_id", "event_id", "title", "limit"]),
                        _json, max_size=6)


@settings(max_examples=150, deadline=None)
@given(name=st.sampled_from([n for n in TOOL_NAMES if n != "code_interpreter"]), args=_args)
def test_call_never_raises_whatever_the_model_sends(name: str, args: dict) -> None:
    box = WorldToolbox(World.create())
    result = box.call(name, args)
    assert isinstance(result.observation, str)
    assert len(box.calls) == 1


def test_code_interpreter_without_bwrap_refuses_and_never_runs_code(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sandbox_mod.shutil, "which", lambda _name: None)

    def no_process(*a: Any, **k: Any) -> Any:
        raise AssertionError("code must never run without the sandbox")

    monkeypatch.setattr(sandbox_mod.subprocess, "Popen", no_process)
    box = WorldToolbox(World.create(), tools=["code_interpreter"])
    result = box.call("code_interpreter", {"code": "print('hello')"})
    assert not result.ok
    assert "code_interpreter is unavailable: bubblewrap (bwrap) is not installed" in (
        result.observation)
    assert "apt-get install bubblewrap" in result.observation


def test_sandbox_whose_setup_fails_raises_sandbox_unavailable(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # A bwrap setup failure (here: a bind source that does not exist) happens before the
    # interpreter starts; it is reported as SandboxUnavailable, not as the program's exit 1.
    sb = sandbox_mod.Sandbox()
    build = sb._bwrap_args

    def broken(*a: Any) -> list[str]:
        args = build(*a)
        return [args[0], "--ro-bind", "/no/such/dir", "/x", *args[1:]]

    monkeypatch.setattr(sb, "_bwrap_args", broken)
    with pytest.raises(SandboxUnavailable) as err:
        sb.run_python("print(1)")
    assert "bubblewrap could not start the sandbox" in str(err.value)


def test_interpreter_outside_usr_is_refused() -> None:
    tool = CodeInterpreter()
    tool.sandbox.python = "/root/.pyenv/versions/3.11.7/bin/python3.11"
    with pytest.raises(SandboxUnavailable) as err:
        tool.sandbox.run_python("print(1)")
    assert "not under /usr" in str(err.value)
