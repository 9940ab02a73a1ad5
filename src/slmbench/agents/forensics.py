"""Why a trial failed: labels per step and per trial, and the one cause of its outcome.

Step labels (read from the parsed action and the toolbox's observation):

* ``no_call`` — the response holds neither a tool call nor a final answer (prose, empty);
* ``unparseable`` — it tried one (a brace, a tag, an ``Action:`` line) the parser could not read;
* ``unknown_tool`` — it called a tool that is not offered (a hallucinated name);
* ``invalid_arguments`` — the arguments failed the tool's schema;
* ``wrong_tool`` — an offered tool the task does not use (only possible with ``--toolset all``);
* ``repeated_call`` — a successful call made again with the same arguments;
* ``environment_error`` — the tool could not run on this machine.

Trial labels, from the final answer and the steps before it:

* ``refused`` — the final answer is a refusal (``slmbench.agents.scoring.classify``);
* ``gave_up_after_error`` — a refusal right after a failed tool call;
* ``answered_after_error`` — an answer right after a failed tool call, without retrying;
* ``answered_without_result`` — an answer (not a refusal) with no successful tool call.

:func:`diagnose` gives every label and the ``cause``: the label that explains the
outcome (None for a success). A format failure's cause is its last step's
label; a loop's is ``repeated_call`` when it repeated a successful call, else
its last failing step's label (e.g. the same invalid arguments again); a wrong
answer's the trial label if any, else the last failing step's label, else
``wrong_from_result`` (it had a result and answered wrong);
a terminal outcome with no label is its own name (``step_limit``, ``tool_error``,
``backend_error``).

``strict_format_failure`` replays the steps under the strict grammar
(``Action.strict``): a step read only by a tolerant rule counts as unreadable,
and two unreadable in a row is a format failure, as in the loop. It is a
counterfactual on the same responses: under a strict parser the model would
have been told its reply was unreadable and might have corrected it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Collection, Mapping, Sequence

from pydantic import BaseModel, ConfigDict

from slmbench.agents.exclusion import rated
from slmbench.agents.loop.react import FORMAT_FAILURE_AFTER
from slmbench.agents.records import Forensics, Outcome, Step, Trial
from slmbench.agents.scoring import classify
from slmbench.core import stats
from slmbench.core.stats import ClusteredEstimate, Estimate

__all__ = ["CAUSES", "FailureBreakdown", "breakdown", "diagnose", "step_labels",
           "strict_format_failure"]

# Every cause, in the order figures stack them.
CAUSES = ("no_call", "unparseable", "unknown_tool", "invalid_arguments", "wrong_tool",
          "repeated_call", "gave_up_after_error", "answered_after_error", "refused",
          "answered_without_result", "wrong_from_result", "step_limit", "tool_error",
          "environment_error", "backend_error")
_NO_CALL = ("the response is empty", "no tool call or final answer found",
            "an unfinished <think>", "an empty reply with no tool call")
_REPEATED = "Observation: you already called "


def _is_refusal(answer: str | None) -> bool:
    return bool(answer) and classify(answer).label == "refuse"


def step_labels(step: Step, task_tools: Collection[str] | None = None) -> list[str]:
    """The labels of one step; ``task_tools`` (the task's own tools) enables ``wrong_tool``."""
    action, seen = step.action, step.observation or ""
    if action.kind == "invalid":
        error = action.error or ""
        return ["no_call" if any(r in error for r in _NO_CALL) else "unparseable"]
    if action.kind != "tool":
        return []
    labels: list[str] = []
    if seen.startswith("error: unknown tool"):
        labels.append("unknown_tool")
    elif seen.startswith(("error: invalid arguments", "error: arguments for")):
        labels.append("invalid_arguments")
    elif seen.startswith(_REPEATED):
        labels.append("repeated_call")
    if task_tools is not None and action.name not in task_tools and "unknown_tool" not in labels:
        labels.append("wrong_tool")
    return labels


def _after_error(steps: list[Step]) -> bool:
    """The last tool call before the final answer failed (and was not retried)."""
    calls = [s for s in steps[:-1] if s.action.kind == "tool"]
    return bool(calls) and calls[-1].tool_ok is False


def _trial_labels(trial: Trial) -> list[str]:
    if trial.final_answer is None or not trial.steps:
        return []
    refusal = _is_refusal(trial.final_answer)
    if _after_error(trial.steps):
        return ["gave_up_after_error" if refusal else "answered_after_error"]
    if refusal:
        return ["refused"]
    if not any(s.tool_ok for s in trial.steps):
        return ["answered_without_result"]
    return []


def strict_format_failure(trial: Trial) -> bool:
    """Would the same responses have ended as a format failure under the strict grammar?"""
    if trial.outcome == Outcome.FORMAT_FAILURE:
        return True
    in_a_row = 0
    for step in trial.steps:
        in_a_row = in_a_row + 1 if not step.action.strict else 0
        if in_a_row >= FORMAT_FAILURE_AFTER:
            return True
    return False


def _cause(trial: Trial, per_step: list[list[str]], labels: list[str]) -> str | None:
    outcome = trial.outcome
    if outcome == Outcome.SUCCESS:
        return None
    if outcome in (Outcome.ENVIRONMENT_ERROR, Outcome.BACKEND_ERROR, Outcome.TOOL_ERROR,
                   Outcome.TRUNCATED, Outcome.CONTEXT_OVERFLOW,
                   Outcome.DUMPED):  # the outcome is the cause
        return outcome.value
    last = per_step[-1] if per_step else []
    if outcome == Outcome.FORMAT_FAILURE:
        return last[0] if last else "unparseable"
    if outcome == Outcome.LOOP:  # a repeated successful call, else what kept failing
        if any("repeated_call" in s for s in per_step):
            return "repeated_call"
        failing = [s[0] for s in per_step if s]
        return failing[-1] if failing else "repeated_call"
    trial_level = [x for x in labels if x in ("gave_up_after_error", "answered_after_error",
                                              "refused", "answered_without_result")]
    if trial_level:
        return trial_level[0]
    failing = [s[0] for s in per_step if s]
    if outcome == Outcome.STEP_LIMIT:
        return failing[-1] if failing else "step_limit"
    return failing[-1] if failing else "wrong_from_result"


def diagnose(trial: Trial, task_tools: Collection[str] | None = None) -> Forensics:
    """Every label of ``trial`` and the cause of its outcome (see the module docstring)."""
    per_step = [step_labels(s, task_tools) for s in trial.steps]
    if trial.outcome == Outcome.ENVIRONMENT_ERROR and per_step:
        per_step[-1] = [*per_step[-1], "environment_error"]
    labels = list(dict.fromkeys([x for s in per_step for x in s] + _trial_labels(trial)))
    return Forensics(steps=per_step, labels=labels, cause=_cause(trial, per_step, labels),
                     strict_format_failure=strict_format_failure(trial))


class FailureBreakdown(BaseModel):
    """How one model's trials failed: causes, step labels and strict-vs-tolerant format failures.

    Counts are over the trials the model is answerable for (backend and environment
    errors excluded); ``tolerant_steps`` are steps read only by a tolerant parser rule.
    """

    model_config = ConfigDict(frozen=True)

    model: str
    trials: int
    causes: dict[str, int]  # cause -> failing trials, in CAUSES order
    step_labels: dict[str, int]  # label -> steps
    steps: int
    tolerant_steps: int
    # task-level (ClusteredEstimate); a bare Estimate only when there are no trials
    format_failure: ClusteredEstimate | Estimate  # under the tolerant parser (as scored)
    strict_format_failure: ClusteredEstimate | Estimate  # the same responses, strict grammar


def breakdown(model: str, trials: Sequence[Trial],
              task_tools: Mapping[str, Collection[str]] | None = None) -> FailureBreakdown:
    """The :class:`FailureBreakdown` of ``model``'s ``trials`` (``task_tools``: id -> tools)."""
    counted = rated(trials)
    # recomputed from the steps (the stored Trial.forensics is what the rules said then)
    found = [diagnose(t, (task_tools or {}).get(t.task_id)) for t in counted]
    causes = Counter(f.cause for f in found if f.cause)
    labels = Counter(x for f in found for s in f.steps for x in s)
    steps = [s for t in counted for s in t.steps]
    n = len(counted)
    strict = {id(t): f.strict_format_failure for t, f in zip(counted, found, strict=True)}
    return FailureBreakdown(
        model=model, trials=n,
        causes={c: causes[c] for c in CAUSES if causes[c]} | {
            c: k for c, k in causes.items() if c not in CAUSES},
        step_labels=dict(sorted(labels.items())), steps=len(steps),
        tolerant_steps=sum(1 for s in steps if s.action.kind != "invalid" and not s.action.strict),
        format_failure=_share(counted, lambda t: t.outcome == Outcome.FORMAT_FAILURE),
        strict_format_failure=_share(counted, lambda t: strict[id(t)]))


def _share(trials: Sequence[Trial], ok: Callable[[Trial], bool]) -> Estimate:
    """The share of ``trials`` where ``ok`` holds, with its task-level interval (the task is
    the unit that repeats: ``stats.task_level_rate``)."""
    if not trials:
        return Estimate(estimate=None, low=None, high=None, method="task-level", n=0,
                        note="no trials")
    by: dict[str, list[Trial]] = {}
    for t in trials:
        by.setdefault(t.task_id, []).append(t)
    return stats.task_level_rate([(len(ts), sum(map(ok, ts))) for _, ts in sorted(by.items())])
