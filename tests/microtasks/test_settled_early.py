"""A Part B cell read until decided prints its anytime-valid interval as the sequence gives
it, says in words when the later items moved the estimate out of it, and shows the fixed-n
result on every item read beside it, not deciding (issue #60, item 4)."""

from __future__ import annotations

from slmbench.core import stats
from slmbench.microtasks import tasks
from slmbench.microtasks.eligibility import SequentialRule, make_cell

APPROVAL = tasks.get("approval")
# (model right, τ-baseline right) per item in reading order: the model wins the first 12
# items and ties the next 100, then wins 3 disagreements in 4 (as in
# tests/core/test_anytime_outside.py)
READ = ([(True, False)] * 12 + [(False, False)] * 100
        + ([(True, False)] * 3 + [(False, True)]) * 40 + [(True, True)] * 300)


def _cell(sequential: bool):  # type: ignore[no-untyped-def]
    golds = ["approve" if k % 2 else "deny" for k in range(len(READ))]
    other = {"approve": "deny", "deny": "approve"}

    def answer(gold: str, right: bool) -> list[str]:
        return [gold if right else other[gold]]

    model = [answer(g, m) for g, (m, _) in zip(golds, READ, strict=True)]
    base = {"bm25": [answer(g, b) for g, (_, b) in zip(golds, READ, strict=True)]}
    rule = SequentialRule(APPROVAL, "accuracy", golds, base) if sequential else None
    cell = make_cell(task=APPROVAL, metric="accuracy", model="m", precision="q4",
                     prompt_id="p0", reading="generation", golds=golds, rankings=model,
                     baselines=base, rule=rule)
    return cell, golds, model, base


def test_a_bound_that_settled_early_is_printed_as_it_is_and_said_in_words() -> None:
    cell, *_ = _cell(sequential=True)
    assert cell.interval_kind == "anytime-valid"
    d = cell.diff
    assert d.estimate is not None and d.low is not None and d.estimate < d.low
    assert "settled early; the later items moved the estimate out of the interval" \
        in cell.diff_text
    assert cell.diff.formatted(percent=False, digits=3) in cell.diff_text
    # the fixed-n result on every item read, beside it and labelled as not deciding
    hits = [m for m, _ in READ]
    assert cell.fixed_diff == stats.paired_bounded_difference([float(h) for h in hits],
                                                              [float(b) for _, b in READ])
    assert cell.fixed_p_paired == stats.mcnemar(hits, [b for _, b in READ]).p_value
    assert "; fixed-n on the same items, not deciding: " in cell.diff_text
    q = cell.fixed_p_paired
    assert q is not None and f"McNemar p {'<0.001' if q < 0.001 else f'{q:.3f}'}" \
        in cell.diff_text
    # the anytime-valid result still decides
    assert cell.p_paired <= 0.05 and cell.paired


def test_a_cell_read_in_full_shows_its_one_fixed_n_result() -> None:
    cell, *_ = _cell(sequential=False)
    assert cell.interval_kind == "fixed-n" and cell.fixed_diff is None
    assert "not deciding" not in cell.diff_text and "settled early" not in cell.diff_text
