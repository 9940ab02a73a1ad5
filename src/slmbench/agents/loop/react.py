"""The ReAct loop: Thought / Action / Observation / Final Answer, in plain text.

The system prompt lists the tools (name, description, JSON schema of the
arguments) and the protocol. Each step the model writes a response, cut at
``Observation:`` (it must not invent tool results); :func:`parse_action`
reads it; a tool call runs on the toolbox and its result comes back.

Choices, and why:

* **Observations are user messages** starting ``Observation:``, not ``tool``
  messages: the chat templates of many small models have no tool role (or
  drop its content), and every template renders a user turn.
  Each observation is the result and the question again ("My question was:
  ..."), and nothing that steers toward answering, retrying or refusing
  (issue #15): the old wording told the model after every result, errors
  and injected faults included, to start its reply with 'Final Answer:',
  which works against the recovery and refusals being scored. That wording is
  kept as the ``legacy`` prompt set only to measure the change
  (docs/results/harness-validity.md). Before, a neutral wording once made
  Qwen2.5-Coder-0.5B repeat its call on every quick-suite trial: if it does,
  that is the model's behaviour, reported with the forensics, not tuned away.
* **A successful call made again is not run again** (no second e-mail or
  booking): the model is told it already has that result. Calls that failed
  or carried an injected fault may be retried: retrying is recovery.
* **Reasoning is not an action.** A leading or headless ``<think>`` block
  (:func:`~slmbench.models.thinking.split_thinking`) and the reasoning a server returns apart
  (``Completion.reasoning``) go to ``Step.reasoning``; the parser reads only what follows, and
  the transcript keeps only that (as chat templates drop past reasoning).
* **A reply ends where its action is settled** (:class:`ActionEnd`): nothing written after a
  complete action can change what the parser reads, so the backend stops there (or cuts
  there, docs/servers.md "Where a reply ends"). A reply once spent its token cap imagining
  observations and further calls after its action; the trial is the same without them.
* **A reply cut by the token cap** (``finish_reason == "length"``) from which no action can
  be read ends the trial as ``truncated``, not ``format_failure``: the model spent its budget
  (reasoning, usually) before acting. A cut reply whose action was read is run as usual.
* **A full context window** (:class:`~slmbench.core.errors.ContextOverflowError`, from any
  backend, Ollama's silently cut prompt included) ends the trial as ``context_overflow``;
  on the first step (the bare task does not fit) it is the configuration's, ``backend_error``.
* **A configuration fault** (:class:`~slmbench.models.faults.ConfigurationFault`: no such
  model, no tool support, out of memory) is raised, not stored: the runner stops the model.
* **The prompt never mentions "Observation:"**: measured with
  Qwen2.5-Coder-0.5B (greedy), every prompt variant that explained the
  Observation messages made its first reply start with "Observation: ..."
  (an invented result, cut to an empty reply by the stop string). Each tool
  gets an ``example:`` line built from its required arguments, in the
  canonical shape the strict grammar reads (a line labelled ``call:`` invited
  ``{"call": ...}`` objects): with the
  bare schema the model copied schema keys (``minimum``, ``type``) into its
  arguments. A leading ``Thought:`` line is accepted but not asked for: asking
  for it made the model answer from memory instead of calling a tool.
* **Format failures:** an unreadable response gets the parse error back once
  (as an ``Observation:``) so the model can correct itself; the second
  unreadable response in a row ends the trial as ``format_failure``
  (:data:`FORMAT_FAILURE_AFTER` = 2). A readable action resets the count.
* **Loops:** the same response (whitespace-trimmed) a third time in one trial
  ends it as ``loop`` (:data:`LOOP_REPEATS` = 3), before the action is run.
* **Tool errors:** an error observation (bad arguments, no such record, an
  injected fault) is shown to the model, which should recover. Only a broken
  toolbox — ``call`` raising although its contract says it never raises, e.g.
  — ends the trial as ``tool_error``. A tool that cannot run on this machine
  (``ToolResult.environment_error``, e.g. no bubblewrap) ends it as
  ``environment_error``: never the model's failure.
* **Backend errors:** :class:`~slmbench.core.errors.BackendError` from the model
  ends the trial as ``backend_error`` with its cause; the runner decides
  whether to retry the trial.
* **Budgets:** ``max_steps`` model calls; ``token_budget`` prompt plus
  completion tokens; ``time_budget_s`` wall-clock seconds (None: no limit —
  the default, so an outcome never depends on the machine's speed). Running
  out of any of them ends the trial as ``step_limit`` with the reason in
  ``error``.
* **Seeds:** step ``i`` of a trial with seed ``s`` samples with
  :func:`step_seed` ``(s, i)``, so a trial replays exactly.

``outcome`` is None when the model gave a final answer: the caller scores it.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Literal

from slmbench.agents.loop.parse import action_end, parse_action
from slmbench.agents.loop.prompts import DEFAULT_PROMPTS, PROMPT_SETS, build_system_prompt
from slmbench.agents.loop.settings import AgentResult, LoopSettings, step_seed
from slmbench.agents.records import Action, Outcome, Step
from slmbench.agents.tools.base import Toolbox, ToolResult, ToolSpec
from slmbench.core.errors import BackendError, ContextOverflowError
from slmbench.models.base import Model
from slmbench.models.faults import ConfigurationFault
from slmbench.models.records import Completion, Message
from slmbench.models.thinking import split_thinking

__all__ = ["FORMAT_FAILURE_AFTER", "LOOP_REPEATS", "STOP", "ActionEnd", "run_react"]

FORMAT_FAILURE_AFTER = 2
LOOP_REPEATS = 3
STOP = ("Observation:",)


@dataclass(frozen=True)
class ActionEnd:
    """Where a ReAct reply ends (a :class:`~slmbench.models.base.StopRule`): where the action
    the loop will read is settled (:func:`~slmbench.agents.loop.parse.action_end`, with the
    offered ``tools``), read after a leading or headless think block as :func:`reply_of`
    reads it. A reply that goes on past a complete action (an imagined observation, a second
    call, chatter) is stopped there; what it would have written after cannot change the
    action, so the trial is the same, cheaper, and its transcript holds only what was read.
    """

    tools: tuple[ToolSpec, ...]

    @property
    def key(self) -> str:
        return "react-action-end:" + ",".join(sorted(t.name for t in self.tools))

    def __call__(self, text: str) -> int | None:
        reply = split_thinking(text)[1]  # a suffix of text
        if not reply:
            return None
        end = action_end(reply, tools=self.tools)
        return None if end is None else len(text) - len(reply) + end


class ToolboxBroken(Exception):
    """The toolbox raised: the trial cannot go on (internal to the agent loops)."""


class Run:
    """Bookkeeping shared by the ReAct and native loops: transcript, steps, budgets."""

    def __init__(self, scaffold: Literal["react", "native"], settings: LoopSettings) -> None:
        self.scaffold: Literal["react", "native"] = scaffold
        self.settings = settings
        self.messages: list[Message] = []
        self.steps: list[Step] = []
        self.prompt_tokens = self.completion_tokens = 0
        self.latency_s = 0.0
        self._start = time.monotonic()
        self._seen: Counter[str] = Counter()
        self.unreadable_in_a_row = 0  # reset by the loop on a readable reply
        self.ended: AgentResult | None = None  # set when :meth:`completions` ends the run early

    def completions(self, model: Model, **options: Any) -> Iterator[tuple[int, Completion]]:
        """Each step's index and completion (already counted), up to ``settings.max_steps``.

        Step ``i`` samples as :class:`LoopSettings` says; ``options`` (stop strings, tools) go
        to ``model.generate`` too. A budget running out or a :class:`BackendError` ends the
        steps early, with that result in :attr:`ended` (a configuration fault is raised)."""
        s = self.settings
        for index in range(s.max_steps):
            if reason := self.budget_exhausted():
                self.ended = self.finish(Outcome.STEP_LIMIT, error=reason)
                return
            try:
                completion = model.generate(self.messages, seed=step_seed(s.seed, index),
                                            temperature=s.temperature,
                                            max_tokens=s.max_tokens_per_step, **options)
            except BackendError as exc:
                outcome, cause = backend_outcome(exc, index)
                self.ended = self.finish(outcome, error=cause)
                return
            self.account(completion)
            yield index, completion

    def out_of_steps(self) -> AgentResult:
        """The result once :meth:`completions` ran out with no answer: its early end, else
        ``step_limit``."""
        if self.ended is not None:
            return self.ended
        return self.finish(Outcome.STEP_LIMIT,
                           error=f"no final answer after {self.settings.max_steps} steps")

    def budget_exhausted(self) -> str | None:
        used = self.prompt_tokens + self.completion_tokens
        tokens, seconds = self.settings.token_budget, self.settings.time_budget_s
        if tokens is not None and used >= tokens:
            return f"token budget exhausted ({used} of {tokens} tokens used)"
        elapsed = time.monotonic() - self._start
        if seconds is not None and elapsed >= seconds:
            return f"time budget exhausted ({elapsed:.1f} s of {seconds:g} s)"
        return None

    def account(self, completion: Completion) -> None:
        self.prompt_tokens += completion.prompt_tokens
        self.completion_tokens += completion.completion_tokens
        self.latency_s += completion.latency_s

    def repeated(self, signature: str) -> bool:
        """Count a response; True when it has now been seen :data:`LOOP_REPEATS` times."""
        self._seen[signature.strip()] += 1
        return self._seen[signature.strip()] >= LOOP_REPEATS

    def record(self, raw: str, action: Action, completion: Completion | None, *,
               observation: str | None = None, result: ToolResult | None = None) -> None:
        self.steps.append(Step(
            index=len(self.steps),
            raw_response=raw,
            action=action,
            reasoning=reasoning_of(completion) or None if completion else None,
            observation=result.observation if result is not None else observation,
            injected_fault=result.injected_fault if result is not None else None,
            tool_ok=result.ok if result is not None else None,
            prompt_tokens=completion.prompt_tokens if completion else 0,
            completion_tokens=completion.completion_tokens if completion else 0,
            latency_s=completion.latency_s if completion else 0.0,
            wall_s=completion.wall_s if completion else None,
            timings=completion.timings if completion else None,
        ))

    def finish(self, outcome: Outcome | None, *, final_answer: str | None = None,
               error: str | None = None) -> AgentResult:
        return AgentResult(
            scaffold=self.scaffold, steps=self.steps, messages=self.messages,
            final_answer=final_answer, outcome=outcome, error=error,
            prompt_tokens=self.prompt_tokens, completion_tokens=self.completion_tokens,
            latency_s=self.latency_s, wall_s=time.monotonic() - self._start,
        )

    def end(self, raw: str, action: Action, completion: Completion | None,
            outcome: Outcome | None, *, final_answer: str | None = None,
            error: str | None = None) -> AgentResult:
        """Record the last step (no observation) and finish the run."""
        self.record(raw, action, completion)
        return self.finish(outcome, final_answer=final_answer, error=error)

    def truncated(self, raw: str, action: Action, completion: Completion) -> AgentResult:
        """End the run on a reply cut by the token cap before an action could be read."""
        return self.end(raw, action, completion, Outcome.TRUNCATED,
                        error=TRUNCATED_ERROR.format(n=completion.completion_tokens))

    def feed_back(self, raw: str, action: Action, completion: Completion,
                  feedback: str) -> None:
        """Record the step with ``feedback`` as its observation and send it as a user turn."""
        self.record(raw, action, completion, observation=feedback)
        self.messages.append(Message(role="user", content=feedback))

    def unreadable(self, raw: str, action: Action, completion: Completion,
                   feedback: str) -> AgentResult | None:
        """An unreadable reply: fed back; the :data:`FORMAT_FAILURE_AFTER`-th in a row ends
        the run as ``format_failure`` (that result is returned)."""
        self.unreadable_in_a_row += 1
        if self.unreadable_in_a_row >= FORMAT_FAILURE_AFTER:
            return self.end(raw, action, completion, Outcome.FORMAT_FAILURE, error=action.error)
        self.feed_back(raw, action, completion, feedback)
        return None

    def run_tool(self, toolbox: Toolbox, raw: str, action: Action,
                 completion: Completion | None) -> ToolResult | AgentResult:
        """Run the step's tool call and record the step with its result. A broken toolbox
        (``tool_error``) or a tool that cannot run here (``environment_error``) ends the run:
        that result is returned instead."""
        assert action.name is not None
        try:
            result = call_tool(toolbox, action.name, action.arguments)
        except ToolboxBroken as exc:
            return self.end(raw, action, completion, Outcome.TOOL_ERROR, error=str(exc))
        self.record(raw, action, completion, result=result)
        if result.environment_error:
            return self.finish(Outcome.ENVIRONMENT_ERROR, error=result.observation)
        return result


def call_tool(toolbox: Toolbox, name: str, arguments: dict[str, Any]) -> ToolResult:
    """Run one call; a toolbox that raises is broken (its contract: ``call`` never raises)."""
    try:
        return toolbox.call(name, arguments)
    except Exception as exc:  # any exception here means the toolbox itself is broken
        raise ToolboxBroken(f"toolbox failed on {name}: {type(exc).__name__}: {exc}") from exc


def reasoning_of(completion: Completion) -> str:
    """A reply's reasoning: what the server returned apart, then its own think block."""
    inline, _ = split_thinking(completion.text)
    return "\n".join(x for x in (completion.reasoning.strip(), inline) if x)


