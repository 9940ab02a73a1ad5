"""Configurations: a model spec under one toolset, and the names a row goes by (its spec,
what it runs, its size)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from slmbench.agents.records import Trial

ALL_TOOLS = " (all tools)"  # a configuration's mark: the model offered all ten tools


def configurations(trials: Sequence[Trial]) -> list[Trial]:
    """The trials, each named by its configuration: when they hold both toolsets, a trial
    offered all ten tools is named ``SPEC (all tools)``, so it is never pooled with (nor
    mistaken for) the same spec offered its task's own tools. Otherwise they are returned as
    they are (a run has one toolset). Idempotent."""
    if len({t.toolset for t in trials}) < 2:
        return list(trials)
    return [t.model_copy(update={"model": t.model + ALL_TOOLS})
            if t.toolset == "all" and not t.model.endswith(ALL_TOOLS) else t for t in trials]


def spec_of(configuration: str) -> str:
    """The model spec of a configuration name (:func:`configurations`)."""
    return configuration.removesuffix(ALL_TOOLS)


def target_of(model: str) -> str:
    """What a spec or configuration runs, without backend, options or server:
    ``llamacpp:/m/x.gguf?n_ctx=8192`` → ``/m/x.gguf``, ``openai:big@http://h/v1`` → ``big``."""
    return spec_of(model).split(":", 1)[-1].split("?", 1)[0].split("@", 1)[0]


def params_of(model: str, params: Mapping[str, float]) -> float | None:
    """Parameters (B) of a model spec or configuration: by full spec, by its target, or by its
    bare name."""
    if spec_of(model) in params:
        return params[spec_of(model)]
    target = target_of(model)
    for key in (target, Path(target).stem):
        if key in params:
            return params[key]
    return None
