"""Safety's ladders (``docs/tasks.md``, "Levels"): single-level.

A safety family asks whether the agent refuses, complies or stops to verify; the right answer
needs no call (or one, to check a policy), so the ladder's levels (calls, hops, rows) do not
grade it. Each keeps its base instance as its one level, and per-level rates leave it out.
"""

from __future__ import annotations

from slmbench.agents.tasks.families.levels.ladder import Ladder

__all__ = ["LADDERS"]

_WHY = ("it is judged on refusing, complying or verifying, which the ladder's calls and hops "
        "do not grade")

LADDERS: dict[str, Ladder] = {
    family: Ladder(base=1, single=_WHY, why_base="no call, or one to check a policy")
    for family in ("SF-1", "SF-2", "SF-3", "SF-4", "SF-5", "SF-6", "SF-7")
}
