"""Frozen micro-task prompts (``p0``) and three neutral paraphrases (``p1``-``p3``) per task.

The text lives in ``<task>.yaml`` next to this module; code here only fills in an item's
fields, lists the item's answer options and parses a generated reply back to options.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, Field

from slmbench.core.errors import ConfigError
from slmbench.microtasks.datasets.records import (
    AnyItem,
    ApprovalItem,
    MemoryItem,
    RankItem,
    TaskName,
    ToolItem,
)
from slmbench.models.base import Message

__all__ = ["FROZEN", "PROMPT_DIR", "PROMPT_IDS", "PromptSet", "PromptText", "options_for",
           "parse_reply", "prompt_set", "render", "resolve_prompt_ids"]

PROMPT_DIR = Path(__file__).parent
PROMPT_IDS = ("p0", "p1", "p2", "p3")
FROZEN = "p0"


class PromptText(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    system: str
    user: str


class PromptSet(BaseModel):
    """One task's prompts, fixed answer options (if any) and accepted synonyms."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    options: list[str] = Field(default_factory=list)
    aliases: dict[str, str] = Field(default_factory=dict)
    max_tokens: int = Field(gt=0)
    prompts: dict[str, PromptText]


@cache
def prompt_set(task: TaskName) -> PromptSet:
    path = PROMPT_DIR / f"{task}.yaml"
    if not path.is_file():
        raise ConfigError(f"no prompt file for micro-task {task!r}", "reinstall slmbench")
    return PromptSet.model_validate(yaml.safe_load(path.read_text(encoding="utf-8")))


def resolve_prompt_ids(spec: str) -> list[str]:
    """``all`` -> every prompt; otherwise a comma-separated list of known ids."""
    if spec == "all":
        return list(PROMPT_IDS)
    ids = [p.strip() for p in spec.split(",") if p.strip()]
    unknown = [p for p in ids if p not in PROMPT_IDS]
    if unknown or not ids:
        raise ConfigError(f"unknown prompt id(s) {unknown or spec!r}",
                          f"use 'all' or some of {', '.join(PROMPT_IDS)}")
    return ids


def options_for(task: TaskName, item: AnyItem) -> list[str]:
    """The answers an item allows, in a fixed order."""
    if isinstance(item, ToolItem):
        return [f.name for f in item.functions] + ["none"]
    if isinstance(item, RankItem):
        return [str(k + 1) for k in range(len(item.turns))]
    return list(prompt_set(task).options)


def _fields(item: AnyItem) -> dict[str, str]:
    if isinstance(item, ApprovalItem):
        return {"command": item.command}
    if isinstance(item, MemoryItem):
        return {"turn": item.turn}
    if isinstance(item, ToolItem):
        lines = [f"- {f.name}: {' '.join(f.description.split())}" for f in item.functions]
        return {"functions": "\n".join(lines), "request": item.request}
    turns = "\n\n".join(f"[{k + 1}] {t}" for k, t in enumerate(item.turns))
    return {"turns": turns, "query": item.query}


def render(task: TaskName, prompt_id: str, item: AnyItem) -> list[Message]:
    """The chat messages one prompt makes of one item."""
    text = prompt_set(task).prompts[prompt_id]
    fields = _fields(item)
    return [Message(role="system", content=text.system),
            Message(role="user", content=text.user.format(**fields))]


def parse_reply(task: TaskName, text: str, options: list[str]) -> list[str]:
    """Options a reply names, in order of appearance; ``[]`` means a format failure.

    Ranking replies give turn numbers (every valid number, deduplicated). Other tasks give
    one option: the earliest option or alias named as a whole word (the longest wins at the
    same position, so ``get_weather_forecast`` beats ``get_weather``).
    """
    clean = text.replace("`", " ").replace("*", " ")
    if task == "ranking":
        found: list[str] = []
        for num in re.findall(r"\d+", clean):
            if num.lstrip("0") in options and num.lstrip("0") not in found:
                found.append(num.lstrip("0"))
        return found
    names = {o.lower(): o for o in options}
    names.update({a.lower(): o for a, o in prompt_set(task).aliases.items() if o in options})
    best: tuple[int, int, str] | None = None
    lowered = clean.lower()
    for name, option in names.items():
        m = re.search(rf"(?<![\w.]){re.escape(name)}(?![\w])", lowered)
        if m and (best is None or (m.start(), -len(name)) < (best[0], best[1])):
            best = (m.start(), -len(name), option)
    return [best[2]] if best else []
