"""Non-LLM baselines for the built-in micro-tasks, and the majority / random references.

Every baseline returns, per item, the item's options in decided order (the same shape as a
model's reading in :mod:`slmbench.microtasks.readout`), so one metric function scores both.

* tools: BM25 (``bm25s``) of the request against each function's name and description; the
  answer is ``none`` when the best score is below a threshold fitted on the ``fit`` split.
* ranking: BM25 of the question against each shown turn.
* approval: a deny-list of regular expressions, written independently of the labelling
  policy (a classic "dangerous command" list, not docs/approval-policy.md in code).
* memory: first-person durable-fact cues (identity, preference, date, number, name); save
  when at least two cue families fire.
* majority: the most frequent gold answer on the ``fit`` split (for ranking: turn positions
  by how often they held the gold turn); random: a seeded shuffle of the options per item.
* constant answers (:class:`Constant`): the same answer on every item (``always("save")``,
  ``always("none")``) or a fixed order of the listed options (``in_order()``: turn 1 first);
  each task declares the ones a constant model could play (``MicroTask.constants``), so a
  model answering one thing every time can never clear τ.
* learned: TF-IDF + logistic regression (scikit-learn; classes weighted by their inverse
  frequency, so a rare positive class is not ignored) fitted on the ``fit`` split only, over
  the text a task names (``MicroTask.learned_text``), for the binary tasks.

Which baseline a task uses is its declaration (``MicroTask.baseline``); every task also gets
the majority and random references and its constants (``MicroTask.baselines``).
"""

from __future__ import annotations

import hashlib
import random
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

import bm25s
import numpy as np
from pydantic import BaseModel, ConfigDict
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline

from slmbench.microtasks.datasets.records import (
    ApprovalItem,
    Item,
    MemoryItem,
    RankItem,
    TaskName,
    ToolItem,
)

Rankings = dict[str, list[str]]
Options = Callable[[Item], list[str]]


class Baseline(BaseModel):
    """A baseline's decisions on a set of items, with what it learned (if anything)."""

    model_config = ConfigDict(frozen=True)

    name: str
    task: TaskName
    rankings: Rankings
    fitted: dict[str, float] = {}


# --- BM25 -----------------------------------------------------------------------------------

def _words(text: str) -> str:
    """Split identifiers (snake_case, dotted, camelCase) into words for BM25."""
    text = re.sub(r"([a-z])([A-Z])", r"\1 \2", text)
    return re.sub(r"[._/\-]", " ", text)


def bm25_scores(query: str, docs: Sequence[str]) -> np.ndarray:
    """BM25 score of ``query`` against each of ``docs`` (English stopwords removed)."""
    tokens = bm25s.tokenize(list(docs), stopwords="en", return_ids=False, show_progress=False)
    retriever = bm25s.BM25()
    retriever.index(tokens, show_progress=False)
    q = bm25s.tokenize([query], stopwords="en", return_ids=False, show_progress=False)[0]
    return np.asarray(retriever.get_scores(q), dtype=float)


def tool_docs(item: ToolItem) -> list[str]:
    return [f"{_words(f.name)} {f.description}" for f in item.functions]


def fit_none_threshold(fit_items: Sequence[ToolItem]) -> float:
    """The top-BM25-score cut-off below which "none" maximises accuracy on ``fit_items``."""
    rows = []  # (top score, gold is none, top function is gold)
    for item in fit_items:
        scores = bm25_scores(item.request, tool_docs(item))
        rows.append((float(scores.max()), item.label == "none",
                     item.functions[int(scores.argmax())].name == item.label))
    best, best_correct = 0.0, -1
    for cut in sorted({0.0, *(r[0] for r in rows), float("inf")}):
        correct = sum(is_none if top < cut else hit for top, is_none, hit in rows)
        if correct > best_correct:
            best, best_correct = cut, correct
    return best


def bm25_tools(items: Sequence[ToolItem], threshold: float) -> Baseline:
    rankings: Rankings = {}
    for item in items:
        scores = bm25_scores(item.request, tool_docs(item))
        order = [item.functions[k].name for k in np.argsort(-scores, kind="stable")]
        rankings[item.id] = (["none", *order] if scores.max() < threshold
                             else [*order, "none"])
    return Baseline(name="bm25", task="tools", rankings=rankings,
                    fitted={"none_threshold": threshold})


