"""Fill a family's template with an instance's values.

A template is plain task YAML whose strings may hold ``{{name}}`` or ``{{name:spec}}``
fields (``spec`` as in :func:`format`, e.g. ``{{total:,}}``). A string that is one field and
nothing else becomes the value itself (a number, a list of aliases); a field inside longer
text is formatted into it. Single braces are left alone (task code uses them).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

__all__ = ["fields_of", "fill"]

_FIELD = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*(?::([^}]*))?\}\}")


def _string(text: str, values: Mapping[str, Any], where: str) -> Any:
    whole = _FIELD.fullmatch(text.strip())
    if whole and whole.group(2) is None:
        return _value(whole.group(1), values, where)

    def one(m: re.Match[str]) -> str:
        return format(_value(m.group(1), values, where), m.group(2) or "")

    return _FIELD.sub(one, text)


def _value(name: str, values: Mapping[str, Any], where: str) -> Any:
    if name not in values:
        raise KeyError(f"{where}: no value for {{{{{name}}}}}")
    return values[name]


def fill(template: Any, values: Mapping[str, Any], where: str = "template") -> Any:
    """``template`` (nested dicts, lists and strings) with every field filled from ``values``;
    a field with no value is a KeyError naming ``where`` and the field."""
    if isinstance(template, str):
        return _string(template, values, where)
    if isinstance(template, list):
        return [fill(v, values, where) for v in template]
    if isinstance(template, dict):
        return {k: fill(v, values, f"{where}.{k}") for k, v in template.items()}
    return template


def fields_of(template: Any) -> set[str]:
    """The names of every field ``template`` uses."""
    if isinstance(template, str):
        return {m.group(1) for m in _FIELD.finditer(template)}
    if isinstance(template, list):
        return set().union(*(fields_of(v) for v in template)) if template else set()
    if isinstance(template, dict):
        return set().union(*(fields_of(v) for v in template.values())) if template else set()
    return set()
