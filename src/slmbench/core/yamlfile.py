"""Reading a user's YAML file (task suites, scripts): safe, bounded, and with line numbers.

:func:`load_yaml` is the one reader for YAML a user writes. It uses PyYAML's safe loader with
three changes:

* dates stay strings (``2025-03-12`` is what a tool expects, not a ``date``);
* a document whose aliases (``*name``) expand to more than :data:`MAX_NODES` nodes is refused
  (a "billion laughs" document of nested aliases is a few lines long and would expand without
  bound when validated); plain reuse, as ``yaml.safe_dump`` writes for a shared dict, is fine;
* a file larger than :data:`MAX_BYTES` is refused before it is parsed.

Every problem is a :class:`~slmbench.core.errors.ConfigError` whose message starts with
``FILE:LINE:COLUMN`` where YAML knows the place.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from slmbench.core.errors import ConfigError

__all__ = ["MAX_BYTES", "load_yaml"]

MAX_BYTES = 1 << 20  # 1 MiB: the shipped capability suite is about 30 KiB
MAX_NODES = 200_000  # nodes after alias expansion; the capability suite has about 3,000


def _expanded_size(node: yaml.Node, memo: dict[int, int]) -> int:
    """How many nodes ``node`` stands for once every alias is expanded (linear in the graph)."""
    if id(node) in memo:
        return memo[id(node)]
    memo[id(node)] = MAX_NODES + 1  # a node that contains itself expands without bound
    if isinstance(node, yaml.SequenceNode):
        size = 1 + sum(_expanded_size(child, memo) for child in node.value)
    elif isinstance(node, yaml.MappingNode):
        size = 1 + sum(_expanded_size(k, memo) + _expanded_size(v, memo) for k, v in node.value)
    else:
        size = 1
    memo[id(node)] = size
    return size


class _Loader(yaml.SafeLoader):
    """Safe YAML without timestamps, with a bound on what aliases expand to."""

    def get_single_node(self) -> Any:
        node = super().get_single_node()
        if node is not None and _expanded_size(node, {}) > MAX_NODES:
            raise yaml.composer.ComposerError(
                None, None, f"its aliases (*name) expand to more than {MAX_NODES:,} nodes",
                node.start_mark)
        return node


_Loader.yaml_implicit_resolvers = {
    ch: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for ch, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def _where(path: Path, exc: yaml.YAMLError) -> str:
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    if mark is None:
        return f"{path}: {problem}"
    return f"{path}:{mark.line + 1}:{mark.column + 1}: {problem}"


def load_yaml(path: Path, *, hint: str, max_bytes: int | None = None) -> Any:
    """The document in ``path``, or a one-line ConfigError (with ``hint``) saying what is wrong."""
    max_bytes = MAX_BYTES if max_bytes is None else max_bytes
    try:
        size = path.stat().st_size
        if size > max_bytes:
            raise ConfigError(f"{path}: {size:,} bytes is larger than the {max_bytes:,} a YAML "
                              "file may have here", hint)
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read it: {exc}", hint) from exc
    try:
        return yaml.load(text, Loader=_Loader)
    except yaml.YAMLError as exc:
        raise ConfigError(f"{_where(path, exc)} (cannot read YAML)", hint) from exc
    except RecursionError as exc:  # PyYAML composes recursively
        raise ConfigError(f"{path}: nested too deeply (cannot read YAML)", hint) from exc
