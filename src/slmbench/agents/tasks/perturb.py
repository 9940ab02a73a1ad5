"""Variants of a task: deterministic rewordings (robustness) and injected faults.

``variants(task)`` lists the variant names a task is run under:

* every task: ``base`` (the instruction as written);
* robustness tasks: ``paraphrase`` (rule-based word substitutions), ``verbose``
  (neutral sentences added), ``concise`` (politeness, filler and articles
  dropped), ``typos`` (keyboard slips in lower-case words; names, numbers and
  quoted text untouched), ``reorder`` (sentences rotated so the question comes
  first), and ``para1``..``para3`` (the task's three hand-written paraphrases);
* fault-tolerance tasks: ``fault:<kind>`` for each fault kind the task lists,
  injected into ``task.fault_tool`` on its first call.

Every rewording is a pure function of (task id, variant, seed): the same call
always returns the same text, so perturbed runs pair item by item with the
unperturbed run.
"""

from __future__ import annotations

import random
import re

from slmbench.agents.records import FaultPlan
from slmbench.agents.tasks.model import Task
from slmbench.core.errors import ConfigError

AUTO_REWORDINGS = ("paraphrase", "verbose", "concise", "typos", "reorder")
HAND_PARAPHRASES = ("para1", "para2", "para3")
ROBUSTNESS_VARIANTS = AUTO_REWORDINGS + HAND_PARAPHRASES
FAULT_PREFIX = "fault:"

_SYNONYMS: list[tuple[str, tuple[str, ...]]] = [
    (r"\bFind out\b", ("Figure out", "Work out")), (r"\bfind out\b", ("figure out", "work out")),
    (r"\bFind\b", ("Look up", "Locate")), (r"\bfind\b", ("look up", "locate")),
    (r"\bTell me\b", ("Let me know", "Report")), (r"\btell me\b", ("let me know",)),
    (r"\bPlease\b", ("Kindly",)), (r"\bplease\b", ("kindly",)),
    (r"\bSchedule\b", ("Book", "Set up")), (r"\bschedule\b", ("book", "set up")),
    (r"\bCalculate\b", ("Work out", "Compute")), (r"\bcalculate\b", ("work out", "compute")),
    (r"\bWhich\b", ("What",)), (r"\bwhich\b", ("what",)),
    (r"\blargest\b", ("biggest",)), (r"\bhighest\b", ("greatest", "top")),
    (r"\bsmallest\b", ("lowest",)), (r"\bgive me\b", ("provide",)),
    (r"\bcurrently\b", ("right now", "at present")), (r"\beach\b", ("every",)),
    (r"\bshow\b", ("display",)), (r"\bShow\b", ("Display",)),
    (r"\bcheck\b", ("look at", "review")), (r"\bCheck\b", ("Look at", "Review")),
    (r"\bsend\b", ("write",)), (r"\bSend\b", ("Write",)),
    (r"\bnumber of\b", ("count of",)), (r"\bhow much\b", ("what amount",)),
    (r"\banswer with\b", ("reply with",)), (r"\bmeeting\b", ("call",)),
]
_PREFIXES = (
    "Hi there, I hope your week is off to a good start.",
    "I'm pulling together some notes for the operations team and could use a hand.",
    "Quick request while I get through my inbox this morning.",
)
_SUFFIXES = (
    "Thanks a lot for your help with this.",
    "Take whatever steps you need, but keep the final answer short.",
    "I appreciate it, thank you.",
)
_FILLER = re.compile(
    r"\b(?:please|kindly|could you|can you|would you|I would like you to|I'd like you to|"
    r"for me|I need to know|I want to know|thanks|thank you)\b[,]?\s*",
    re.IGNORECASE,
)
_ARTICLES = re.compile(r"\b(?:the|a|an)\s+(?=[a-z])")
_SENTENCES = re.compile(r"(?<=[.!?])\s+")
_PROTECTED = re.compile(r"\"[^\"]*\"|'[^']*'|\S*[@\d_/]\S*")


