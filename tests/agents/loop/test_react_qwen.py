"""End to end: the real Qwen2.5-Coder-0.5B, greedy, through run_react and the world toolbox.

Measured on this machine: Qwen writes a correct JSON tool call. Under the old
observation wording ("Start your reply with 'Final Answer:'" after every result)
it turned the IR-1 result into a final answer; under the neutral wording (issue
#15: no steering) it repeats its call until the trial ends as ``loop``. That is
the model's behaviour, reported by the forensics (docs/results/harness-validity.md),
so these tests check what the harness owes the model, not that the model succeeds.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from slmbench.agents.evaluator import run_trial
from slmbench.agents.loop import LoopSettings
from slmbench.agents.loop.react import run_react
from slmbench.agents.records import Outcome
from slmbench.agents.tasks.loader import load_tasks
from slmbench.agents.tools.toolbox import WorldToolbox
from slmbench.agents.world import World

if TYPE_CHECKING:
    from slmbench.models.llamacpp import LlamaCppModel


@pytest.mark.embedded
@pytest.mark.slow
def test_qwen_calls_a_tool_and_sees_the_real_observation(qwen05: LlamaCppModel) -> None:
    toolbox = WorldToolbox(World.create(0), ["web_search"])
    result = run_react(qwen05, toolbox, "Use web_search to find how long the Veldt River is.",
                       LoopSettings(max_steps=2, max_tokens_per_step=64))
    first = result.steps[0]
    assert first.action.kind == "tool" and first.action.name == "web_search", first.raw_response
    assert first.action.format == "json" and "Veldt" in first.action.arguments["query"]
    assert first.tool_ok and "1,930 kilometres" in (first.observation or "")
    assert toolbox.calls[0].observation == first.observation
    assert result.messages[3].content.startswith(f"Observation: {first.observation}\n")
    assert len(result.steps) == 2 and result.prompt_tokens > 0
    if result.outcome is None:  # it answered: the answer must come from the observation
        assert result.final_answer is not None and "1,930" in result.final_answer


@pytest.mark.embedded
@pytest.mark.slow
def test_qwen_runs_a_capability_task_and_the_record_explains_the_outcome(
        qwen05: LlamaCppModel) -> None:
    """IR-1 from the capability suite: fresh world, tool call, real result, an explained end."""
    task = load_tasks("capability")["IR-1"]
    trial = run_trial(qwen05, task, temperature=0.0, seed=0)
    calls = [s for s in trial.steps if s.action.kind == "tool"]
    assert calls and calls[0].action.name == "web_search" and calls[0].tool_ok
    assert "4,612" in (calls[0].observation or "")  # the world's fact, not the model's memory
    after = trial.messages[3].content  # what the model saw after its first call
    assert after.startswith(f"Observation: {calls[0].observation}")
    assert "final answer" not in after.lower() and "answer my" not in after.lower()
    assert trial.forensics is not None and trial.harness is not None
    if trial.outcome == Outcome.SUCCESS:
        assert trial.final_answer is not None and "4,612" in trial.final_answer
        assert trial.forensics.cause is None
    else:  # whatever the model did, the record says why, in a cause its own steps show
        # (measured: a loop; on the AVX-512 build the 0.5B repeats a successful call,
        # `repeated_call`; under `make test-portable`'s generic x86-64 kernels the greedy text
        # differs and it repeats invalid arguments, `invalid_arguments`: the model's words
        # are not asserted across builds, docs/results/chunking-drift.md)
        cause = trial.forensics.cause
        assert cause is not None
        if trial.outcome == Outcome.LOOP:
            assert any(cause in labels for labels in trial.forensics.steps), trial.forensics
