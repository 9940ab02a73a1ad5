"""What a model's stored trials cost: how many, their model time and tokens, per model spec
(a spec's configurations together: its cost)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from pydantic import BaseModel, ConfigDict

from slmbench.agents.configurations import spec_of
from slmbench.agents.records import Trial


class TrialCost(BaseModel):
    """One model spec's stored trials: how many, their wall time summed, their prompt and reply
    tokens summed."""

    model_config = ConfigDict(frozen=True)

    model: str
    trials: int = 0
    wall_s: float = 0.0
    tokens: int = 0


def trial_costs(trials: Sequence[Trial], models: Iterable[str]) -> dict[str, TrialCost]:
    """The cost of each of ``models`` (model specs) over ``trials``, in the order given; a
    spec with no stored trial costs nothing."""
    out: dict[str, TrialCost] = {}
    for m in models:
        mine = [t for t in trials if spec_of(t.model) == m]
        out[m] = TrialCost(model=m, trials=len(mine), wall_s=sum(t.wall_s for t in mine),
                           tokens=sum(t.prompt_tokens + t.completion_tokens for t in mine))
    return out
