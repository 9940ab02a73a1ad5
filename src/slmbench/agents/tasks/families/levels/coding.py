"""Coding's ladders (``docs/tasks.md``, "Levels"): single-level.

A coding family's difficulty is the program it asks for (checked against fixed tests, or a
value only running it gives), not the number of tool calls or hops the ladder's levels count;
a "level 1" that reads its answer from one result would be a retrieval task under a coding
name. So each keeps its base instance as its one level, and per-level rates leave it out.
"""

from __future__ import annotations

from slmbench.agents.tasks.families.levels.ladder import Ladder

__all__ = ["LADDERS"]

_WHY = ("its difficulty is the program it asks for (run in the sandbox, checked by a value or "
        "fixed tests), not the calls and hops the ladder counts")

LADDERS: dict[str, Ladder] = {
    family: Ladder(base=base, single=_WHY, why_base=why)
    for family, base, why in (
        ("CD-1", 2, "one sandbox run and the computation it does"),
        ("CD-2", 3, "a function written to a file, against fixed tests"),
        ("CD-3", 3, "a function written to a file, against fixed tests"),
        ("CD-4", 2, "one sandbox run and the computation it does"),
        ("CD-5", 2, "one sandbox run and the computation it does"),
        ("CD-6", 3, "a search, then a program over what it found"),
        ("CD-7", 2, "one sandbox run and the computation it does"),
    )
}
