"""Part A across runtimes: identical transcripts, same outcomes, and the verdict per pair."""

from __future__ import annotations

import pytest

from slmbench.agents.agreement import against_floor, compare_runtimes, runtime_pairs
from slmbench.agents.records import Action, Outcome, Step, Trial
from slmbench.core.errors import ConfigError

A, B, C = "llamacpp:m", "llamaserver:m", "hf:m.gguf"


def _trial(spec: str, task: int, ok: bool, *, reply: str = "Final Answer: 42",
           variant: str = "base", temperature: float = 0.0,
           outcome: Outcome | None = None) -> Trial:
    step = Step(index=0, raw_response=reply, action=Action(kind="final", answer="42"))
    return Trial(model=spec, task_id=f"IR-{task}", suite="capability", variant=variant,
                 temperature=temperature, steps=[step],
                 outcome=outcome or (Outcome.SUCCESS if ok else Outcome.WRONG_ANSWER))


def _grid(spec: str, solved: set[int], tasks: int = 31, *, reply: str = "Final Answer: 42",
          temperature: float = 0.0) -> list[Trial]:
    return [_trial(spec, t, t in solved, reply=reply, temperature=temperature)
            for t in range(1, tasks + 1)]


def test_two_identical_runtimes_on_31_tasks_are_equivalent_within_ten_points() -> None:
    """Zero variance is handled exactly: (1 − 0.1)^31 = 0.038 < 0.05."""
    solved = set(range(1, 12))
    (pair,) = compare_runtimes({A: _grid(A, solved), B: _grid(B, solved)})
    assert pair.verdict == "equivalent"
    assert pair.identical.estimate == 1.0 and pair.same_outcome.estimate == 1.0
    assert pair.pairs == 31 and pair.by_task.mean_difference == 0.0


def test_the_quick_suites_eight_tasks_cannot_reach_a_ten_point_margin() -> None:
    solved = {1, 2, 3}  # off the floor (3 tasks solved): comparable on success
    (pair,) = compare_runtimes({A: _grid(A, solved, 8), B: _grid(B, solved, 8)})
    assert pair.verdict == "cannot tell"
    assert pair.equivalence.p_value is not None and pair.equivalence.p_value > 0.05


def test_a_runtime_that_solves_far_fewer_tasks_is_different() -> None:
    (pair,) = compare_runtimes({A: _grid(A, set(range(1, 21))), B: _grid(B, set(range(1, 3)))})
    assert pair.verdict == "different"
    assert pair.by_task.a_ahead == 18 and pair.by_task.b_ahead == 0
    assert pair.p_holm < 0.05


def test_same_outcome_but_other_words_is_not_an_identical_transcript() -> None:
    solved = set(range(1, 11))
    (pair,) = compare_runtimes({A: _grid(A, solved),
                                B: _grid(B, solved, reply="Final Answer: 42.")})
    assert pair.identical.estimate == 0.0 and pair.same_outcome.estimate == 1.0


def test_errors_that_are_not_the_models_drop_their_pair_and_are_counted() -> None:
    b = _grid(B, {1})
    b[-1] = _trial(B, 31, False, outcome=Outcome.BACKEND_ERROR)
    (pair,) = compare_runtimes({A: _grid(A, {1}), B: b})
    assert (pair.pairs, pair.excluded) == (30, 1)


def test_three_runtimes_give_three_pairs_holm_adjusted_together() -> None:
    pairs = compare_runtimes({A: _grid(A, set(range(1, 21))), B: _grid(B, set(range(1, 3))),
                              C: _grid(C, set(range(1, 21)))})
    assert [(p.a, p.b) for p in pairs] == runtime_pairs([A, B, C]) == [(A, B), (A, C), (B, C)]
    # A and C never differ, but 31 tasks give a TOST p of 0.038: after Holm over the three
    # pairs' TOSTs (0.115) it is no claim; 39 tasks make it one
    assert [p.verdict for p in pairs] == ["different", "cannot tell", "different"]
    raw = [p.by_task.sign_test.p_value for p in pairs]
    assert all(h >= r for h, r in zip((p.p_holm for p in pairs), raw, strict=True))
    same = pairs[1]
    assert same.equivalence.p_value == pytest.approx(0.9 ** 31)
    assert same.equivalence_p_holm == pytest.approx(3 * 0.9 ** 31)
    wider = compare_runtimes({A: _grid(A, set(range(1, 21)), 39),
                              B: _grid(B, set(range(1, 3)), 39),
                              C: _grid(C, set(range(1, 21)), 39)})
    assert [p.verdict for p in wider] == ["different", "equivalent", "different"]
    assert wider[1].equivalence_p_holm == pytest.approx(3 * 0.9 ** 39)


