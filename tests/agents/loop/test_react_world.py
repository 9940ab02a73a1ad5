"""The ReAct loop over the real world toolbox: a scripted agent, and an injected fault."""

from __future__ import annotations

import json

import pytest

from slmbench.agents.loop.react import run_react
from slmbench.agents.records import FaultPlan
from slmbench.agents.tools.toolbox import WorldToolbox
from slmbench.agents.world import World
from slmbench.models.records import Message
from slmbench.models.scripted import ScriptedModel

LOOKUP = '{"name": "fact_lookup", "arguments": {"key": "brightline_labs"}}'


def _toolbox(fault_plan: FaultPlan | None = None) -> WorldToolbox:
    return WorldToolbox(World.create(0), ["web_search", "fact_lookup"], fault_plan=fault_plan)


def test_scripted_agent_reads_a_fact_from_the_world() -> None:
    model = ScriptedModel([
        'Thought: search first.\n{"name": "web_search", "arguments": {"query": "Brightline CEO"}}',
        LOOKUP,
        "Final Answer: Dana Whitfield",
    ])
    result = run_react(model, _toolbox(), "Who is the CEO of Brightline Labs?")
    assert result.outcome is None and result.final_answer == "Dana Whitfield"
    assert "Dana Whitfield" in (result.steps[1].observation or "")
    assert json.loads(result.steps[1].observation or "")["key"] == "brightline_labs"


@pytest.mark.parametrize("fault", ["timeout", "rate_limit", "internal_error", "malformed_result"])
def test_an_injected_fault_reaches_the_next_prompt(fault: str) -> None:
    seen: list[str] = []

    def agent(messages: list[Message]) -> str:  # retries once, then answers
        seen.append(messages[-1].content)
        return [LOOKUP, f"Thought: retry.\n{LOOKUP}", "Final Answer: Dana Whitfield"][len(seen) - 1]

    toolbox = _toolbox(FaultPlan.model_validate({"tool": "fact_lookup", "fault": fault}))
    result = run_react(ScriptedModel(agent), toolbox, "Who is the CEO of Brightline Labs?")
    faulted, retried, _ = result.steps
    assert faulted.injected_fault == fault and faulted.tool_ok is False
    assert faulted.observation and faulted.observation != retried.observation
    assert seen[1].startswith(f"Observation: {faulted.observation}\n")  # what the model saw next
    assert retried.injected_fault is None and "Dana Whitfield" in (retried.observation or "")
    assert result.faults_injected == toolbox.faults_injected == 1


def test_every_protocol_example_is_read_by_the_strict_grammar() -> None:
    from slmbench.agents.loop.parse import parse_action
    from slmbench.agents.loop.prompts import build_system_prompt

    specs = WorldToolbox(World.create(0)).specs()
    examples = [line.split("example: ", 1)[1] for line in
                build_system_prompt(specs).splitlines() if line.startswith("  example: ")]
    assert len(examples) == len(specs) == 10
    for spec, text in zip(specs, examples, strict=True):
        action = parse_action(text, tools=specs)
        assert (action.kind, action.name, action.strict) == ("tool", spec.name, True), text
