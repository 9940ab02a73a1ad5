"""scheduling's ladders (``docs/tasks.md``, "Levels")."""

from __future__ import annotations

from slmbench.agents.tasks.families.levels.ladder import Ladder

__all__ = ["LADDERS"]

LADDERS: dict[str, Ladder] = {}