class ScoredBaseline(Protocol):
    """A baseline that scores every option of an item (higher is better): what a cascade
    routes on (``MicroTask.graded``)."""

    name: str

    def scores(self, item: Item) -> dict[str, float]: ...


class BM25Turns:
    """BM25 of the question against each shown turn; options are turn numbers."""

    name = "bm25"

    def scores(self, item: Item) -> dict[str, float]:
        assert isinstance(item, RankItem)
        values = bm25_scores(item.query, list(item.turns))
        return {str(k + 1): float(v) for k, v in enumerate(values)}


class BM25Functions:
    """BM25 of the request against each function; ``none`` scores the abstain threshold."""

    name = "bm25"

    def __init__(self, none_threshold: float) -> None:
        self.none_threshold = none_threshold

    @classmethod
    def fit(cls, fit_items: Sequence[Item]) -> BM25Functions:
        return cls(fit_none_threshold(fit_items))  # type: ignore[arg-type]

    def scores(self, item: Item) -> dict[str, float]:
        assert isinstance(item, ToolItem)
        values = bm25_scores(item.request, tool_docs(item))
        out = {f.name: float(v) for f, v in zip(item.functions, values, strict=True)}
        return {**out, "none": self.none_threshold}


def bm25_ranking(items: Sequence[RankItem]) -> Baseline:
    rankings: Rankings = {}
    for item in items:
        scores = bm25_scores(item.query, list(item.turns))
        rankings[item.id] = [str(k + 1) for k in np.argsort(-scores, kind="stable")]
    return Baseline(name="bm25", task="ranking", rankings=rankings)


# --- rules ----------------------------------------------------------------------------------

DENY_PATTERNS: tuple[str, ...] = (
    r"\brm\s+-[a-zA-Z]*[rf]", r"\bsudo\b", r"\bsu\s", r"\bmkfs", r"\bdd\s+if=",
    r">\s*/dev/sd", r"\bchmod\s+(-R\s+)?777", r"\bchown\b", r"(curl|wget)[^|]*\|\s*(ba|z)?sh",
    r"\bshutdown\b|\breboot\b", r"\bkill(all)?\s+-9", r":\(\)\s*\{", r"\bshred\b",
    r"\bnc\s+-[a-z]*l|\bnetcat\b", r"\bscp\b", r"--force\b", r"\bgit\s+reset\s+--hard",
    r"/etc/(passwd|shadow)", r"\bapt(-get)?\s+(install|remove|purge)", r"\bcrontab\s+-r",
)
_DENY_RE = re.compile("|".join(f"(?:{p})" for p in DENY_PATTERNS))


def rule_approval(items: Sequence[ApprovalItem]) -> Baseline:
    rankings = {i.id: ["deny", "approve"] if _DENY_RE.search(i.command) else ["approve", "deny"]
                for i in items}
    return Baseline(name="rules", task="approval", rankings=rankings)


MONTHS = ("january|february|march|april|may|june|july|august|september|october|november|"
          "december|monday|tuesday|wednesday|thursday|friday|saturday|sunday")
MEMORY_CUES: dict[str, re.Pattern[str]] = {
    "identity": re.compile(r"\b(my name is|i am a|i'm a|i work|i live|i'm \d+|years old|"
                           r"my (wife|husband|son|daughter|kids?|partner|family|job|major))\b",
                           re.IGNORECASE),
    "preference": re.compile(r"\b(i (really )?(like|love|prefer|enjoy|hate|dislike)|"
                             r"my favou?rite|i'm allergic|i always|i never)\b", re.IGNORECASE),
    "date": re.compile(rf"\b({MONTHS}|\d{{1,2}}(st|nd|rd|th)|\d{{4}}|tomorrow|next week)\b",
                       re.IGNORECASE),
    "number": re.compile(r"\$\s?\d|\d+(\.\d+)?\s?(%|percent|dollars|kg|lbs|miles|hours)"),
    "name": re.compile(r"(?<![.!?]\s)(?<!^)\b[A-Z][a-z]{2,}\b"),
}


