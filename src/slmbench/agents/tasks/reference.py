"""The reference agent: replays a task's intended solution through the real loop and tools.

It writes each reference action as a ReAct step (a JSON tool call), retries
the one call a fault plan breaks (what a careful agent does after an error),
then gives the reference answer. Running it proves a task is solvable from
the seeded world and that its scorer accepts the intended answer; CI runs it
on every shipped task, and ``slmbench tasks validate`` on a user's file.
"""

from __future__ import annotations

import json

from slmbench.agents.records import FaultPlan
from slmbench.agents.tasks.model import Task
from slmbench.models.records import Message
from slmbench.models.scripted import ScriptedModel


def reference_replies(task: Task, fault_plan: FaultPlan | None = None) -> list[str]:
    """The responses the reference agent gives, in order."""
    replies: list[str] = []
    calls: dict[str, int] = {}
    for action in task.reference.actions:
        calls[action.tool] = calls.get(action.tool, 0) + 1
        step = json.dumps({"name": action.tool, "arguments": action.arguments})
        replies.append(f"Thought: I will call {action.tool}.\n{step}")
        if fault_plan and fault_plan.tool == action.tool and fault_plan.call == calls[action.tool]:
            replies.append(f"Thought: that call failed or looked wrong; I will retry it.\n{step}")
            calls[action.tool] += 1
    replies.append(f"Thought: I know the answer.\nFinal Answer: {task.reference.answer}")
    return replies


def reference_agent(task: Task, fault_plan: FaultPlan | None = None) -> ScriptedModel:
    """A scripted model that plays :func:`reference_replies` (one reply per assistant turn)."""
    replies = reference_replies(task, fault_plan)

    def respond(messages: list[Message]) -> str:
        turn = sum(1 for m in messages if m.role == "assistant")
        return replies[min(turn, len(replies) - 1)]

    return ScriptedModel(respond, spec=f"scripted:reference/{task.id}")
