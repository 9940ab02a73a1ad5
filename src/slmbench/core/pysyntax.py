"""Parsing Python that a model wrote (a tool call, a code block, a HumanEval completion).

Python warns about some literals while it parses them: an invalid escape sequence such as
``"\\{"`` (a ``DeprecationWarning`` on 3.11, a ``SyntaxWarning`` from 3.12, shown by default)
or ``1if x`` (a ``SyntaxWarning``). In a model's text those warnings are about the model's
writing, not about this program: printed mid-run they would only be noise, and under
``-W error`` they would turn text that parses into a ``SyntaxError``.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["quiet_syntax_warnings"]


@contextmanager
def quiet_syntax_warnings() -> Iterator[None]:
    """Within the block, ``ast.parse`` / ``ast.literal_eval`` of a model's text raise no
    warning about its literals (the warnings filter is restored afterwards)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SyntaxWarning)
        warnings.simplefilter("ignore", DeprecationWarning)
        yield
