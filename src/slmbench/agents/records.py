"""Records of one agent trial: its steps, its outcome, its transcript.

Every trial ends in exactly one :class:`Outcome`. These records are what the
run store keeps (as JSON) and what analysis reads back.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from slmbench.models.records import Message, ServerTimings

# 2: toolset, prompts, harness fingerprint, forensics; 3: truncated and context_overflow
# outcomes, a step's reasoning, the backend's settings (a step's wall_s and timings came
# later as optional fields: a schema 3 record without them still loads; so did ``instance``,
# the world seed of the task's instance: a record without it is of the curated task, 0);
# 4: the ``question`` the trial was asked (a record of schema 3 or below loads without one, and
# ``slmbench.agents.questions.question_of`` rebinds it where the binders are the run's);
# 5: the ``level`` of the difficulty ladder the trial ran (a record without it ran the base
# instance, today's task: ``"base"``, the field's default)
TRIAL_SCHEMA_VERSION = 5


class Score(BaseModel):
    """A scorer's verdict: a value in [0, 1], a pass flag and a one-line reason."""

    model_config = ConfigDict(frozen=True)

    value: float = Field(ge=0.0, le=1.0)
    passed: bool
    reason: str


class Outcome(StrEnum):
    SUCCESS = "success"
    WRONG_ANSWER = "wrong_answer"
    FORMAT_FAILURE = "format_failure"
    STEP_LIMIT = "step_limit"
    LOOP = "loop"
    TOOL_ERROR = "tool_error"
    BACKEND_ERROR = "backend_error"
    REFUSED = "refused"
    UNGROUNDED = "ungrounded"  # a right answer that no successful tool result supports
    DUMPED = "dumped"  # a right token inside a tool dump, not an answer (docs/scoring.md)
    ENVIRONMENT_ERROR = "environment_error"  # a tool could not run here (no sandbox)
    # a reply cut by the token cap before an action could be read (docs/scoring.md): the
    # model's own behaviour under the budget, counted as a failure, never a format failure
    TRUNCATED = "truncated"
    # the conversation outgrew the context window during the trial (every backend: refused,
    # or cut by the server and caught); a failure, like step_limit, where the window was the
    # model's own; below the window it was trained for, ours (agents/exclusion.py)
    CONTEXT_OVERFLOW = "context_overflow"


# Outcomes that are never the model's: excluded from every rate, counted on their own (with
# the overflows that agents/exclusion.py finds are the window's, not the model's).
NOT_THE_MODELS = frozenset({Outcome.BACKEND_ERROR, Outcome.ENVIRONMENT_ERROR})


ActionKind = Literal["tool", "final", "invalid"]
# The grammar the ReAct protocol teaches: {"name": ..., "arguments": {...}} as JSON, or
# "Final Answer: ..."; native tool calls are structured. Everything else is tolerance.
STRICT_FORMATS = frozenset({"json", "final", "native"})


class Action(BaseModel):
    """What the parser read from one model response."""

    model_config = ConfigDict(frozen=True)

    kind: ActionKind
    name: str | None = None
    arguments: dict[str, Any] = Field(default_factory=dict)
    answer: str | None = None
    # which rule read it: json, fenced_json, action_lines, xml, call, final, native, with
    # +alias / +python / +args_only for tolerant readings (slmbench.agents.loop.parse)
    format: str | None = None
    error: str | None = None  # why a response is invalid (format failure reason)

    @property
    def strict(self) -> bool:
        """Read by the strict grammar the protocol teaches (canonical JSON or Final Answer)."""
        return self.kind != "invalid" and self.format in STRICT_FORMATS


class FaultPlan(BaseModel):
    """A fault to inject: into ``tool``, on its ``call``-th call (1-based), of kind ``fault``."""

    model_config = ConfigDict(frozen=True)

    tool: str
    call: int = Field(default=1, ge=1)
    fault: Literal[
        "timeout", "rate_limit", "internal_error", "schema_drift", "malformed_result",
        "empty_result",
    ]


class Step(BaseModel):
    """One turn of the loop: the model's response, the parsed action and what came back."""

    model_config = ConfigDict(frozen=True)

    index: int
    raw_response: str  # the reply as the model wrote it (a <think> block included)
    action: Action
    # the reply's reasoning, never read for an action: a leading or headless <think> block
    # (slmbench.models.thinking) and what a server returned apart (Ollama's thinking)
    reasoning: str | None = None
    observation: str | None = None
    injected_fault: str | None = None  # the fault kind, when this step's tool call was faulted
    tool_ok: bool | None = None  # None when no tool was called
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0  # the model's own time: the server's where it reports it, else wall
    wall_s: float | None = None  # the request's wall time (None: not recorded)
    timings: ServerTimings | None = None  # what the server said it spent (None: it said not)


class Forensics(BaseModel):
    """How a trial failed (``slmbench.agents.forensics``): per-step labels and one cause.

    ``steps[i]`` holds the labels of step ``i``; ``labels`` every label of the trial
    (steps and trial-level ones such as ``answered_after_error``); ``cause`` the one
    that explains the outcome (None for a success).
    """

    model_config = ConfigDict(frozen=True)

    steps: list[list[str]] = Field(default_factory=list)
    labels: list[str] = Field(default_factory=list)
    cause: str | None = None
    strict_format_failure: bool = False  # a format failure had only the strict grammar counted


