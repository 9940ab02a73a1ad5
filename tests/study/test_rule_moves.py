"""A page's own verdicts that a newer rule moved (issue #60: Part A pairs and seed claims carry a
rule version, so that a pair or claim the rule moved is listed on the page that states it)."""

from __future__ import annotations

import json
from pathlib import Path

from slmbench.report.since import RULES, VERDICTS_NAME, rule_moves_section
from slmbench.report.study_facts import PageVerdicts, Stated
from slmbench.study.verdicts import RULE_CHANGES_NAME, rule_moves

PAIR = "qwen2.5-coder-0.5b vs smollm2-135m"
CLAIM = "High temperature (1.0 vs 0.3) drops accuracy by 6-10 points."


def _page(pair: str, claim: str, rules: dict[str, int]) -> PageVerdicts:
    return PageVerdicts(name="v3", claims={CLAIM: Stated(verdict=claim)},
                        pairs={PAIR: Stated(verdict=pair, basis="62 tasks, 186 cells")},
                        temperature={}, cells={}, rules=rules)


def test_a_verdict_an_older_rule_stated_is_listed_and_kept_for_later_regenerations(
        tmp_path: Path) -> None:
    old = _page("within ±10 points", "cannot tell", rules={})  # before rule versions
    (tmp_path / VERDICTS_NAME).write_text(old.model_dump_json(), encoding="utf-8")
    now = _page("both at the floor: not comparable on success", "cannot tell", rules=RULES)
    moves = rule_moves(tmp_path, now)
    assert moves == [f"Part A pair {PAIR}: within ±10 points (62 tasks, 186 cells) → both at "
                     f"the floor: not comparable on success (62 tasks, 186 cells) (rule v1 → "
                     f"v{RULES['pairs']})"]
    assert json.loads((tmp_path / RULE_CHANGES_NAME).read_text("utf-8")) == moves
    # the page is regenerated again: its verdicts.json is now this rule's, the moves stay
    (tmp_path / VERDICTS_NAME).write_text(now.model_dump_json(), encoding="utf-8")
    assert rule_moves(tmp_path, now) == moves
    assert "- " + moves[0] in rule_moves_section(moves)


def test_no_earlier_verdicts_or_the_same_rules_list_nothing(tmp_path: Path) -> None:
    now = _page("both at the floor: not comparable on success", "cannot tell", rules=RULES)
    assert rule_moves(tmp_path, now) is None
    (tmp_path / VERDICTS_NAME).write_text(
        _page("x ahead", "holds", rules=RULES).model_dump_json(), encoding="utf-8")
    assert rule_moves(tmp_path, now) is None  # same rules: a move is data or design
    assert not (tmp_path / RULE_CHANGES_NAME).exists()
