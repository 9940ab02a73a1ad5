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
"""

from __future__ import annotations

OPEN, CLOSE = "<think>", "</think>"

__all__ = ["CLOSE", "OPEN", "split_thinking"]


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