def _rng(task: Task, variant: str, seed: int) -> random.Random:
    return random.Random(f"{task.id}|{variant}|{seed}")


def _paraphrase(text: str, rng: random.Random) -> str:
    out = text
    for pattern, choices in _SYNONYMS:
        out = re.sub(pattern, lambda _m, c=choices: rng.choice(c), out)
    return out if out != text else f"Here is what I need: {text[0].lower()}{text[1:]}"


def _verbose(text: str, rng: random.Random) -> str:
    return f"{rng.choice(_PREFIXES)} {text} {rng.choice(_SUFFIXES)}"


def _concise(text: str, rng: random.Random) -> str:
    out = _FILLER.sub("", text)
    out = _ARTICLES.sub("", out)
    out = re.sub(r"\s+([,.?!])", r"\1", re.sub(r"\s{2,}", " ", out)).strip()
    return " ".join(s[:1].upper() + s[1:] for s in _SENTENCES.split(out))


def _typo(word: str, rng: random.Random) -> str:
    i = rng.randrange(1, len(word) - 2)
    kind = rng.choice(("swap", "drop", "double"))
    if kind == "swap":
        return word[:i] + word[i + 1] + word[i] + word[i + 2:]
    if kind == "drop":
        return word[:i] + word[i + 1:]
    return word[:i] + word[i] + word[i:]


def _typos(text: str, rng: random.Random, rate: float = 0.15) -> str:
    protected = [(m.start(), m.end()) for m in _PROTECTED.finditer(text)]
    spans = [m for m in re.finditer(r"\b[a-z]{4,}\b", text)
             if not any(s <= m.start() < e for s, e in protected)]
    if not spans:
        return text
    chosen = {m.start() for m in spans if rng.random() < rate} or {rng.choice(spans).start()}
    out, last = [], 0
    for m in spans:
        if m.start() in chosen:
            out += [text[last:m.start()], _typo(m.group(0), rng)]
            last = m.end()
    return "".join([*out, text[last:]])


def _reorder(text: str, rng: random.Random) -> str:
    sentences = _SENTENCES.split(text.strip())
    if len(sentences) < 2:
        return text
    if len(sentences) == 2:
        return f"{sentences[1]} {sentences[0]}"
    order = list(range(len(sentences)))
    while order == sorted(order):
        rng.shuffle(order)
    return " ".join(sentences[i] for i in order)


_REWORD = {"paraphrase": _paraphrase, "verbose": _verbose, "concise": _concise,
           "typos": _typos, "reorder": _reorder}


def variants(task: Task) -> list[str]:
    """The variant names a task runs under (``base`` first)."""
    if task.dimension == "robustness":
        return ["base", *ROBUSTNESS_VARIANTS]
    if task.dimension == "fault_tolerance":
        return ["base", *(f"{FAULT_PREFIX}{kind}" for kind in task.faults)]
    return ["base"]


def _check(task: Task, variant: str) -> None:
    if variant not in variants(task):
        raise ConfigError(f"task {task.id} has no variant {variant!r}",
                          f"use one of {', '.join(variants(task))}")


def instruction_for(task: Task, variant: str = "base", seed: int = 0) -> str:
    """The instruction the agent sees under ``variant`` (deterministic in task, variant, seed)."""
    _check(task, variant)
    if variant in HAND_PARAPHRASES:
        return task.paraphrases[HAND_PARAPHRASES.index(variant)]
    if variant in _REWORD:
        return _REWORD[variant](task.instruction, _rng(task, variant, seed))
    return task.instruction


def fault_plan_for(task: Task, variant: str) -> FaultPlan | None:
    """The fault a ``fault:<kind>`` variant injects (first call of the task's fault tool)."""
    _check(task, variant)
    if not variant.startswith(FAULT_PREFIX) or task.fault_tool is None:
        return None
    kind = variant.removeprefix(FAULT_PREFIX)
    return FaultPlan.model_validate({"tool": task.fault_tool, "call": 1, "fault": kind})