def memory_cues(text: str) -> list[str]:
    """The cue families a turn fires (see ``MEMORY_CUES``)."""
    return [name for name, pat in MEMORY_CUES.items() if pat.search(text)]


def rule_memory(items: Sequence[MemoryItem], min_cues: int = 2) -> Baseline:
    rankings = {i.id: ["save", "skip"] if len(memory_cues(i.turn)) >= min_cues
                else ["skip", "save"] for i in items}
    return Baseline(name="rules", task="memory", rankings=rankings,
                    fitted={"min_cues": float(min_cues)})


# --- references -----------------------------------------------------------------------------

def majority(task: TaskName, fit_golds: Sequence[str], items: Sequence[Item],
             options: Options) -> Baseline:
    """Always the fit split's most frequent gold answer (ties: first seen)."""
    order = [g for g, _ in Counter(fit_golds).most_common()]
    rankings: Rankings = {}
    for item in items:
        allowed = options(item)
        rankings[item.id] = ([o for o in order if o in allowed]
                             + [o for o in allowed if o not in order])
    return Baseline(name="majority", task=task, rankings=rankings)


def random_reference(task: TaskName, items: Sequence[Item], options: Options,
                     seed: int = 0) -> Baseline:
    """A uniform random order of each item's options, seeded by the item id."""
    rankings: Rankings = {}
    for item in items:
        shuffled = options(item)
        digest = hashlib.sha256(f"{seed}:{item.id}".encode()).hexdigest()
        random.Random(int(digest[:16], 16)).shuffle(shuffled)
        rankings[item.id] = shuffled
    return Baseline(name="random", task=task, rankings=rankings)


@dataclass(frozen=True)
class Constant:
    """A reference that ignores the item: ``prefer`` first (in that order), then the rest of
    the item's options in listed order (``reverse``: in reverse listed order)."""

    name: str
    prefer: tuple[str, ...] = ()
    reverse: bool = False

    def ranking(self, allowed: Sequence[str]) -> list[str]:
        rest = [o for o in allowed if o not in self.prefer]
        return [o for o in self.prefer if o in allowed] + (rest[::-1] if self.reverse else rest)


def always(answer: str) -> Constant:
    """The same answer on every item (``always save``, ``always none``)."""
    return Constant(name=f"always {answer}", prefer=(answer,))


def in_order(*, reverse: bool = False) -> Constant:
    """A fixed order of the listed options: first listed first (``reverse``: last first)."""
    return Constant(name="last listed first" if reverse else "first listed first",
                    reverse=reverse)


def constant_reference(task: TaskName, constant: Constant, items: Sequence[Item],
                       options: Options) -> Baseline:
    """One constant answer's decisions on ``items``."""
    return Baseline(name=constant.name, task=task,
                    rankings={i.id: constant.ranking(options(i)) for i in items})


def learned(task: TaskName, fit_items: Sequence[Item], items: Sequence[Item],
            text: Callable[[Item], str], gold: Callable[[Item], str],
            options: Options) -> Baseline:
    """TF-IDF (word 1-2 grams) + logistic regression fitted on ``fit_items`` only.

    Each item's options are ranked by the classifier's probability; an option the fit split
    never held as gold goes last. A fit split with a single class gives that class everywhere.
    """
    golds = [gold(i) for i in fit_items]
    classes = sorted(set(golds))
    if len(classes) < 2:
        return constant_reference(task, Constant(name="learned", prefer=tuple(classes)), items,
                                  options)
    pipe = make_pipeline(TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True, min_df=1),
                         LogisticRegression(max_iter=1000, class_weight="balanced"))
    pipe.fit([text(i) for i in fit_items], golds)
    probs = pipe.predict_proba([text(i) for i in items]) if items else np.zeros((0, 0))
    known = [str(c) for c in pipe.classes_]
    rankings: Rankings = {}
    for item, row in zip(items, probs, strict=True):
        by_class = dict(zip(known, row, strict=True))
        allowed = options(item)
        rankings[item.id] = sorted(allowed, key=lambda o: (-by_class.get(o, -1.0),
                                                           allowed.index(o)))
    return Baseline(name="learned", task=task, rankings=rankings,
                    fitted={"fit_items": float(len(fit_items))})