class ReferenceCall(BaseModel):
    """One tool call of a question's reference solution."""

    model_config = ConfigDict(frozen=True)

    tool: str
    arguments: dict[str, Any] = Field(default_factory=dict)


class Question(BaseModel):
    """The question a trial was asked: its instance's facts as they were when it ran.

    Analysis judges a stored trial against these, never against what today's binders would
    draw for the same (task, instance) (``slmbench.agents.questions.question_of``). The
    scorer spec and evidence are kept as JSON (``agents/tasks/model.py`` is above this
    module): ``scorer`` validates as a ``ScorerSpec``, ``evidence`` as the task's list (empty:
    the scorer's numbers and required entities, ``agents/scoring/grounding.py``).
    """

    model_config = ConfigDict(frozen=True)

    # GENERATOR_VERSION of the binders that drew it (agents/world/generate.py); None: asked
    # by a slmbench from before the version existed (a curated task, which no binder draws)
    generator: int | None
    world_seed: int  # the world it was asked in (0: the curated world)
    instruction: str  # the task's instruction (a variant's rewording of it is in the messages)
    paraphrases: list[str] = Field(default_factory=list)  # its hand-written paraphrases
    tools: list[str]  # the task's tools (the toolset may offer all ten)
    reference: list[ReferenceCall] = Field(default_factory=list)  # the intended calls
    answer: str  # the reference solution's final answer
    evidence: list[Any] = Field(default_factory=list)
    scorer: dict[str, Any]


class Trial(BaseModel):
    """A finished trial: identity, full transcript, outcome and score."""

    model_config = ConfigDict(frozen=True)

    schema_version: int = TRIAL_SCHEMA_VERSION
    model: str
    task_id: str
    suite: str
    variant: str = "base"
    scaffold: Literal["react", "native"] = "react"
    toolset: Literal["task", "all"] = "task"  # the task's own tools, or all ten
    prompts: str = "neutral"  # the ReAct prompt set (slmbench.agents.loop.prompts.PROMPT_SETS)
    harness: str | None = None  # fingerprint of prompts, parser, tools, task and toolset
    temperature: float = 0.0
    seed: int = 0  # the sampling seed (slmbench.agents.runner.plan.derive_seed)
    repeat: int = 0
    instance: int = 0  # the world seed of the task's instance (0: the curated task)
    # the ladder's level (agents/tasks/families/levels): "base", the family's own instance,
    # or a generated level's number ("1", "2", ...)
    level: str = "base"
    outcome: Outcome
    final_answer: str | None = None
    score: Score | None = None
    steps: list[Step] = Field(default_factory=list)
    messages: list[Message] = Field(default_factory=list)
    fault_plan: FaultPlan | None = None
    faults_injected: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0  # time spent inside the model
    wall_s: float = 0.0
    error: str | None = None  # cause of a backend_error / tool_error
    world_state: dict[str, Any] = Field(default_factory=dict)  # post-trial snapshot, for audits
    forensics: Forensics | None = None
    # what the backend sent with every request: pinned sampling, think mode and budget,
    # context window, and any parameter the server may not honour (models/*.py settings)
    settings: dict[str, Any] = Field(default_factory=dict)
    # the question it was asked (None: a record of schema 3 or below, made before trials
    # recorded it; slmbench.agents.questions.question_of is how analysis gets one)
    question: Question | None = None

    @property
    def tool_sequence(self) -> list[str]:
        return [s.action.name for s in self.steps if s.action.kind == "tool" and s.action.name]

    @property
    def key(self) -> TrialKey:
        """This trial's identity in a run store."""
        return TrialKey(model=self.model, task=self.task_id, variant=self.variant,
                        temperature=self.temperature, seed=self.seed, repeat=self.repeat,
                        instance=self.instance, level=self.level)


class TrialKey(BaseModel):
    """The identity of one trial in a run. Temperatures are kept to 4 decimals.

    ``seed`` is the sampling seed; ``instance`` the world seed of the task's instance
    (``slmbench.agents.tasks.families.instance``; 0, the default, is the curated task, so a
    key stored before instances existed is instance 0); ``level`` the difficulty ladder's
    level (``"base"``, the default: the family's own instance, so a key stored before levels
    existed is its base)."""

    model_config = ConfigDict(frozen=True)

    model: str
    task: str
    variant: str = "base"
    temperature: float = 0.0
    seed: int = 0
    repeat: int = 0
    instance: int = 0
    level: str = "base"

    def model_post_init(self, __context: Any) -> None:
        object.__setattr__(self, "temperature", round(float(self.temperature), 4))

    def as_tuple(self) -> tuple[str, str, str, float, int, int, int, str]:
        """(model, task, variant, temperature, seed, repeat, instance, level): the store's key
        columns."""
        return (self.model, self.task, self.variant, self.temperature, self.seed, self.repeat,
                self.instance, self.level)
