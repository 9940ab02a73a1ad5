"""Read a model's decision on one micro-task item, two ways, and record both.

* **logprob**: ``model.score(messages, forms)``; each option's log-probability is the
  log-sum-exp over its surface forms (``approve`` and ``Approve``), and options are ranked by
  it (the decision is the top one). Also stored: each option's log-probability, so thresholds
  can be swept later.
* **generation**: greedy decoding (temperature 0), the reply parsed back to options; a
  reply that names no option is a *format failure*, kept apart from a wrong answer. A
  leading or headless ``<think>`` block is split off first
  (:func:`slmbench.models.thinking.split_thinking`): an option named only inside the
  reasoning is not the decision, and a reply cut inside its reasoning names none.

A backend without log-probabilities (:class:`~slmbench.core.errors.LogprobsUnsupportedError`)
gets only the generation reading, and the record says so in ``note``.

A reading is split in two so it can be stored and reused: :func:`read_raw` asks the model
(the costly part) and :func:`build_reading` derives the rankings and the format failure from
its raw outputs (pure; rerun on every load, so a parser fix reaches stored readings).
"""

from __future__ import annotations

import hashlib
import time
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field
from scipy.special import logsumexp

from slmbench.core.errors import LogprobsUnsupportedError
from slmbench.microtasks.datasets.records import AnyItem, TaskName
from slmbench.microtasks.spec import MicroTask
from slmbench.models.base import Model
from slmbench.models.records import Message
from slmbench.models.thinking import split_thinking

Reading = Literal["generation", "logprob"]
NO_LOGPROBS_NOTE = "backend gives no log-probabilities: decision read from generation only"


class ItemReading(BaseModel):
    """One model's two readings of one item under one prompt."""

    model_config = ConfigDict(frozen=True)

    item_id: str
    task: TaskName
    prompt_id: str
    options: list[str]
    logprobs: dict[str, float] | None
    logprob_ranking: list[str] | None
    reply: str
    generation_ranking: list[str]  # [] = format failure
    note: str | None = None
    # the model's time for the log-prob reading alone (RawReading.score_seconds): a cost,
    # not a decision, so it is in no record a run writes and in no comparison
    score_seconds: float | None = Field(default=None, exclude=True)

    def __eq__(self, other: object) -> bool:
        """Equal when the decisions are: every field but the timing."""
        if not isinstance(other, ItemReading):
            return NotImplemented
        return self.model_dump() == other.model_dump()

    __hash__ = None  # type: ignore[assignment]  # mutable fields (dicts, lists) inside

    @property
    def format_failure(self) -> bool:
        return not self.generation_ranking

    def ranking(self, reading: Reading) -> list[str] | None:
        """The options in decided order for a reading (None: the reading is unavailable)."""
        return self.generation_ranking if reading == "generation" else self.logprob_ranking


def surface_forms(option: str) -> list[str]:
    """Spellings an option's log-probability sums over: a lower-case word also capitalised.

    Models often answer "Approve" rather than "approve"; scoring only the lower-case label
    would read a clear "Approve" preference as a weak one.
    """
    if option.isalpha() and option.islower():
        return [option, option.capitalize()]
    return [option]


class ModelInput(BaseModel):
    """Everything a reading sends to the model; its digest keys a stored reading."""

    model_config = ConfigDict(frozen=True)

    messages: list[Message]
    candidates: list[str]  # every option's surface forms, in option order
    temperature: float = 0.0
    seed: int = 0
    max_tokens: int

    def digest(self) -> str:
        """sha256 of the input: an edited prompt, item or option list gives another digest."""
        return hashlib.sha256(self.model_dump_json().encode()).hexdigest()


class RawReading(BaseModel):
    """What the model itself returned for one item; everything else is derived from it."""

    model_config = ConfigDict(frozen=True)

    candidate_logprobs: list[float] | None  # aligned with ModelInput.candidates; None: no lps
    reply: str
    note: str | None = None
    seconds: float = Field(default=0.0, ge=0.0)  # wall time of the two model calls
    # wall time of the score call alone (None: no log-probs, or stored before it was timed)
    score_seconds: float | None = Field(default=None, ge=0.0)
    # generate's prompt and reply tokens, plus every candidate form's tokens that score read
    # (None: stored before slmbench recorded them)
    tokens: int | None = Field(default=None, ge=0)


