"""Memory-write, tool-selection and turn-ranking datasets from the pinned ``bfcl-eval`` wheel.

* **tools**: ``BFCL_v4_multiple`` and ``BFCL_v4_live_multiple`` (gold = the one function the
  ground-truth call names) and ``BFCL_v4_irrelevance`` (gold = ``"none"``).
* **memory** and **ranking**: the memory scenarios' prerequisite conversations (user turns)
  and the memory questions, whose answer key quotes the turn (``source``) that holds the
  answer. A quote is located by :func:`locate_quote`; a user turn is a memory-write positive
  when at least one question's quote is located in it.
* **ranking** items show a window of ``WINDOW`` consecutive turns of the conversation that
  holds the quote (the window's offset is derived from the question id, so the gold turn
  is not always in the same place); the gold turn is the one holding the quote.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache

from slmbench.core.sources import SourceArchive
from slmbench.microtasks.datasets.records import (
    FunctionDoc,
    MemoryItem,
    Provenance,
    RankItem,
    ToolItem,
    split_of,
)

DATA = "bfcl_eval/data/"
TOOL_FILES = ("BFCL_v4_multiple.json", "BFCL_v4_live_multiple.json", "BFCL_v4_irrelevance.json")
MEMORY_SCENARIOS = ("customer", "finance", "healthcare", "notetaker", "student")
MEMORY_QUESTIONS = DATA + "BFCL_v4_memory.json"
MEMORY_ANSWERS = DATA + "possible_answer/BFCL_v4_memory.json"
# A quote counts as located in a turn when at least this share of its (normalised) characters
# is found there (see quote_score). Exact substrings score 1.0. On bfcl-eval 2026.3.23 every
# question's best turn scores >= 0.79 and its runner-up <= 0.27, so 0.6 separates them cleanly.
QUOTE_THRESHOLD = 0.6
WINDOW = 5


def _jsonl(src: SourceArchive, path: str) -> list[dict]:
    return [json.loads(line) for line in src.read_text(path).splitlines() if line.strip()]


def _user_text(question: list) -> str:
    """The last user message of BFCL's first turn (live items may lead with a system turn)."""
    users = [m["content"] for m in question[0] if m["role"] == "user"]
    return users[-1]


def build_tools(src: SourceArchive) -> list[ToolItem]:
    items: list[ToolItem] = []
    for fname in TOOL_FILES:
        answers: dict[str, str] = {}
        if "irrelevance" not in fname:
            for rec in _jsonl(src, DATA + "possible_answer/" + fname):
                answers[rec["id"]] = next(iter(rec["ground_truth"][0]))
        for rec in _jsonl(src, DATA + fname):
            label = answers.get(rec["id"], "none")
            funcs = tuple(FunctionDoc(name=f["name"], description=f.get("description", ""))
                          for f in rec["function"])
            item_id = f"tools-{rec['id']}"
            items.append(ToolItem(id=item_id, split=split_of(item_id), request=_user_text(
                rec["question"]), functions=funcs, label=label,
                provenance=(Provenance.of(src, DATA + fname, rec["id"]),)))
    return items


def normalise(text: str) -> str:
    """Lower-case, drop ellipses and punctuation runs, collapse whitespace."""
    text = text.lower().replace("\u2026", " ").replace("...", " ")
    text = re.sub(r"[^\w\s]", " ", text)
    return " ".join(text.split())


def _fragments(quote: str) -> list[str]:
    return [f for f in (normalise(x) for x in re.split(r"\.\.\.|\u2026", quote)) if f]


def _all_fragments_in(quote: str, turn: str) -> bool:
    t = normalise(turn)
    return all(f in t for f in _fragments(quote))


def quote_score(quote: str, turn: str) -> float:
    """Share of the quote's characters found in the turn.

    Quotes elide text with ellipses, so each fragment between ellipses is matched on its
    own: a fragment that is a substring counts in full, otherwise its longest common block
    with the turn counts (``difflib``).
    """
    t = normalise(turn)
    fragments = _fragments(quote)
    total = sum(len(f) for f in fragments)
    if not total:
        return 0.0
    found = 0
    for frag in fragments:
        if frag in t:
            found += len(frag)
        else:
            matcher = difflib.SequenceMatcher(None, frag, t, autojunk=False)
            found += matcher.find_longest_match(0, len(frag), 0, len(t)).size
    return found / total


