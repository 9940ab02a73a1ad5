"""Answer scorers must accept the right answer however it is written and reject near misses."""

from __future__ import annotations

import pytest

from slmbench.agents.scoring import score
from slmbench.agents.scoring.numbers import extract_quantities
from slmbench.agents.tasks.model import ChoiceSpec, EntitiesSpec, NumericSpec

USD = NumericSpec(value=38800, unit="USD")


@pytest.mark.parametrize("answer", [
    "Total Q1 sales were $38,800.",
    "38800 USD",
    "The total is 38.8k dollars",
    "$38,800.00 (as of 2025-03-10)",
    "Revenue: 38,800",
])
def test_numeric_accepts_the_right_number_in_any_notation(answer: str) -> None:
    assert score(USD, answer).passed, answer


@pytest.mark.parametrize("answer", [
    "388",  # the original study's substring bug: must never pass for 38,800
    "$3,880",
    "$38,900",  # wrong digit
    "38,800 EUR",  # right number, wrong unit
    "It is either $38,800 or $39,200",  # hedging between two amounts
    "I could not compute the total.",
    "",
])
def test_numeric_rejects_near_misses(answer: str) -> None:
    result = score(USD, answer)
    assert not result.passed, answer
    assert result.value == 0.0


def test_listing_candidates_is_a_hedge_but_explaining_is_not() -> None:
    four = NumericSpec(value=4)
    assert not score(four, "1 2 3 4 5 6").passed
    assert not score(four, "It is 3, 4 or 5").passed
    assert score(four, "On 12 March 2025, 4 people are in Sales.").passed
    assert score(NumericSpec(value=24674, unit="USD"),
                 "Sales of $84,674 beat the $60,000 target by $24,674.").passed


def test_time_units_convert_but_wrong_unit_fails() -> None:
    spec = NumericSpec(value=90, unit="minutes")
    assert score(spec, "The meeting lasts 90 minutes").passed
    assert score(spec, "It lasts 1.5 hours").passed
    assert not score(spec, "It lasts 90 hours").passed
    assert not score(spec, "90 seconds").passed


def test_tolerance_is_absolute_and_stated() -> None:
    spec = NumericSpec(value=4.25, tolerance=0.01)
    assert score(spec, "average 4.25").passed
    assert score(spec, "about 4.255").passed
    assert not score(spec, "about 4.3").passed
    assert "4.25" in score(spec, "4.3").reason


def test_dates_times_and_identifiers_are_not_numbers() -> None:
    values = [q.value for q in extract_quantities("Q3 report E-104 on 2025-03-14 at 14:30: 12")]
    assert values == [12.0]


def test_number_words_and_suffixes() -> None:
    assert score(NumericSpec(value=3), "three employees").passed
    assert score(NumericSpec(value=1_200_000, unit="USD"), "$1.2 million").passed
    assert not score(NumericSpec(value=1_200_000, unit="USD"), "$1.2").passed


PERSON = EntitiesSpec(required=[["Sofia Alvarez", "Sofia"]], forbidden=["Lucas Moreau", "Dana"])


def test_entities_need_the_right_person_and_no_wrong_one() -> None:
    assert score(PERSON, "Expenses over $500 go to Sofia Alvarez.").passed
    assert score(PERSON, "ask sofia").passed
    assert not score(PERSON, "Lucas Moreau approves them.").passed  # wrong person
    assert not score(PERSON, "Sofia Alvarez or Lucas Moreau").passed  # hedge with a wrong one
    assert not score(PERSON, "the Finance Director").passed


def test_entities_match_whole_words_only() -> None:
    spec = EntitiesSpec(required=["Tom"])
    assert not score(spec, "Tomorrow at noon").passed
    assert score(spec, "Tom Becker, tomorrow").passed


def test_a_dash_with_no_ascii_form_separates_words_as_a_hyphen_does() -> None:
    """An en or em dash between two times or names was dropped, gluing "12:00–13:00" into
    one token, so a right end time written as a range failed; a non-ASCII letter is still
    dropped on both sides alike."""
    spec = EntitiesSpec(required=[["13:00", "1 pm"]])
    for dash in ("-", "\u2013", "\u2014"):
        assert score(spec, f"Product roadmap sync, 12:00{dash}13:00").passed, dash
    assert score(EntitiesSpec(required=["Søren Berg"]), "Ask S\u00f8ren Berg.").passed
    assert not score(EntitiesSpec(required=["Tom"]), "Tom\u00e9 Becker").passed


def test_entities_partial_credit_is_a_value_not_a_pass() -> None:
    spec = EntitiesSpec(required=["Hannah Schmidt", "Olivia Novak"])
    result = score(spec, "Hannah Schmidt sold the most")
    assert not result.passed and result.value == 0.5


def test_choice_names_exactly_one_option() -> None:
    spec = ChoiceSpec(answer="no", options=["yes", "no"])
    assert score(spec, "No, it is out of stock.").passed
    assert not score(spec, "Yes.").passed
    assert not score(spec, "yes or no, hard to say").passed
    assert not score(spec, "I don't know").passed


@pytest.mark.parametrize(("answer", "passed"), [
    ("It cost 652 cents.", False), ("652 yen", False), ("¥652", False), ("652 JPY", False),
    ("$652", True), ("652 dollars", True), ("652", True), ("652 USD in total", True),
])
def test_a_unit_the_scorer_does_not_convert_is_a_mismatch(answer: str, passed: bool) -> None:
    verdict = score(NumericSpec(value=652, unit="USD"), f"Final Answer: {answer}")
    assert verdict.passed is passed, verdict.reason
    if not passed:
        assert "wrong unit" in verdict.reason


def test_an_ordinary_noun_after_a_number_is_no_unit() -> None:
    assert score(NumericSpec(value=14, unit=None), "Final Answer: 14 employees").passed
    assert extract_quantities("14 employees")[0].unit is None