def model_input(task: MicroTask, prompt_id: str, item: AnyItem,
                messages: list[Message] | None = None) -> ModelInput:
    """What a reading of ``item`` sends: the prompt ``prompt_id`` renders, or ``messages``
    when a caller builds its own (the context probe's history), and the item's options."""
    forms = [f for o in task.options_for(item) for f in surface_forms(o)]
    return ModelInput(messages=task.render(prompt_id, item) if messages is None else messages,
                      candidates=forms, max_tokens=task.prompt_set().max_tokens)


def read_raw(model: Model, given: ModelInput) -> RawReading:
    """Ask the model: one ``score`` over the candidate forms, one greedy ``generate``."""
    start = time.perf_counter()
    lps: list[float] | None = None
    note = None
    scored = 0
    score_seconds = None
    try:
        scores = model.score(given.messages, given.candidates)
        score_seconds = time.perf_counter() - start
        lps = [float(s.logprob) for s in scores]
        scored = sum(s.n_tokens for s in scores)
    except LogprobsUnsupportedError:
        note = NO_LOGPROBS_NOTE
    out = model.generate(given.messages, temperature=given.temperature, seed=given.seed,
                         max_tokens=given.max_tokens)
    return RawReading(candidate_logprobs=lps, reply=out.text, note=note,
                      seconds=time.perf_counter() - start, score_seconds=score_seconds,
                      tokens=out.prompt_tokens + out.completion_tokens + scored)


def option_logprobs(options: list[str], candidate_logprobs: list[float]) -> dict[str, float]:
    """Each option's log-probability: the log-sum-exp over its surface forms' log-probs
    (``candidate_logprobs``, aligned with :func:`model_input`'s candidates).

    Raises ``ValueError`` if there is not one log-prob per candidate form.
    """
    forms = [(o, f) for o in options for f in surface_forms(o)]
    if len(candidate_logprobs) != len(forms):
        raise ValueError(f"{len(candidate_logprobs)} log-probs for {len(forms)} "
                         "candidate forms")
    by_option: dict[str, list[float]] = {o: [] for o in options}
    for (option, _), lp in zip(forms, candidate_logprobs, strict=True):
        by_option[option].append(lp)
    return {o: float(logsumexp(v)) for o, v in by_option.items()}


def by_logprob(options: list[str], logprobs: dict[str, float]) -> list[str]:
    """``options`` by log-probability, best first (ties: the order of ``options``)."""
    return sorted(options, key=lambda o: (-logprobs[o], options.index(o)))


def logprob_ranking(model: Model, task: MicroTask, prompt_id: str, item: AnyItem
                    ) -> tuple[list[str], float]:
    """The log-prob reading alone, at run time (no store, no generation): the item's
    options in the order a stored reading's ``logprob_ranking`` would give, and the seconds
    the score call took. Raises LogprobsUnsupportedError on a backend without log-probs."""
    given = model_input(task, prompt_id, item)
    start = time.perf_counter()
    scores = model.score(given.messages, given.candidates)
    seconds = time.perf_counter() - start
    options = task.options_for(item)
    return by_logprob(options, option_logprobs(options, [float(s.logprob) for s in scores])), \
        seconds


def build_reading(task: MicroTask, prompt_id: str, item: AnyItem, raw: RawReading
                  ) -> ItemReading:
    """The :class:`ItemReading` of raw model outputs, with the current ranking and parser.

    Raises ``ValueError`` if ``raw`` does not have one log-prob per candidate form.
    """
    options = task.options_for(item)
    logprobs: dict[str, float] | None = None
    ranked = None
    if raw.candidate_logprobs is not None:
        logprobs = option_logprobs(options, raw.candidate_logprobs)
        ranked = by_logprob(options, logprobs)
    return ItemReading(item_id=item.id, task=task.name, prompt_id=prompt_id, options=options,
                       logprobs=logprobs, logprob_ranking=ranked, reply=raw.reply,
                       generation_ranking=task.parse_reply(split_thinking(raw.reply)[1], options),
                       note=raw.note, score_seconds=raw.score_seconds)


def read_item(model: Model, task: MicroTask, prompt_id: str, item: AnyItem) -> ItemReading:
    """Read one item with the model (no store): :func:`read_raw` then :func:`build_reading`."""
    return build_reading(task, prompt_id, item,
                         read_raw(model, model_input(task, prompt_id, item)))
