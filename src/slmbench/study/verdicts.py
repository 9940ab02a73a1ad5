"""Verdicts across pages: those of the page a study file names as ``previous``
(:func:`previous_verdicts`), the Part B cells whose verdict a change of the cell rule moved
(:func:`changed_verdicts`, kept beside the page as ``verdict-changes.json``), and the page's
own claims, pairs and temperature effects a newer rule moved (:func:`rule_moves`, kept as
``rule-changes.json``)."""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import ValidationError

from slmbench.core.errors import ConfigError
from slmbench.microtasks.cells import CELL_VERSION
from slmbench.microtasks.matrix import MatrixRun
from slmbench.report.partb import verdict_changes
from slmbench.report.since import VERDICTS_NAME, moved_by_rule
from slmbench.report.study_facts import PageVerdicts
from slmbench.study.spec import Study


def previous_verdicts(study: Study) -> PageVerdicts | None:
    """The verdicts of the page ``study.previous`` names (its ``verdicts.json``); None when
    the study names none. ConfigError when that page has none to compare with."""
    if study.previous is None:
        return None
    path = study.previous.parent / study.previous.stem / VERDICTS_NAME
    try:
        return PageVerdicts.model_validate_json(path.read_bytes())
    except FileNotFoundError:
        raise ConfigError(f"previous = {str(study.previous)!r}: {path} does not exist",
                          "regenerate that page with this checkout (slmbench study FILE "
                          "--page-only) so that it writes its verdicts") from None
    except ValidationError as exc:
        raise ConfigError(f"{path} is not a page's verdicts: {exc}".splitlines()[0],
                          "regenerate that page with this checkout") from exc


CHANGES_NAME = "verdict-changes.json"


def changed_verdicts(previous: Path, matrices: list[MatrixRun]) -> list[str] | None:
    """The Part B cells whose verdict differs from the export at ``previous`` (the page's
    last ``eligibility.json``, before it is overwritten), when that export was made under an
    older cell rule (``CELL_VERSION``): saved beside it as ``verdict-changes.json``, so that
    every later regeneration states the same changes. None when there is nothing to compare
    (no export, or one made under this rule and no saved changes)."""
    saved = previous.parent / CHANGES_NAME
    try:
        old = ([MatrixRun.model_validate(r) for r in json.loads(previous.read_text("utf-8"))]
               if previous.is_file() else [])
    except (ValidationError, json.JSONDecodeError, TypeError):
        old = []
    cells = [c for m in old for c in m.cells]
    changes = (verdict_changes(cells, [c for m in matrices for c in m.cells])
               if cells and any(c.version < CELL_VERSION for c in cells) else None)
    return _kept(saved, changes)


def _kept(saved: Path, changes: list[str] | None) -> list[str] | None:
    """``changes`` a new rule made, written to ``saved`` so that later regenerations state
    them too; without new ones, those ``saved`` holds (None: none saved)."""
    if changes is not None:
        saved.write_text(json.dumps(changes, indent=1, ensure_ascii=False) + "\n",
                         encoding="utf-8")
        return changes
    if saved.is_file():
        return list(json.loads(saved.read_text("utf-8")))
    return None


RULE_CHANGES_NAME = "rule-changes.json"


def rule_moves(assets: Path, now: PageVerdicts) -> list[str] | None:
    """The page's seed claims, Part A pairs and temperature effects whose verdict a newer rule
    moved: its last ``verdicts.json`` in ``assets`` (read before it is overwritten) against
    ``now``, where that one was judged by an older rule of the kind; saved beside it as
    ``rule-changes.json``, so that every later regeneration states the same moves. None when
    there is nothing to compare (no earlier verdicts, or judged by these rules and no saved
    moves)."""
    saved = assets / RULE_CHANGES_NAME
    try:
        before = PageVerdicts.model_validate_json((assets / VERDICTS_NAME).read_bytes())
    except (FileNotFoundError, ValidationError):
        before = None
    return _kept(saved, None if before is None else moved_by_rule(before, now))
