"""End to end: the real Qwen2.5-Coder-0.5B, greedy, through run_react and the world toolbox.

Measured on this machine (see the agent engineer's report): with the default
prompt Qwen writes a correct bare-JSON web_search call as its first reply, but
it does not reliably turn the observation into a ``Final Answer`` (it repeats
the call or copies the result into new arguments). The test pins what holds:
its call is parsed, runs on the real toolbox, and the real observation is what
the model sees next; the run ends in a defined state with every step recorded.
"""

from __future__ import annotations

import pytest

from slmbench.agent.react import run_react
from slmbench.models.llamacpp import LlamaCppModel
from slmbench.tools.toolbox import WorldToolbox
from slmbench.world import World


@pytest.mark.embedded
@pytest.mark.slow
def test_qwen_calls_a_tool_and_sees_the_real_observation(qwen05: LlamaCppModel) -> None:
    toolbox = WorldToolbox(World.create(0), ["web_search"])
    result = run_react(qwen05, toolbox, "Use web_search to find how long the Amazon River is.",
                       max_steps=2, max_tokens_per_step=64)
    first = result.steps[0]
    assert first.action.kind == "tool" and first.action.name == "web_search", first.raw_response
    assert first.action.format == "json" and "Amazon" in first.action.arguments["query"]
    assert first.tool_ok and "6,400 kilometres" in (first.observation or "")
    assert toolbox.calls[0].observation == first.observation
    assert result.messages[3].content.startswith(f"Observation: {first.observation}\n")
    assert len(result.steps) == 2 and result.prompt_tokens > 0
    if result.outcome is None:  # it answered: the answer must come from the observation
        assert result.final_answer is not None and "6,400" in result.final_answer