def test_sampled_trials_are_refused_with_a_hint() -> None:
    with pytest.raises(ConfigError, match="T = 0 only"):
        compare_runtimes({A: _grid(A, {1}, temperature=0.7), B: _grid(B, {1}, temperature=0.7)})


def test_one_runtime_or_no_shared_trial_is_refused() -> None:
    with pytest.raises(ConfigError, match="two runtimes"):
        compare_runtimes({A: _grid(A, {1})})
    with pytest.raises(ConfigError, match="share no trial"):
        compare_runtimes({A: _grid(A, {1}), B: []})


def test_one_spec_under_two_settings_is_two_sides() -> None:
    """The noise floor: one llama-server spec at 1 and at 8 requests in flight."""
    solved = set(range(1, 16))
    (pair,) = compare_runtimes({"1 in flight": _grid(B, solved),
                                "8 in flight": _grid(B, solved, reply="Final Answer:  42")})
    assert pair.identical.estimate == 0.0 and pair.verdict == "equivalent"


def test_transcripts_that_differ_more_across_runtimes_than_within_one_are_beyond_the_floor(
        ) -> None:
    solved = set(range(1, 16))
    (floor,) = compare_runtimes({"1": _grid(B, solved), "8": _grid(B, solved)})
    (cross,) = compare_runtimes({A: _grid(A, solved), B: _grid(B, solved, reply="other")})
    beyond = against_floor(cross, floor)
    assert beyond.a_ahead == 31 and beyond.sign_test.p_value < 0.001
    same = against_floor(floor, floor)
    assert same.ties == 31 and same.sign_test.p_value == 1.0


def test_every_pair_a_page_states_is_one_family_of_equivalence_claims() -> None:
    """A cross-runtime pair and a noise floor, each identical on 31 tasks: alone each TOST
    (0.038) is a claim; stated on one page, Holm over both (0.076) makes neither one."""
    from slmbench.agents.agreement import holm_equivalence

    solved = set(range(1, 12))
    (cross,) = compare_runtimes({A: _grid(A, solved), B: _grid(B, solved)})
    (floor,) = compare_runtimes({"1": _grid(B, solved), "8": _grid(B, solved)})
    assert cross.verdict == floor.verdict == "equivalent"
    stated = holm_equivalence([cross, floor])
    assert [p.verdict for p in stated] == ["cannot tell", "cannot tell"]
    assert [p.equivalence_p_holm for p in stated] == pytest.approx([2 * 0.9 ** 31] * 2)


def test_two_runtimes_at_the_floor_are_not_comparable_and_leave_the_family() -> None:
    """Issue #60: two runtimes that solve 2 of 40 tasks each are "within ±10 points" by the
    exact bound (0.9^40 < 0.05), however differently they fail; the pair reads "both at the
    floor", claims no equivalence and is not counted in the page's TOST family."""
    from slmbench.agents.agreement import holm_equivalence

    (floor,) = compare_runtimes({A: _grid(A, {1, 2}, 40), B: _grid(B, {1, 2}, 40)})
    assert (floor.solved_a, floor.solved_b) == (2, 2) and floor.at_floor
    assert floor.equivalence.p_value < 0.05  # the bound alone would claim it
    assert floor.verdict == "both at the floor" and floor.equivalence_p_holm is None
    (solved,) = compare_runtimes({A: _grid(A, set(range(1, 12))), B: _grid(B, set(range(1, 12)))})
    stated = holm_equivalence([floor, solved])
    assert [p.verdict for p in stated] == ["both at the floor", "equivalent"]
    assert stated[1].equivalence_p_holm == pytest.approx(0.9 ** 31)  # a family of one
    (three,) = compare_runtimes({A: _grid(A, {1, 2, 3}, 40), B: _grid(B, {1, 2, 3}, 40)})
    assert not three.at_floor and three.verdict == "equivalent"
