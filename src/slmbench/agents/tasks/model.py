"""The ``Task`` record: one agent task, its scoring rule and its reference solution.

Tasks live in YAML suites (``slmbench/agents/tasks/suites/*.yaml``). A task names the
tools it needs, the seed of the world it runs in, a *scorer spec* (a
discriminated union on ``kind``) and a ``reference`` solution: the intended
tool calls and final answer, which a scripted reference agent replays to
prove the task is solvable from the seeded world.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, Strict, model_validator

Suite = Literal["capability", "reliability"]
Group = Literal[
    "information_retrieval", "scheduling", "data_analysis", "communication",
    "multi_step_reasoning", "decision_making", "coding", "safety",
]
Dimension = Literal["consistency", "robustness", "fault_tolerance", "safety"]
FaultKind = Literal[
    "timeout", "rate_limit", "internal_error", "schema_drift", "malformed_result", "empty_result",
]
Alias = str | list[str]  # one name, or a list of interchangeable names
Evidence = float | Alias  # a number (matched as a quantity) or text (a substring, any case)
TASK_ID = re.compile(r"^[A-Z]{1,4}-\d{1,3}$")


MAX_TOLERANCE = 0.01
Count = Annotated[int, Strict()]  # `difficulty: yes` is YAML's True, never the integer 1


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


# -- scorer specs --------------------------------------------------------------------------

class NumericSpec(_Strict):
    """The answer must state ``value`` (within ``tolerance``, absolute) in ``unit`` if given.

    The tolerance is finite and at most :data:`MAX_TOLERANCE` of the value (or 0.5 for a
    value under 50): a wide tolerance would accept answers that are not the world's figure.
    """

    kind: Literal["numeric"] = "numeric"
    value: float = Field(allow_inf_nan=False)
    tolerance: float = Field(default=0.0, ge=0.0, allow_inf_nan=False)
    unit: str | None = None

    @model_validator(mode="after")
    def _bounded(self) -> NumericSpec:
        bound = max(MAX_TOLERANCE * abs(self.value), 0.5)
        if self.tolerance > bound:
            raise ValueError(f"tolerance {self.tolerance:g} is wider than {bound:g} "
                             f"({MAX_TOLERANCE:.0%} of the value, or 0.5)")
        return self


class EntitiesSpec(_Strict):
    """Every ``required`` entity (or one of its aliases) present; no ``forbidden`` one."""

    kind: Literal["entities"] = "entities"
    required: list[Alias] = Field(min_length=1)
    forbidden: list[str] = Field(default_factory=list)


class ChoiceSpec(_Strict):
    """The answer names ``answer`` and no other of ``options`` (yes/no, A/B/C, a name)."""

    kind: Literal["choice"] = "choice"
    answer: str
    options: list[str] = Field(min_length=2)

    @model_validator(mode="after")
    def _answer_is_an_option(self) -> ChoiceSpec:
        if self.answer.lower() not in {o.lower() for o in self.options}:
            raise ValueError(f"answer {self.answer!r} is not one of options {self.options}")
        return self


class EventExists(_Strict):
    """A calendar event exists whose fields match (strings: case-insensitive containment)."""

    check: Literal["event_exists"] = "event_exists"
    fields: dict[str, Any] = Field(min_length=1)
    count: Count = Field(default=1, ge=0)  # exactly this many matching events


class EventAbsent(_Strict):
    """No calendar event matches these fields (e.g. after a cancellation)."""

    check: Literal["event_absent"] = "event_absent"
    fields: dict[str, Any] = Field(min_length=1)


class EmailSent(_Strict):
    """An email was sent to ``to`` whose subject / body contain the given texts."""

    check: Literal["email_sent"] = "email_sent"
    to: str
    subject_contains: list[Alias] = Field(default_factory=list)
    body_contains: list[Alias] = Field(default_factory=list)


class NotificationSent(_Strict):
    """A notification went to ``channel`` (slack/teams/email) containing the given texts."""

    check: Literal["notification"] = "notification"
    channel: str
    recipient: str | None = None
    contains: list[Alias] = Field(default_factory=list)


class FileContent(_Strict):
    """A scratch file exists and contains the given texts."""

    check: Literal["file"] = "file"
    path: str
    contains: list[Alias] = Field(default_factory=list)


class NothingSent(_Strict):
    """No email or notification was sent (for requests that must not be carried out)."""

    check: Literal["nothing_sent"] = "nothing_sent"


StateCheck = Annotated[
    EventExists | EventAbsent | EmailSent | NotificationSent | FileContent | NothingSent,
    Field(discriminator="check"),
]


class StateSpec(_Strict):
    """World-state checks after the trial; all must hold."""

    kind: Literal["state"] = "state"
    checks: list[StateCheck] = Field(min_length=1)


class CodeSpec(_Strict):
    """Code the agent wrote (in scratch file ``file``, else in the answer) passes ``tests``."""

    kind: Literal["code"] = "code"
    file: str | None = None
    tests: str = Field(min_length=1)


class RefusalSpec(_Strict):
    """Whether the agent should refuse, comply, or stop and ask to verify."""

    kind: Literal["refusal"] = "refusal"
    expect: Literal["refuse", "comply", "verify"]


class AllSpec(_Strict):
    """Every sub-scorer must pass (e.g. an email was sent AND the answer names the time)."""

    kind: Literal["all"] = "all"
    scorers: list[ScorerSpec] = Field(min_length=2)


ScorerSpec = Annotated[
    NumericSpec | EntitiesSpec | ChoiceSpec | StateSpec | CodeSpec | RefusalSpec | AllSpec,
    Field(discriminator="kind"),
]
AllSpec.model_rebuild()


def scorer_kinds(spec: ScorerSpec) -> set[str]:
    """The kinds used by a scorer spec, looking inside ``all``."""
    if isinstance(spec, AllSpec):
        return set().union(*(scorer_kinds(s) for s in spec.scorers))
    return {spec.kind}


def refusal_expectation(spec: ScorerSpec) -> str | None:
    """``refuse`` / ``comply`` / ``verify`` if the spec contains a refusal rule, else None."""
    if isinstance(spec, RefusalSpec):
        return spec.expect
    if isinstance(spec, AllSpec):
        for sub in spec.scorers:
            found = refusal_expectation(sub)
            if found:
                return found
    return None


# -- reference solution and task -----------------------------------------------------------

class ReferenceAction(_Strict):
    """One intended tool call."""

    tool: str
    arguments: dict[str, Any] = Field(default_factory=dict)


class Reference(_Strict):
    """The intended solution: tool calls in order, then the final answer."""

    actions: list[ReferenceAction] = Field(default_factory=list)
    answer: str = Field(min_length=1)


class Task(_Strict):
    """One agent task."""

    id: str
    suite: Suite
    group: Group
    dimension: Dimension | None = None
    instruction: str = Field(min_length=10)
    tools: list[str] = Field(default_factory=list)
    difficulty: Count = Field(ge=1, le=5)
    world_seed: Count = 0
    scorer: ScorerSpec
    reference: Reference
    paraphrases: list[str] = Field(default_factory=list)
    evidence: list[Evidence] = Field(
        default_factory=list,
        description="what a successful tool result must show for a right answer to count as "
                    "grounded; default: the scorer's numbers and required entities")
    faults: list[FaultKind] = Field(default_factory=list)
    fault_tool: str | None = None
    fixed: str | None = Field(
        default=None, min_length=10, exclude=True,
        description="why the task is the same in every world by design (certification "
                    "rejects such a family otherwise); never part of the task's record")
    min_repeats: Count = Field(
        default=1, ge=1, le=10,
        description="the fewest repeats its measurement needs: a run gives the task "
                    "max(repeats, min_repeats); consistency tasks need 2+ (pass^k)")

    @model_validator(mode="after")
    def _consistent(self) -> Task:
        if not TASK_ID.match(self.id):
            raise ValueError(f"id {self.id!r} must look like IR-1 (capital letters, dash, number)")
        if self.suite == "reliability" and self.dimension is None:
            raise ValueError("a reliability task needs a dimension")
        if self.suite == "capability" and self.dimension is not None:
            raise ValueError("a capability task has no dimension")
        if self.dimension == "robustness" and len(self.paraphrases) != 3:
            raise ValueError("a robustness task needs exactly 3 paraphrases")
        if self.dimension == "fault_tolerance":
            if not self.faults:
                raise ValueError("a fault_tolerance task needs at least one fault kind")
            if self.fault_tool is None:
                raise ValueError("a fault_tolerance task needs a fault_tool")
        elif self.faults or self.fault_tool:
            raise ValueError("only fault_tolerance tasks list faults / a fault_tool")
        if self.fault_tool is not None and self.fault_tool not in self.tools:
            raise ValueError(f"fault_tool {self.fault_tool!r} is not among the task's tools")
        if "choice" in scorer_kinds(self.scorer) and not self.evidence:
            raise ValueError("a task scored by a choice needs `evidence`: the tool result that "
                             "supports the right option (a guess must not count)")
        used = {a.tool for a in self.reference.actions}
        if missing := sorted(used - set(self.tools)):
            raise ValueError(f"reference uses tools not listed in tools: {missing}")
        return self

    @property
    def expected_behaviour(self) -> str | None:
        """``refuse`` / ``comply`` / ``verify`` for tasks scored on refusal, else None."""
        return refusal_expectation(self.scorer)
