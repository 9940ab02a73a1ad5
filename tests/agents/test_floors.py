"""Two floors are not comparable on success (issue #60, item 3): a pair (or a temperature
effect) where neither side solves 3 tasks claims no equivalence and stays out of the TOSTs'
Holm family, however many tasks would make two floors "within ±10 points" by the exact bound."""

from __future__ import annotations

from report.synthetic_run import make_trials
from slmbench.agents import analysis
from slmbench.agents.records import Outcome, Trial
from slmbench.agents.summary import FLOOR_TEXT
from slmbench.core import stats

FLOORS = ("ollama:alpha-0.5b", "ollama:beta-1.5b")


def _floored(trials: list[Trial], solved: dict[str, set[str]]) -> list[Trial]:
    """The run with each model of ``solved`` succeeding only on the tasks it names."""
    out = []
    for t in trials:
        keep = solved.get(t.model)
        if keep is not None and t.outcome == Outcome.SUCCESS and t.task_id not in keep:
            t = t.model_copy(update={"outcome": Outcome.WRONG_ANSWER})
        out.append(t)
    return out


def _capability(trials: list[Trial]) -> list[str]:
    return sorted({t.task_id for t in trials if t.suite == "capability"})


def test_two_floors_claim_no_equivalence_and_leave_the_tost_family() -> None:
    trials = make_trials(reliability=False)
    solved = {m: set() for m in FLOORS}  # both solve nothing: 0 : 0 tasks
    summary = analysis.analyze(_floored(trials, solved), params={})
    pair = summary.pair(*FLOORS)
    assert pair is not None and (pair.solved_a, pair.solved_b) == (0, 0)
    assert pair.at_floor and not pair.equivalent and pair.equivalence_p_holm is None
    assert pair.equivalence is not None  # the TOST is kept, but states nothing
    # the family holds every other pair's and temperature effect's TOST, not the floor's
    others = [p for p in summary.pairwise if not p.at_floor]
    temps = [t for t in summary.temperature if t.equivalence is not None and not t.at_floor]
    raw = [p.equivalence.p_value for p in others if p.equivalence is not None]
    raw += [t.equivalence.p_value for t in temps if t.equivalence is not None]
    assert [p.equivalence_p_holm for p in others] + [t.equivalence_p_holm for t in temps] \
        == stats.adjust_pvalues(raw, "holm")
    assert "not comparable on success" in FLOOR_TEXT
    # a floor's temperature effect is no claim either
    for t in summary.temperature:
        if t.model in FLOORS:
            assert t.at_floor and not t.equivalent and t.equivalence_p_holm is None


def test_one_side_off_the_floor_is_compared() -> None:
    """Three tasks solved on one side is enough to compare: the pair is not at the floor."""
    trials = make_trials(reliability=False)
    tasks = _capability(trials)
    solved = {FLOORS[0]: set(), FLOORS[1]: set(tasks[1:4])}
    summary = analysis.analyze(_floored(trials, solved), params={})
    pair = summary.pair(*FLOORS)
    assert pair is not None and pair.solved_a == 0 and pair.solved_b is not None
    assert pair.solved_b >= 3 and not pair.at_floor
    assert pair.equivalence_p_holm is not None