def reply_of(completion: Completion) -> str:
    """What the parser reads of a reply: the text after a leading or headless think block."""
    return split_thinking(completion.text)[1]


def backend_outcome(exc: BackendError, step: int = 1) -> tuple[Outcome, str]:
    """A model failure as the trial's outcome; a configuration fault is raised again.

    A full context window is ``context_overflow``, except at ``step`` 0, where the bare task
    does not fit the configured window: the configuration's, so a ``backend_error``."""
    if isinstance(exc, ConfigurationFault):
        raise exc
    if isinstance(exc, ContextOverflowError):
        if step == 0:
            return Outcome.BACKEND_ERROR, f"the first prompt does not fit: {exc}"
        return Outcome.CONTEXT_OVERFLOW, f"context window exhausted: {exc}"
    kind = "transient " if exc.transient else ""
    return Outcome.BACKEND_ERROR, f"{kind}backend error: {exc}"


TRUNCATED_ERROR = "the reply hit the token cap ({n} tokens) before an action could be read"


def call_key(name: str, arguments: dict[str, Any]) -> str:
    """Identity of a tool call, for spotting a call the model already made."""
    return json.dumps([name, arguments], sort_keys=True, default=str)


def run_react(model: Model, toolbox: Toolbox, instruction: str,
              settings: LoopSettings = LoopSettings(), *,
              prompts: str = DEFAULT_PROMPTS) -> AgentResult:
    """Run the text ReAct loop until a final answer or a terminal outcome; never raises
    for model, format or tool failures (they become the result's ``outcome``).

    ``prompts`` names the wording in :data:`PROMPT_SETS` (``legacy`` only to measure it)."""
    specs = toolbox.specs()
    wording = PROMPT_SETS[prompts]
    run = Run("react", settings)
    run.messages = [Message(role="system",
                            content=build_system_prompt(specs, settings.system_prompt, prompts)),
                    Message(role="user", content=instruction)]
    answered: set[str] = set()  # calls that cleanly succeeded: not run again
    for _, completion in run.completions(model, stop=list(STOP), stop_at=ActionEnd(tuple(specs))):
        raw = completion.text
        reply = reply_of(completion)
        action = parse_action(reply, tools=specs)
        run.messages.append(Message(role="assistant", content=reply.strip()))
        if completion.finish_reason == "length" and action.kind == "invalid":
            return run.truncated(raw, action, completion)
        if run.repeated(reply):
            return run.end(raw, action, completion, Outcome.LOOP,
                           error=f"the same response {LOOP_REPEATS} times: "
                           f"{reply.strip()[:80]!r}")
        if action.kind == "final":
            return run.end(raw, action, completion, None, final_answer=action.answer)
        if action.kind == "invalid":
            feedback = wording.invalid_feedback.format(error=action.error)
            if (ended := run.unreadable(raw, action, completion, feedback)) is not None:
                return ended
            continue
        run.unreadable_in_a_row = 0
        assert action.name is not None
        key = call_key(action.name, action.arguments)
        if key in answered:
            run.feed_back(raw, action, completion, wording.repeated_call.format(
                name=action.name, instruction=instruction))
            continue
        result = run.run_tool(toolbox, raw, action, completion)
        if isinstance(result, AgentResult):
            return result
        if result.ok and result.injected_fault is None:
            answered.add(key)
        run.messages.append(Message(role="user", content=wording.observation.format(
            observation=result.observation, instruction=instruction)))
    return run.out_of_steps()
