"""Frozen micro-task prompts (``p0``) and three neutral paraphrases (``p1``-``p3``) per task.

A task's text lives in its YAML (``<task>.yaml`` next to this module for the built-in
tasks); code here loads a prompt set, fills in an item's fields and parses a generated reply
back to options. Which fields and options an item has is the task's business
(:class:`slmbench.microtasks.spec.MicroTask`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import cache
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from slmbench.core.errors import ConfigError
from slmbench.models.records import Message

__all__ = ["FROZEN", "PROMPT_DIR", "PROMPT_IDS", "PromptSet", "PromptText", "fill",
           "load_prompt_set", "parse_reply", "resolve_prompt_ids"]

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
def load_prompt_set(path: Path) -> PromptSet:
    """The prompt set in a YAML file; every id of ``PROMPT_IDS`` must be there."""
    if not path.is_file():
        raise ConfigError(f"no prompt file {path}", "reinstall slmbench, or write the file")
    try:
        found = PromptSet.model_validate(yaml.safe_load(path.read_text(encoding="utf-8")))
    except (ValidationError, yaml.YAMLError) as exc:
        raise ConfigError(f"{path} is not a prompt set: {str(exc).splitlines()[0]}",
                          "see microtasks/prompts/approval.yaml for the shape") from exc
    missing = [p for p in PROMPT_IDS if p not in found.prompts]
    if missing:
        raise ConfigError(f"{path} lacks prompt(s) {', '.join(missing)}",
                          "every task has the frozen p0 and the paraphrases p1-p3")
    return found


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


def fill(prompts: PromptSet, prompt_id: str, fields: Mapping[str, str]) -> list[Message]:
    """The chat messages of one prompt with an item's fields filled in."""
    text = prompts.prompts[prompt_id]
    return [Message(role="system", content=text.system),
            Message(role="user", content=text.user.format(**fields))]


def parse_reply(text: str, options: list[str], aliases: Mapping[str, str], *,
                ranking: bool = False) -> list[str]:
    """Options a reply names, in order of appearance; ``[]`` means a format failure.

    Ranking replies give option numbers (every valid number, deduplicated). Other replies
    give one option: the earliest option or alias named as a whole word (the longest wins at
    the same position, so ``get_weather_forecast`` beats ``get_weather``).
    """
    clean = text.replace("`", " ").replace("*", " ")
    if ranking:
        found: list[str] = []
        for num in re.findall(r"\d+", clean):
            if num.lstrip("0") in options and num.lstrip("0") not in found:
                found.append(num.lstrip("0"))
        return found
    names = {o.lower(): o for o in options}
    names.update({a.lower(): o for a, o in aliases.items() if o in options})
    best: tuple[int, int, str] | None = None
    lowered = clean.lower()
    for name, option in names.items():
        m = re.search(rf"(?<![\w.]){re.escape(name)}(?![\w])", lowered)
        if m and (best is None or (m.start(), -len(name)) < (best[0], best[1])):
            best = (m.start(), -len(name), option)
    return [best[2]] if best else []
