"""Scorers that read only the final answer: numeric, entities, choice."""

from __future__ import annotations

import re
import unicodedata

from slmbench.agents.records import Score
from slmbench.agents.scoring.numbers import Quantity, convert, extract_quantities
from slmbench.agents.tasks.model import ChoiceSpec, EntitiesSpec, NumericSpec


def normalise(text: str) -> str:
    """Lower case, accents stripped, punctuation to spaces, single-spaced, padded.

    A character with no ASCII form is dropped when it is a letter or a combining mark
    ("Søren" reads "sren" on both sides) and is a space otherwise: a dash between two
    times ("12:00–13:00") separates them, as a hyphen does."""
    decomposed = unicodedata.normalize("NFKD", text)
    plain = "".join(c if c.isascii() else _non_ascii(c) for c in decomposed)
    words = re.sub(r"[^a-z0-9@.+]+", " ", plain.lower()).replace(". ", " ").strip(" .")
    return f" {' '.join(words.split())} "


def _non_ascii(c: str) -> str:
    return "" if unicodedata.category(c)[0] in "LM" else " "


def mentions(text: str, phrase: str) -> bool:
    """Whole-word, case- and punctuation-insensitive containment."""
    return normalise(phrase) in normalise(text)


def _fail(reason: str) -> Score:
    return Score(value=0.0, passed=False, reason=reason)


def _pass(reason: str) -> Score:
    return Score(value=1.0, passed=True, reason=reason)


_HEDGE_GAP = re.compile(r"\s*(?:or|to|-|–|~|/|and|or even|or maybe|or perhaps)\s*",
                        re.IGNORECASE)


_LIST_GAP = re.compile(r"\s*[,;]?\s*")


def _is_year(q: Quantity) -> bool:
    return q.unit is None and q.value.is_integer() and 1900 <= q.value <= 2100


def _hedged(answer: str, a: Quantity, b: Quantity) -> bool:
    """Two amounts offered as alternatives ("X or Y", "X to Y", "X-Y", "between X and Y")
    or listed side by side ("3, 4, 5") so that one of them is bound to match."""
    first, second = sorted((a, b), key=lambda q: q.start)
    gap = answer[first.end:second.start]
    if _LIST_GAP.fullmatch(gap):
        return not (_is_year(first) or _is_year(second))
    if not _HEDGE_GAP.fullmatch(gap):
        return False
    return gap.strip().lower() != "and" or "between" in answer[max(0, first.start - 12):
                                                              first.start].lower()


def score_numeric(spec: NumericSpec, answer: str) -> Score:
    """Pass iff a number in the answer equals ``value`` within ``tolerance``, in ``unit``.

    A number written in another unit does not count (time units are converted).
    Offering two amounts as alternatives ("$38,800 or $39,200", "38-39k") or
    listing candidates ("3, 4, 5") is a hedge and fails; other numbers used to
    explain the answer are fine.
    """
    unit_note = f" {spec.unit}" if spec.unit else ""
    expected = f"{spec.value:g}{unit_note} ± {spec.tolerance:g}"
    quantities = extract_quantities(answer)
    if not quantities:
        return _fail(f"no number in the answer; expected {expected}")
    usable: list[tuple[float, Quantity]] = []  # (value in the expected unit, quantity)
    wrong_unit = []
    for q in quantities:
        value = convert(q.value, q.unit, spec.unit) if spec.unit else q.value
        if value is None:
            wrong_unit.append(q.text)
        else:
            usable.append((value, q))
    close = [(v, q) for v, q in usable if abs(v - spec.value) <= spec.tolerance + 1e-9]
    if not close:
        if wrong_unit and not usable:
            return _fail(f"number(s) {wrong_unit} are in the wrong unit; expected {expected}")
        stated = [f"{v:g}" for v, _ in usable] or wrong_unit
        return _fail(f"stated {', '.join(stated)}; expected {expected}")
    for v, q in usable:
        if abs(v - spec.value) > spec.tolerance + 1e-9:
            for _, hit in close:
                if _hedged(answer, q, hit):
                    return _fail(f"hedged between {q.text} and {hit.text}; "
                                 f"expected only {expected}")
    return _pass(f"states {close[0][0]:g}{unit_note} (expected {expected})")


def score_entities(spec: EntitiesSpec, answer: str) -> Score:
    """Pass iff every required entity (any alias) is named and no forbidden one is."""
    missing = []
    for entity in spec.required:
        aliases = [entity] if isinstance(entity, str) else entity
        if not any(mentions(answer, a) for a in aliases):
            missing.append(aliases[0])
    wrong = [f for f in spec.forbidden if mentions(answer, f)]
    found = len(spec.required) - len(missing)
    value = found / len(spec.required) if not wrong else 0.0
    if wrong:
        return Score(value=0.0, passed=False, reason=f"names forbidden {wrong}")
    if missing:
        return Score(value=value, passed=False, reason=f"missing {missing}")
    return _pass(f"names all {len(spec.required)} required entities")


def score_choice(spec: ChoiceSpec, answer: str) -> Score:
    """Pass iff the answer names the right option and no other."""
    named = [o for o in spec.options if mentions(answer, o)]
    if not named:
        return _fail(f"names none of {spec.options}; expected {spec.answer!r}")
    if len(named) > 1:
        return _fail(f"names several options {named}; expected only {spec.answer!r}")
    if named[0].lower() != spec.answer.lower():
        return _fail(f"chose {named[0]!r}; expected {spec.answer!r}")
    return _pass(f"chose {spec.answer!r}")
