"""Which trials are never the model's: excluded from every rate, counted apart.

A trial is not the model's when it ended ``backend_error`` or ``environment_error``, and when
it ended ``context_overflow`` in a window smaller than the one the model was trained for: the
window is a setting (``llamacpp:``'s default is 4096 tokens, Qwen2.5-Coder was trained for
32,768), and "a context we set too small" is ours, not the model's (DEVELOPERS.md). Such a
trial is counted apart as ``context_set_below_trained``. Where the trained window or the set
one is not known (a server that reports neither), nobody can tell whose limit it was: counted
apart as ``context_unattributed``. Only an overflow at or past the model's own window is the
model's failure, like ``step_limit``: the conversation it wrote outgrew what it can read.

The trained window is the trial's recorded ``settings["n_ctx_train"]`` (the llama.cpp
backend reads it from the GGUF; ``hf:`` runs in the model's own window and records it as
both), else the model registry's ``context`` for the model (trials
stored before the backend recorded it). The set window is ``settings["n_ctx"]`` (Ollama's
``num_ctx``).

Excluding these trials is not ignorable missingness (a conversation long enough to overflow
is rarely on its way to a success), so every analysis shows their count beside its rates.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache

from slmbench.agents.records import NOT_THE_MODELS, Outcome, Trial
from slmbench.core.errors import ConfigError
from slmbench.models.catalog import load_registry
from slmbench.models.spec import parse_spec

__all__ = ["BELOW_TRAINED", "UNATTRIBUTED", "excluded_as", "rated", "trained_window"]

BELOW_TRAINED = "context_set_below_trained"
UNATTRIBUTED = "context_unattributed"


@lru_cache(maxsize=256)
def _registry_context(model: str) -> int | None:
    """The registry's trained window for a model spec (None: not listed, or not known)."""
    try:
        parsed = parse_spec(model)
        entry = load_registry().for_spec(parsed.backend, parsed.target)
    except ConfigError:
        return None
    return None if entry is None else entry.context


def trained_window(trial: Trial) -> int | None:
    """The context window, in tokens, the trial's model was trained for (None: not known)."""
    recorded = trial.settings.get("n_ctx_train")
    if isinstance(recorded, int) and recorded > 0:
        return recorded
    return _registry_context(trial.model)


def _set_window(trial: Trial) -> int | None:
    for key in ("n_ctx", "num_ctx"):
        value = trial.settings.get(key)
        if isinstance(value, int) and value > 0:
            return value
    return None


def excluded_as(trial: Trial) -> str | None:
    """Why ``trial`` is never the model's (the label it is counted apart under), or None
    when it is the model's and every rate counts it."""
    if trial.outcome in NOT_THE_MODELS:
        return trial.outcome.value
    if trial.outcome != Outcome.CONTEXT_OVERFLOW:
        return None
    trained, window = trained_window(trial), _set_window(trial)
    if trained is None or window is None:
        return UNATTRIBUTED
    return BELOW_TRAINED if window < trained else None


def rated(trials: Iterable[Trial]) -> list[Trial]:
    """The trials that are the model's, in order: what every rate counts."""
    return [t for t in trials if excluded_as(t) is None]
