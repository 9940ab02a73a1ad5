"""The stage funnel of one trial: how far its transcript got toward a right answer (issue #61).

Each stage is a property of one trial, judged against the trial's question by the world,
never by a judge (definitions in ``docs/reliability.md``):

* ``acts`` — the first reply parses as an action (a tool call or a final answer) under the
  tolerant parser the run used; ``strict_acts`` beside it under the strict grammar
  (``Action.strict``, as in the forensics table);
* ``right_tool`` — the first tool call names a tool of the reference solution (or an
  alternative the family declares: :data:`ALTERNATIVES`);
* ``valid_call`` — some call to a reference tool succeeded (arguments valid, result ok);
* ``evidence`` — some successful tool result shows the task's evidence, by
  :func:`~slmbench.agents.scoring.grounding.grounding`'s own test; where grounding has none:
  a state task's required change reached its target entity (:func:`_state_reached`), a code
  task's code reached what the scorer runs (:func:`_code_reached`), a safety task: not
  applicable;
* ``answers`` — it ended in a final answer, refusal or decision (:data:`ANSWERED`);
* ``correct`` — its outcome is ``success``.

``right_tool`` and ``valid_call`` are not applicable where the question's right answer needs
no call (its reference has no action: the harmful safety forms). A trial *reaches* the last
stage of its unbroken run of passed (or not applicable) stages from ``acts``
(:attr:`StageReach.reached`; ``None``: its first reply was no action).

The question is the task the trial ran, as the trial recorded it: :func:`_question` (one
place, over :func:`slmbench.agents.questions.question_of`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any

from pydantic import BaseModel, ConfigDict

from slmbench.agents.questions import question_of
from slmbench.agents.records import Outcome, Trial
from slmbench.agents.scoring.grounding import grounding
from slmbench.agents.scoring.state import check
from slmbench.agents.tasks.model import (
    AllSpec,
    CodeSpec,
    EmailSent,
    EventAbsent,
    EventExists,
    FileContent,
    NotificationSent,
    ScorerSpec,
    StateCheck,
    StateSpec,
    Task,
    scorer_kinds,
)
from slmbench.agents.world import World
from slmbench.core.errors import ConfigError

__all__ = ["ALTERNATIVES", "ANSWERED", "STAGES", "StageReach", "reach", "reach_all"]

STAGES = ("acts", "right_tool", "valid_call", "evidence", "answers", "correct")
# A family's declared alternative first tools (task id -> tools), beside its reference's own.
# No family declares one today: a right first tool is a tool of the reference solution.
ALTERNATIVES: Mapping[str, frozenset[str]] = {}
# Outcomes that end in a final answer, a refusal or a decision (``dumped``, where the outcome
# exists); loop, step_limit, truncated, format_failure and context_overflow do not.
ANSWERED = frozenset(o for o in Outcome if o.value in {
    "success", "wrong_answer", "ungrounded", "refused", "dumped"})
NO_CALL_NEEDED = "its right answer needs no tool call (the reference makes none)"
SAFETY = "a safety task: what it asks for is a refusal or a decision, not evidence"


class StageReach(BaseModel):
    """One trial's stages: each passed (True), not (False) or not applicable (None, with
    why in ``not_applicable``); ``strict_acts`` is ``acts`` under the strict grammar."""

    model_config = ConfigDict(frozen=True)

    stages: dict[str, bool | None]
    not_applicable: dict[str, str]
    strict_acts: bool

    @property
    def reached(self) -> str | None:
        """The last stage of the unbroken run of passed (or not applicable) stages from
        ``acts``; None when the first reply was no action."""
        last = None
        for stage in STAGES:
            ok = self.stages[stage]
            if ok is False:
                break
            if ok:
                last = stage
        return last

    def passed_before(self, stage: str) -> bool:
        """Whether every applicable stage before ``stage`` passed (the trial reached it)."""
        before = STAGES[:STAGES.index(stage)]
        return all(self.stages[s] is not False for s in before)


def _question(trial: Trial, tasks: Mapping[str, Task]) -> Task | None:
    """The question ``trial`` answered, as it recorded it (:func:`question_of`; a trial that
    recorded none, only where today's binders are the ones that made it); None when its task
    is not among ``tasks`` or its question cannot be known (never judged against a newer
    binder's question)."""
    template = tasks.get(trial.task_id)
    if template is None:
        return None
    try:
        return question_of(trial, template)
    except ConfigError:
        return None


def _leaves(spec: ScorerSpec) -> list[ScorerSpec]:
    if isinstance(spec, AllSpec):
        return [leaf for s in spec.scorers for leaf in _leaves(s)]
    return [spec]


@lru_cache(maxsize=64)
def _fresh(seed: int) -> dict[str, Any]:
    """The snapshot of a fresh world (read only)."""
    return World.create(seed).snapshot()


def _changed(trial: Trial, seed: int) -> dict[str, Any]:
    """What the trial changed: records and files of its world not in a fresh world."""
    fresh, out = _fresh(seed), {}
    for key, value in trial.world_state.items():
        before = fresh.get(key)
        if isinstance(value, list) and isinstance(before, list):
            out[key] = [r for r in value if r not in before]
        elif isinstance(value, dict) and isinstance(before, dict):
            out[key] = {k: v for k, v in value.items() if before.get(k) != v}
        else:
            out[key] = value
    return out


def _target(rule: StateCheck) -> StateCheck | None:
    """The check on the target entity only: who or what the change is for (an e-mail to
    its recipient, a notification on its channel to its recipient, the event with its title
    and attendees, the file at its path), not everything it must say; None: a check of
    nothing happening (nothing_sent)."""
    if isinstance(rule, EmailSent):
        return EmailSent(to=rule.to)
    if isinstance(rule, NotificationSent):
        return NotificationSent(channel=rule.channel, recipient=rule.recipient)
    if isinstance(rule, FileContent):
        return FileContent(path=rule.path)
    if isinstance(rule, EventExists) and rule.count > 0:
        fields = {k: v for k, v in rule.fields.items() if k in ("title", "attendees")}
        return EventExists(fields=fields or rule.fields)
    if isinstance(rule, EventAbsent):
        return rule
    return None


def _state_reached(trial: Trial, question: Task) -> bool:
    """The required change reached its target entity: every state check, on its target
    only, holds among what the trial changed (an event removed: in the world after it)."""
    seed = question.world_seed
    changed = _changed(trial, seed)
    after = {**_fresh(seed), **trial.world_state}
    targets = [t for leaf in _leaves(question.scorer) if isinstance(leaf, StateSpec)
               for rule in leaf.checks if (t := _target(rule)) is not None]
    return bool(targets) and all(_holds(changed, after, t) for t in targets)


def _holds(changed: dict[str, Any], after: dict[str, Any], target: StateCheck) -> bool:
    if isinstance(target, EventAbsent):  # removed: absent from the world after the trial
        return check(after, target)[0]
    if isinstance(target, EventExists):  # some event the trial created or changed
        return any(check({"events": [e]}, target)[0] for e in changed.get("events", []))
    return check(changed, target)[0]


def _code_reached(trial: Trial, question: Task) -> bool:
    """The code reached what the scorer runs: the file it reads was written through the
    tools (a code spec with a file), else the sandbox ran (a successful code_interpreter
    call)."""
    specs = [leaf for leaf in _leaves(question.scorer) if isinstance(leaf, CodeSpec)]
    files = _changed(trial, question.world_seed).get("files", {})
    if all(s.file is not None for s in specs):
        return all(s.file in files for s in specs)
    return any(s.action.name == "code_interpreter" and s.tool_ok for s in trial.steps)


def _evidence(trial: Trial, question: Task) -> tuple[bool | None, str | None]:
    found = grounding(question, trial.steps)
    if found is not None:
        return found.supported, None
    kinds = scorer_kinds(question.scorer)
    if "refusal" in kinds:
        return None, SAFETY
    if "state" in kinds:
        return _state_reached(trial, question), None
    if "code" in kinds:
        return _code_reached(trial, question), None
    return None, "the task names no evidence to look for"


def reach(trial: Trial, question: Task) -> StageReach:
    """The stages ``trial`` passed, judged against ``question`` (the task it ran)."""
    first = trial.steps[0].action if trial.steps else None
    reference = {a.tool for a in question.reference.actions}
    right = reference | ALTERNATIVES.get(question.id, frozenset())
    calls = [s for s in trial.steps if s.action.kind == "tool"]
    stages: dict[str, bool | None] = {"acts": first is not None and first.kind != "invalid"}
    why: dict[str, str] = {}
    if reference:
        stages["right_tool"] = bool(calls) and calls[0].action.name in right
        stages["valid_call"] = any(s.action.name in reference and s.tool_ok for s in calls)
    else:
        stages["right_tool"] = stages["valid_call"] = None
        why["right_tool"] = why["valid_call"] = NO_CALL_NEEDED
    stages["evidence"], evidence_na = _evidence(trial, question)
    if evidence_na:
        why["evidence"] = evidence_na
    stages["answers"] = trial.outcome in ANSWERED
    stages["correct"] = trial.outcome == Outcome.SUCCESS
    return StageReach(stages=stages, not_applicable=why,
                      strict_acts=first is not None and first.strict)


def reach_all(trials: Sequence[Trial], tasks: Mapping[str, Task]) -> list[StageReach | None]:
    """:func:`reach` of each trial against its question (None: its task is not in
    ``tasks``), in order; each question is built once."""
    questions: dict[tuple[str, int, str | None], Task | None] = {}
    out: list[StageReach | None] = []
    for t in trials:
        key = (t.task_id, t.instance,
               None if t.question is None else t.question.model_dump_json())
        if key not in questions:
            questions[key] = _question(t, tasks)
        question = questions[key]
        out.append(None if question is None else reach(t, question))
    return out
