"""Reasoning blocks in a model's reply: split off before anything reads the reply.

Reasoning models write their reasoning before the answer, in one of three shapes:

* Qwen3 and most others: ``<think> ... </think> answer`` (with ``enable_thinking=False`` an
  empty ``<think>\\n\\n</think>`` block is still written);
* DeepSeek-R1 distills: the chat template opens ``<think>`` inside the prompt, so the reply
  holds only ``... </think> answer`` (a *headless* block);
* a reply cut by the token cap inside its reasoning: ``<think> ...`` never closed.

:func:`split_thinking` returns ``(reasoning, answer)``: the reasoning of a leading block (or
of a headless one) and what follows it. Only a block at the start counts: a ``<think>`` tag
that the answer mentions later is part of the answer. The agent loops call it before the
action parser reads a reply, so a tool call written inside the reasoning is never taken for
the model's action, and the native scaffold's final answer carries no reasoning.

:class:`Thinking` is the other half: a spec's ``?think=off|on|auto`` and ``?think_tokens=N``,
what a backend asks the template or server for, and the token budget it adds.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from slmbench.core.errors import ModelSpecError
from slmbench.models.spec import ModelSpec

OPEN, CLOSE = "<think>", "</think>"

__all__ = ["CLOSE", "DEFAULT_THINK_TOKENS", "OPEN", "THINK_MODES", "THINK_OPTIONS", "Thinking",
           "split_thinking"]


def split_thinking(text: str) -> tuple[str, str]:
    """``(reasoning, answer)`` of a reply: its leading or headless think block, and the rest.

    A reply with no block is ``("", text)`` unchanged. An unclosed leading block (a reply cut
    inside its reasoning) is all reasoning: ``(reasoning, "")``.
    """
    head = text.lstrip()
    if head.startswith(OPEN):
        body = head[len(OPEN):]
        reasoning, closed, answer = body.partition(CLOSE)
        if not closed:
            return body.strip(), ""
        return reasoning.strip(), answer.lstrip()
    before, closed, answer = text.partition(CLOSE)
    if closed and OPEN not in before:  # headless: the template opened the block
        return before.strip(), answer.lstrip()
    return "", text


THINK_MODES = ("off", "on", "auto")
DEFAULT_THINK_TOKENS = 2048  # extra completion tokens a step may spend reasoning (think=on)
THINK_OPTIONS = ("think", "think_tokens")


@dataclass(frozen=True)
class Thinking:
    """A spec's reasoning setting: ``?think=off|on|auto`` and ``?think_tokens=N``.

    ``off`` asks the template or server not to reason (Qwen3's ``enable_thinking=False``,
    Ollama's ``think: false``); ``on`` asks it to, and adds ``think_tokens`` to every
    generation's token cap so a reply is not cut inside its reasoning; ``auto`` sends
    nothing (the model's and server's own default).
    """

    mode: str = "auto"
    extra_tokens: int = DEFAULT_THINK_TOKENS

    @classmethod
    def from_spec(cls, spec: ModelSpec) -> Thinking:
        mode = spec.option("think", "auto") or "auto"
        if mode not in THINK_MODES:
            raise ModelSpecError(f"option think={mode!r} in {spec.raw!r} is not one of "
                                 f"{', '.join(THINK_MODES)}", "write ?think=off, on or auto")
        return cls(mode, spec.int_option("think_tokens", DEFAULT_THINK_TOKENS))

    @property
    def enabled(self) -> bool | None:
        """True/False to send to the template or server; None (auto) sends nothing."""
        return {"off": False, "on": True}.get(self.mode)

    def template_kwargs(self, *, scoring: bool = False) -> dict[str, Any]:
        """What a chat template is rendered with: ``enable_thinking`` as the spec says (nothing
        for auto), or False for a scored prompt, whose candidates are read where the answer
        starts (after a thinking template's empty think block), never where ``<think>`` is."""
        enabled = False if scoring else self.enabled
        return {} if enabled is None else {"enable_thinking": enabled}

    def budget(self, max_tokens: int) -> int:
        """The completion-token cap of a request that asked for ``max_tokens``."""
        return max_tokens + self.extra_tokens if self.mode == "on" else max_tokens

    def settings(self) -> dict[str, Any]:
        out: dict[str, Any] = {"think": self.mode}
        if self.mode == "on":
            out["think_tokens"] = self.extra_tokens
        return out

