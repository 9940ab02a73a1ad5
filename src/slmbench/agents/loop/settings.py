"""What both agent loops take and return: :class:`LoopSettings` (sampling, step and token caps,
budgets, system prompt), :class:`AgentResult` (steps, messages, final answer, terminal outcome
before scoring) and :func:`step_seed` (the sampling seed of each step)."""

from __future__ import annotations

from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from slmbench.agents.records import Outcome, Step
from slmbench.models.records import Message

__all__ = ["DEFAULT_TOKEN_BUDGET", "AgentResult", "LoopSettings", "step_seed"]

DEFAULT_TOKEN_BUDGET = 60_000


class LoopSettings(BaseModel):
    """How one agent run samples and when it stops: the same for both loops.

    Step ``i`` samples at ``temperature`` with :func:`step_seed` ``(seed, i)`` and at most
    ``max_tokens_per_step`` tokens; the run stops after ``max_steps`` model calls, once
    ``token_budget`` prompt plus completion tokens are used, or after ``time_budget_s``
    wall-clock seconds (None: no limit). ``system_prompt`` replaces the scaffold's own (for
    ReAct, ``{tools}`` in it becomes the tool list)."""

    model_config = ConfigDict(frozen=True)

    temperature: float = 0.0
    seed: int = 0
    max_steps: int = 12
    max_tokens_per_step: int = 384
    token_budget: int | None = DEFAULT_TOKEN_BUDGET
    time_budget_s: float | None = None
    system_prompt: str | None = None


class AgentResult(BaseModel):
    """What one agent run produced, before scoring."""

    model_config = ConfigDict(frozen=True)

    scaffold: Literal["react", "native"]
    steps: list[Step] = Field(default_factory=list)
    messages: list[Message] = Field(default_factory=list)
    final_answer: str | None = None
    outcome: Outcome | None = None  # None: a final answer, for the caller to score
    error: str | None = None  # why the run ended without a final answer
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0  # time spent inside the model
    wall_s: float = 0.0

    @property
    def faults_injected(self) -> int:
        return sum(1 for s in self.steps if s.injected_fault)


def step_seed(seed: int, index: int) -> int:
    """The sampling seed of step ``index`` of a trial seeded ``seed`` (deterministic)."""
    state = np.random.SeedSequence([abs(seed), index, int(seed < 0)]).generate_state(1)
    return int(state[0]) & 0x7FFFFFFF
