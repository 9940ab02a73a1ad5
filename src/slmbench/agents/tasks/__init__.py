"""Agent tasks: the ``Task`` model, suite loading and deterministic perturbations."""

from slmbench.agents.tasks.loader import SHIPPED_SUITES, load_suite, load_tasks
from slmbench.agents.tasks.model import Reference, ReferenceAction, ScorerSpec, Task

__all__ = [
    "SHIPPED_SUITES",
    "Reference",
    "ReferenceAction",
    "ScorerSpec",
    "Task",
    "load_suite",
    "load_tasks",
]
