"""Numbers as a person writes them: ``$38,800``, ``38.8k``, ``1.2 million``, ``90 min``, ``12%``.

:func:`extract_quantities` finds every number in a text with the unit written
next to it (a currency sign or code before it, a unit word or ``%`` after it).
Dates (``2025-03-14``, ``14/03/2025``) and clock times (``14:30``) are not
quantities and are skipped, as are digits inside identifiers (``Q3``, ``E-104``).
Time units convert between each other (90 min = 1.5 h); other units never do.
"""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict

# canonical unit -> surface forms (lower case)
UNIT_ALIASES: dict[str, tuple[str, ...]] = {
    "USD": ("$", "usd", "dollar", "dollars"),
    "EUR": ("€", "eur", "euro", "euros"),
    "GBP": ("£", "gbp"),
    "percent": ("%", "percent", "pct", "per cent"),
    "seconds": ("s", "sec", "secs", "second", "seconds"),
    "minutes": ("min", "mins", "minute", "minutes"),
    "hours": ("h", "hr", "hrs", "hour", "hours"),
    "days": ("day", "days"),
    "weeks": ("week", "weeks"),
}
_SURFACE = {alias: unit for unit, aliases in UNIT_ALIASES.items() for alias in aliases}
# Units the scorer does not convert: a number written in one of them is in *another* unit
# ("652 cents" or "652 yen" for a dollar amount is a mismatch, never "no unit written").
OTHER_UNITS = frozenset({
    "¥", "₹", "₩", "cent", "cents", "pence", "penny", "yen", "jpy", "yuan", "cny", "rmb",
    "rupee", "rupees", "inr", "won", "krw", "franc", "francs", "chf", "cad", "aud", "sek",
    "nok", "dkk", "peso", "pesos", "mxn", "real", "reais", "brl", "ruble", "rubles", "rub",
    "bitcoin", "btc",
    "kg", "kilogram", "kilograms", "g", "gram", "grams", "lb", "lbs", "pound", "pounds",
    "km", "kilometre", "kilometres", "kilometer", "kilometers", "metre", "metres", "meter",
    "meters", "mile", "miles", "ms", "millisecond", "milliseconds", "month", "months",
    "year", "years",
})
# unit -> (family, factor to the family's base unit)
_CONVERT: dict[str, tuple[str, float]] = {
    "seconds": ("time", 1.0), "minutes": ("time", 60.0), "hours": ("time", 3600.0),
    "days": ("time", 86400.0), "weeks": ("time", 604800.0),
}
_SCALE = {"k": 1e3, "thousand": 1e3, "m": 1e6, "mn": 1e6, "million": 1e6, "bn": 1e9,
          "billion": 1e9}
_WORDS = {w: i for i, w in enumerate([
    "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
    "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen",
    "nineteen", "twenty"])}

_NOT_QUANTITIES = re.compile(
    r"\b\d{4}-\d{1,2}-\d{1,2}(?:[T ]\d{1,2}:\d{2}(?::\d{2})?)?\b"  # ISO dates (+ time)
    r"|\b\d{1,2}/\d{1,2}/\d{2,4}\b"  # 14/03/2025
    r"|\b\d{1,2}:\d{2}(?::\d{2})?\s*(?:[ap]\.?m\.?)?"  # 14:30, 2:30 pm
    r"|\b[A-Za-z]+-?\d+\b",  # identifiers: Q3, E-104, room2
    re.IGNORECASE,
)
_NUMBER = re.compile(
    r"(?P<pre>(?:[$€£¥₹₩]|\b(?:usd|eur|gbp|jpy|cny|inr|chf|cad|aud))\s*)?"
    r"(?P<sign>[-−])?"
    r"(?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)"
    r"(?:\s*(?P<scale>k|mn|m|bn|thousand|million|billion)\b)?"
    r"(?P<post>\s*(?:%|per cent|[a-z]+))?",
    re.IGNORECASE,
)
_WORD_NUMBER = re.compile(r"\b(?P<word>" + "|".join(_WORDS) + r")\b(?P<post>\s+[a-z]+)?",
                          re.IGNORECASE)


class Quantity(BaseModel):
    """A number found in a text, with its unit (canonical name) if one is written."""

    model_config = ConfigDict(frozen=True)

    value: float
    unit: str | None
    text: str
    start: int = 0  # offsets of the number (with its unit) in the text
    end: int = 0


def canonical_unit(surface: str) -> str | None:
    """The canonical unit a surface form names (``hrs`` -> ``hours``; ``yen`` -> ``other:yen``),
    or None when the word is no unit at all (``14 employees``)."""
    key = surface.strip().lower()
    if key in UNIT_ALIASES:
        return key
    for unit in UNIT_ALIASES:
        if unit.lower() == key:
            return unit
    if key in OTHER_UNITS:
        return f"other:{key}"
    return _SURFACE.get(key)


def extract_quantities(text: str) -> list[Quantity]:
    """Every number in ``text`` with its unit, in order of appearance."""
    cleaned = _NOT_QUANTITIES.sub(lambda m: " " * len(m.group(0)), text)
    found: list[tuple[int, Quantity]] = []
    for m in _NUMBER.finditer(cleaned):
        start = m.start("num") - (1 if m.group("sign") else 0)
        if start > 0 and (cleaned[start - 1].isalnum() or cleaned[start - 1] in "._"):
            continue  # part of a word or a longer token
        value = float(m.group("num").replace(",", ""))
        if m.group("sign"):
            value = -value
        if m.group("scale"):
            value *= _SCALE[m.group("scale").lower()]
        unit = canonical_unit(m.group("pre")) if m.group("pre") else None
        end = m.end("scale") if m.group("scale") else m.end("num")
        if m.group("post") and canonical_unit(m.group("post")):
            unit = unit or canonical_unit(m.group("post"))
            end = m.end()
        found.append((m.start(), Quantity(value=value, unit=unit, text=text[m.start():end].strip(),
                                          start=m.start(), end=end)))
    for m in _WORD_NUMBER.finditer(cleaned):
        unit = canonical_unit(m.group("post")) if m.group("post") else None
        end = m.end() if unit else m.end("word")
        found.append((m.start(), Quantity(value=float(_WORDS[m.group("word").lower()]),
                                          unit=unit, text=text[m.start():end], start=m.start(),
                                          end=end)))
    return [q for _, q in sorted(found, key=lambda pair: pair[0])]


def convert(value: float, unit: str | None, to: str | None) -> float | None:
    """``value`` in ``unit`` expressed in ``to``; None if the units are incompatible.

    A quantity written without a unit is taken to be in the expected unit.
    """
    if unit is None or to is None or unit == to:
        return value
    src, dst = _CONVERT.get(unit), _CONVERT.get(to)
    if src is None or dst is None or src[0] != dst[0]:
        return None
    return value * src[1] / dst[1]
