"""Read a model's decision on one micro-task item, two ways, and record both.

* **logprob**: ``model.score(messages, forms)``; each option's log-probability is the
  log-sum-exp over its surface forms (``approve`` and ``Approve``), and options are ranked by
  it (the decision is the top one). Also stored: each option's log-probability, so thresholds
  can be swept later.
* **generation**: greedy decoding (temperature 0), the reply parsed back to options; a
  reply that names no option is a *format failure*, kept apart from a wrong answer.

A backend without log-probabilities (:class:`~slmbench.errors.LogprobsUnsupportedError`)
gets only the generation reading, and the record says so in ``note``.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict
from scipy.special import logsumexp

from slmbench.errors import LogprobsUnsupportedError
from slmbench.microtasks.datasets.records import AnyItem, TaskName
from slmbench.microtasks.prompts import options_for, parse_reply, prompt_set, render
from slmbench.models.base import Model

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


def read_item(model: Model, task: TaskName, prompt_id: str, item: AnyItem) -> ItemReading:
    messages = render(task, prompt_id, item)
    options = options_for(task, item)
    logprobs: dict[str, float] | None = None
    note = None
    forms = [(o, f) for o in options for f in surface_forms(o)]
    try:
        scores = model.score(messages, [f for _, f in forms])
        by_option: dict[str, list[float]] = {o: [] for o in options}
        for (option, _), s in zip(forms, scores, strict=True):
            by_option[option].append(s.logprob)
        logprobs = {o: float(logsumexp(v)) for o, v in by_option.items()}
    except LogprobsUnsupportedError:
        note = NO_LOGPROBS_NOTE
    reply = model.generate(messages, temperature=0.0, seed=0,
                           max_tokens=prompt_set(task).max_tokens).text
    ranked = None
    if logprobs is not None:
        ranked = sorted(options, key=lambda o: (-logprobs[o], options.index(o)))
    return ItemReading(item_id=item.id, task=task, prompt_id=prompt_id, options=options,
                       logprobs=logprobs, logprob_ranking=ranked, reply=reply,
                       generation_ranking=parse_reply(task, reply, options), note=note)