@dataclass(frozen=True)
class Turn:
    scenario: str
    conversation: str
    index: int
    text: str
    path: str


def conversation_turns(src: SourceArchive) -> Iterator[Turn]:
    for scenario in MEMORY_SCENARIOS:
        path = f"{DATA}memory_prereq_conversation/memory_{scenario}.json"
        for conv in _jsonl(src, path):
            for i, turn in enumerate(conv["question"]):
                text = " ".join(m["content"] for m in turn if m["role"] == "user")
                yield Turn(scenario, conv["id"], i, text, path)


def locate_quote(quote: str, turns: list[Turn]) -> tuple[Turn | None, float]:
    """The turn that best holds ``quote``, or None when the best score is below threshold."""
    exact = [t for t in turns if _all_fragments_in(quote, t.text)]
    if exact:
        return exact[0], 1.0
    best, best_score = None, 0.0
    for turn in turns:
        score = quote_score(quote, turn.text)
        if score > best_score:
            best, best_score = turn, score
    return (best, best_score) if best_score >= QUOTE_THRESHOLD else (None, best_score)


@dataclass(frozen=True)
class MemoryQuestion:
    id: str
    scenario: str
    text: str
    source: str


def memory_questions(src: SourceArchive) -> list[MemoryQuestion]:
    answers = {r["id"]: r for r in _jsonl(src, MEMORY_ANSWERS)}
    return [MemoryQuestion(q["id"], q["scenario"], _user_text(q["question"]),
                           answers[q["id"]]["source"]) for q in _jsonl(src, MEMORY_QUESTIONS)]


@dataclass(frozen=True)
class Located:
    """Every conversation turn, where each question's quote was found, and the misses."""

    turns: list[Turn]
    gold: dict[str, Turn]
    missed: list[str]
    questions: dict[str, MemoryQuestion]


@cache  # memory and ranking are built from the same located quotes
def locate_questions(src: SourceArchive) -> Located:
    turns = list(conversation_turns(src))
    questions = {q.id: q for q in memory_questions(src)}
    gold: dict[str, Turn] = {}
    missed: list[str] = []
    for q in questions.values():
        turn, _ = locate_quote(q.source, [t for t in turns if t.scenario == q.scenario])
        if turn is None:
            missed.append(q.id)
        else:
            gold[q.id] = turn
    return Located(turns, gold, missed, questions)


def located_note(located: Located) -> str:
    """The manifest note saying how many questions' quotes were found."""
    return (f"quotes located for {len(located.gold)} of {len(located.questions)} questions "
            f"(threshold {QUOTE_THRESHOLD})")


def build_memory(src: SourceArchive, located: Located) -> list[MemoryItem]:
    """One item per user turn: "save" when a later question's quote is located in it."""
    items = []
    for t in located.turns:
        qids = tuple(sorted(q for q, lt in located.gold.items() if lt == t))
        item_id = f"memory-{t.conversation}-{t.index}"
        where = Provenance.of(src, t.path, f"{t.conversation}#{t.index}")
        items.append(MemoryItem(id=item_id, split=split_of(item_id), turn=t.text,
                                label="save" if qids else "skip", questions=qids,
                                provenance=(where,)))
    return items


def build_ranking(src: SourceArchive, located: Located, window: int = WINDOW) -> list[RankItem]:
    """One item per located question: a window of turns from the quote's conversation."""
    items = []
    for qid, gold in located.gold.items():
        conv = [t for t in located.turns if t.conversation == gold.conversation]
        size = min(window, len(conv))
        shift = int(hashlib.sha256(qid.encode()).hexdigest()[:8], 16) % size
        start = max(0, min(gold.index - shift, len(conv) - size))
        shown = conv[start:start + size]
        item_id = f"ranking-{qid}"
        items.append(RankItem(
            id=item_id, split=split_of(item_id), query=located.questions[qid].text,
            turns=tuple(t.text for t in shown), gold=gold.index - start,
            provenance=(Provenance.of(src, MEMORY_QUESTIONS, qid),
                        Provenance.of(src, gold.path,
                                      f"{gold.conversation}#{start}-{start + size - 1}"))))
    return items
