"""The seed studies' claims, checked against a study's numbers: verdicts follow the data."""

from __future__ import annotations

import pytest
from synthetic_run import make_trials

from slmbench.agents.analysis import analyze
from slmbench.agents.records import Outcome
from slmbench.core.stats import Estimate
from slmbench.microtasks.cells import EligibilityCell
from slmbench.microtasks.eligibility import cell_verdict, settle
from slmbench.microtasks.matrix import MatrixRun
from slmbench.report.seed_claims import CLAIMS, check_claims
from slmbench.report.study_facts import StudyFacts
from slmbench.report.study_page import render_study_page


def facts(**kw: object) -> StudyFacts:
    return StudyFacts(name="n", study_file="f", command="c", created="t", versions={},
                      model_hashes={}, **kw)


def verdicts(f: StudyFacts) -> dict[str, str]:
    return {c.check.__name__: k.verdict for c, k in check_claims(f)}


def part_a(models: dict[str, tuple[float, float]],
           temperatures: tuple[float, ...] = (0.3, 0.7, 1.0)) -> StudyFacts:
    trials = make_trials(models, temperatures=temperatures)
    return facts(summary=analyze(trials, params={m: s for m, (s, _) in models.items()}),
                 trials=trials)


def test_nothing_stored_decides_nothing() -> None:
    assert set(verdicts(facts()).values()) == {"cannot tell"}
    assert len(verdicts(facts())) == len(CLAIMS)


def test_skill_that_follows_size_over_five_models_contradicts_the_size_claim() -> None:
    # synthetic skill rises with size and falls with temperature (0.15 per unit of T)
    f = part_a({f"ollama:m{i}": (size, skill) for i, (size, skill) in
                enumerate([(0.5, 0.5), (1.0, 0.6), (3.0, 0.7), (7.0, 0.8), (9.0, 0.95)])})
    v = verdicts(f)
    assert v["size_unrelated"] == "does not hold"  # 5 models in order: exact p = 1/60
    # the 0.95 model refuses well, but on 3 tasks: the task-level interval (issue #60: a
    # bootstrap over tasks, Clopper-Pearson-like at the tasks) reads 88.9 [25.9, 96.8]%, so
    # a population of tasks like these is not shown above 0.5
    assert v["safety_poor"] == "cannot tell"
    assert v["qwen_recover"] == "cannot tell"  # no Qwen here


def test_a_floor_model_leaves_the_size_claim_and_its_dimensions_undecided() -> None:
    """The 0.1 model solves too few base tasks: its robustness and recovery are not
    measurable, so it has no composite and the size claim rests on four models."""
    f = part_a({f"ollama:m{i}": (size, skill) for i, (size, skill) in
                enumerate([(0.5, 0.1), (1.0, 0.3), (3.0, 0.5), (7.0, 0.7), (9.0, 0.9)])})
    checks = {c.check.__name__: k for c, k in check_claims(f)}
    assert checks["size_unrelated"].verdict == "cannot tell"
    assert "4 model(s)" in checks["size_unrelated"].evidence
    assert "not measurable for m0" in checks["qwen_recover"].evidence
    # neighbours 0.2 apart over 16 tasks: the sign test does not order every pair
    assert checks["temperature_ranking"].verdict == "not shown either way"
    assert "MDD" in checks["temperature_ranking"].evidence


def test_the_ranking_is_decided_by_task_at_every_temperature() -> None:
    far_apart = part_a({"ollama:low": (0.5, 0.3), "ollama:high": (7.0, 0.95)})
    check = next(k for c, k in check_claims(far_apart) if c.check.__name__ ==
                 "temperature_ranking")
    assert check.verdict == "holds" and "?" not in check.evidence.split(" (")[0]
    # a floor is not measurable: a ranking against it decides nothing
    floor = part_a({"ollama:low": (0.5, 0.1), "ollama:high": (7.0, 0.95)})
    check = next(k for c, k in check_claims(floor) if c.check.__name__ ==
                 "temperature_ranking")
    assert check.verdict == "cannot tell" and "not measurable for low" in check.evidence

    def swept(model: str, good_when_cold: bool) -> list:  # type: ignore[type-arg]
        cold, hot = (0.95, 0.35) if good_when_cold else (0.35, 0.95)
        return [*make_trials({model: (1.0, cold)}, temperatures=(0.3,)),
                *make_trials({model: (1.0, hot)}, temperatures=(1.0,), seed=1)]

    trials = [*swept("ollama:cold", True), *swept("ollama:hot", False)]
    crossing = facts(summary=analyze(trials), trials=trials)
    check = next(k for c, k in check_claims(crossing) if c.check.__name__ ==
                 "temperature_ranking")
    assert check.verdict == "does not hold" and "the order flips" in check.evidence


def test_a_weak_qwen_and_a_weak_safety_record() -> None:
    f = part_a({"ollama:qwen-tiny": (0.5, 0.1), "ollama:other": (1.0, 0.15)})
    checks = {c.check.__name__: k for c, k in check_claims(f)}
    # 1 and 3 of 27 safe on 3 safety tasks: the task-level interval reads 0.04 [0.00, 0.72]
    # and 0.11 [0.01, 0.74] (issue #60). "Holds" came from the defect: one success made the
    # ICC 0 and n_eff 27, while 0 of 27 kept n_eff 3 and could never hold
    assert checks["safety_poor"].verdict == "cannot tell"
    # the tiny Qwen solves too few fault tasks unfaulted: its recovery is not measurable
    assert checks["qwen_recover"].verdict == "cannot tell"
    assert "not measurable for" in checks["qwen_recover"].evidence
    # a Qwen that solves them but recovers far less than 90%: the claim fails
    mid = part_a({"ollama:qwen-mid": (0.5, 0.6)})
    assert verdicts(mid)["qwen_recover"] == "does not hold"


def test_a_noisy_composite_over_five_models_shows_nothing_either_way() -> None:
    """No significant relation is no evidence of none: a claim of no effect reads "not shown
    either way" without an equivalence test."""
    f = part_a({f"ollama:m{i}": (size, skill) for i, (size, skill) in
                enumerate([(0.5, 0.7), (1.0, 0.6), (3.0, 0.8), (7.0, 0.65), (9.0, 0.9)])})
    _, check = next((c, k) for c, k in check_claims(f) if c.check.__name__ == "size_unrelated")
    assert check.verdict == "not shown either way"
    assert "composite: Spearman ρ +0.70" in check.evidence


def test_four_models_cannot_test_size_even_in_perfect_order() -> None:
    f = part_a({f"ollama:m{i}": (size, skill) for i, (size, skill) in
                enumerate([(0.5, 0.2), (1.0, 0.45), (3.0, 0.7), (7.0, 0.95)])})
    _, check = next((c, k) for c, k in check_claims(f) if c.check.__name__ == "size_unrelated")
    assert check.verdict == "cannot tell" and "p ≥ 0.083" in check.evidence


def test_a_drop_too_small_for_the_tasks_is_undecided_and_a_large_one_holds() -> None:
    # synthetic success falls by 0.15 per unit of T: 10.5 points from T=0.3 to T=1 is not
    # significant over 16 tasks; from T=0.3 to T=3 (40 points) it is.
    small = part_a({"ollama:one": (7.0, 0.9)})
    large = part_a({"ollama:one": (7.0, 0.9)}, temperatures=(0.3, 3.0))
    assert verdicts(small)["temperature_drop"] == "cannot tell"
    assert verdicts(large)["temperature_drop"] == "holds"
    assert verdicts(large)["temperature_ranking"] == "cannot tell"  # one model: no ranking
    drop = next(k for c, k in check_claims(large) if c.check.__name__ == "temperature_drop")
    assert "task(s) and down on" in drop.evidence and "MDD" in drop.evidence
    # a contrast other than the seed's (0.7 vs 1.0) decides nothing about it
    other = part_a({"ollama:one": (7.0, 0.9)}, temperatures=(0.7, 3.0))
    assert verdicts(other)["temperature_drop"] == "cannot tell"
    # the summary says the same, with both accuracies and their n
    small_text, large_text = render_study_page(small), render_study_page(large)
    assert "one: cannot tell whether temperature changes its accuracy (T=0.3 " in small_text
    assert "one: accuracy differs between its lowest and highest temperature (T=0.3 " \
        in large_text and "T=3 " in large_text


def cell(model: str, prompt: str, low: float, high: float, tau: float = 0.6) -> EligibilityCell:
    score = Estimate(estimate=(low + high) / 2, low=low, high=high, method="wilson", n=20)
    diff = Estimate(estimate=(low + high) / 2 - tau, low=low - tau, high=high - tau,
                    method="paired", n=20)
    return EligibilityCell(
        task="approval", model=model, precision="q4", prompt_id=prompt, reading="logprob",
        metric="accuracy", n_items=20, tau=tau, tau_anchor="rules", baseline_scores={"rules": tau},
        score=score, diff=diff, format_failures=0, eligible=low > tau,
        verdict=cell_verdict(settle(low, high, tau), diff, complete=True))


def matrix(cells: list[EligibilityCell]) -> MatrixRun:
    return MatrixRun(command="c", created="t", models=sorted({c.model for c in cells}),
                     tasks=["approval"], prompts=sorted({c.prompt_id for c in cells}),
                     limit=20, seed=0, items={}, baseline_scores={}, cells=cells,
                     tau_sweep=[], by_prompt=[], readings=[], notes=[])


@pytest.mark.parametrize(("cells", "none", "prompts"), [
    ([cell("a", "p0", 0.2, 0.5), cell("a", "p1", 0.3, 0.55)], "holds", "holds"),
    ([cell("a", "p0", 0.3, 0.7), cell("a", "p1", 0.65, 0.9)], "does not hold", "does not hold"),
    ([cell("a", "p0", 0.2, 0.5)], "holds", "cannot tell"),
    # an interval across τ after every item: the rule's final "not eligible" (undecided)
    ([cell("a", "p0", 0.2, 0.5), cell("a", "p1", 0.4, 0.8)], "holds", "holds"),
])
def test_eligibility_claims_follow_the_cells(cells: list[EligibilityCell], none: str,
                                             prompts: str) -> None:
    v = verdicts(facts(matrices=[matrix(cells)]))
    assert v["none_eligible"] == none and v["prompts_do_not_rescue"] == prompts


def test_the_evidence_names_the_eligible_configurations_and_counts_per_prompt() -> None:
    f = facts(matrices=[matrix([cell("a", "p0", 0.65, 0.9), cell("a", "p1", 0.3, 0.7),
                                cell("a", "p2", 0.4, 0.8)])])
    checks = {c.check.__name__: k for c, k in check_claims(f)}
    only = checks["none_eligible"].evidence
    assert only.startswith("1 of 3 configurations of a eligible family-wise (Holm): a on ")
    assert ", p0, " in only and ", p1, " not in only  # the ineligible are not named eligible
    # only configurations read on p0 and a paraphrase are tested; eligible on p0 already,
    # rewording cannot make this one eligible
    assert checks["prompts_do_not_rescue"].evidence == (
        "1 configurations (a) read on p0 and a paraphrase (p1, p2); 0 eligible family-wise on "
        "a paraphrase where p0 is not")
    assert checks["prompts_do_not_rescue"].verdict == "holds"


def test_rewording_is_judged_family_wise_and_cannot_tell_while_a_paraphrase_is_unsettled(
        ) -> None:
    alone = cell("a", "p1", 0.65, 0.9)  # eligible on its own bound, not after Holm
    lone = alone.model_copy(update={"family": 2, "p_holm": 0.08, "family_eligible": False})
    p0 = cell("a", "p0", 0.3, 0.7).model_copy(update={"family": 2, "p_holm": 1.0,
                                                       "family_eligible": False})
    checks = {c.check.__name__: k for c, k in check_claims(facts(matrices=[matrix([p0, lone])]))}
    assert checks["prompts_do_not_rescue"].verdict == "cannot tell"
    assert "1 paraphrase cells not settled family-wise: a on approval, p1" in checks[
        "prompts_do_not_rescue"].evidence
    # eligible on its own bound but not after Holm: not shown to beat the baseline, nor shown
    # not to, so "none is eligible" is not decided
    assert checks["none_eligible"].verdict == "cannot tell"
    assert "1 more eligible cell by cell only" in checks["none_eligible"].evidence


def test_a_paraphrase_past_holm_where_p0_clears_only_its_own_bound_is_not_a_rescue() -> None:
    """p0 eligible cell by cell but not after Holm, p1 eligible family-wise: by the seed's
    per-cell rule nothing was rescued, by the family-wise rule p1 was; cannot tell, with the
    cells named. With p0 ineligible by both rules, the same p1 is a rescue."""
    p1 = cell("a", "p1", 0.65, 0.9).model_copy(update={"family": 2, "p_holm": 0.01,
                                                        "family_eligible": True})
    near = cell("a", "p0", 0.62, 0.9).model_copy(update={"family": 2, "p_holm": 0.08,
                                                          "family_eligible": False})
    assert near.eligible
    check = {c.check.__name__: k for c, k in check_claims(
        facts(matrices=[matrix([near, p1])]))}["prompts_do_not_rescue"]
    assert check.verdict == "cannot tell", check.evidence
    assert ("0 eligible family-wise on a paraphrase where p0 is not; 1 eligible family-wise on "
            "a paraphrase where p0 is eligible cell by cell") in check.evidence
    out = cell("a", "p0", 0.2, 0.5).model_copy(update={"family": 2, "p_holm": 1.0,
                                                        "family_eligible": False})
    assert not out.eligible
    check = {c.check.__name__: k for c, k in check_claims(
        facts(matrices=[matrix([out, p1])]))}["prompts_do_not_rescue"]
    assert check.verdict == "does not hold", check.evidence


def test_undecided_configurations_are_counted_apart() -> None:
    f = facts(matrices=[matrix([cell("a", "p0", 0.3, 0.7), cell("a", "p1", 0.1, 0.5)])])
    _, check = next((c, k) for c, k in check_claims(f) if c.check.__name__ == "none_eligible")
    assert check.evidence.startswith("0 of 2 configurations of a eligible family-wise")
    assert "; 1 more undecided (n = 20): not shown better than the baseline" in check.evidence
    assert check.verdict == "holds"  # read in full: the rule's final "not eligible"
    open_, shut = sorted(f.matrices[0].cells, key=lambda c: c.verdict != "undecided")
    f = facts(matrices=[matrix([open_.model_copy(update={"n_split": 40}), shut])])
    _, check = next((c, k) for c, k in check_claims(f) if c.check.__name__ == "none_eligible")
    assert check.verdict == "cannot tell" and "could still be read on" in check.evidence


def test_the_page_sets_each_claim_beside_its_verdict() -> None:
    text = render_study_page(facts(matrices=[matrix([cell("a", "p0", 0.3, 0.7)])]))
    assert "## What holds up from the seed studies" in text
    assert all(c.claim in text for c in CLAIMS)
    assert "| micro-tasks (seed 002) | No small-model configuration is eligible" in text


def test_safety_at_zero_on_three_tasks_is_cannot_tell_not_holds() -> None:
    """0 of 3 safety trials (three tasks): the interval is [0, 0.71] (Clopper-Pearson at 0 of
    3 tasks), above 0.5; 0 of 9 on the same three tasks is no better: the task-level interval
    bounds the tasks, not the trials (Wilson over 9 trials would say 0.30)."""
    trials = make_trials({"ollama:tiny": (0.5, 0.1)}, temperatures=(0.7,))
    safety = [t for t in trials if t.task_id.startswith("RS-")]
    kept = [t for t in trials if not t.task_id.startswith("RS-")]
    few = [t.model_copy(update={"outcome": Outcome.WRONG_ANSWER}) for t in safety[:3]]
    f = facts(summary=analyze(kept + few, params={"ollama:tiny": 0.5}), trials=kept + few)
    _, check = next((c, k) for c, k in check_claims(f) if c.check.__name__ == "safety_poor")
    assert check.verdict == "cannot tell", check.evidence
    assert "0.00 [0.00, 0.71]" in check.evidence
    many = [t.model_copy(update={"outcome": Outcome.WRONG_ANSWER}) for t in safety]
    assert len(many) == 9
    g = facts(summary=analyze(kept + many, params={"ollama:tiny": 0.5}), trials=kept + many)
    _, check = next((c, k) for c, k in check_claims(g) if c.check.__name__ == "safety_poor")
    assert check.verdict == "cannot tell" and "0.00 [0.00, 0.71]" in check.evidence
    # looping without acting is no decision: safety is then not measurable
    looped = [t.model_copy(update={"outcome": Outcome.LOOP, "final_answer": None,
                                   "score": None}) for t in safety]
    h = facts(summary=analyze(kept + looped, params={"ollama:tiny": 0.5}), trials=kept + looped)
    _, check = next((c, k) for c, k in check_claims(h) if c.check.__name__ == "safety_poor")
    assert check.verdict == "cannot tell" and "not measurable for tiny" in check.evidence


def _sized(f: StudyFacts, falls: list[float]) -> StudyFacts:
    """``f`` with every temperature effect's one-sided p of "a drop of s points or more" set
    to ``falls`` at s = 6..10 (1 elsewhere), and no reliability dimension (so that the drop
    claim's hypotheses are the whole sized family)."""
    from slmbench.agents.summary import SizedTests

    assert f.summary is not None
    points = list(range(1, 21))
    fall = [falls[s - 6] if 6 <= s <= 10 else 1.0 for s in points]
    temps = [t.model_copy(update={"sized": SizedTests(points=points, fall=fall,
                                                      rise=[1.0] * 20)})
             for t in f.summary.temperature]
    return f.model_copy(update={"summary": f.summary.model_copy(
        update={"temperature": temps, "dimensions": []})})


def _drop(f: StudyFacts):  # type: ignore[no-untyped-def]
    return next(k for c, k in check_claims(f) if c.check.__name__ == "temperature_drop")


V3_FALLS = [0.046, 0.023, 0.013, 0.006, 0.003]  # reference v3's 1.5B: p of a drop ≥ 6..10


def test_a_claim_of_a_size_is_tested_one_sided_at_that_size() -> None:
    """Issue #60: "drops accuracy by 6-10 points" is judged by the one-sided p of a drop of
    6 points or more, not by whether a two-sided 95% interval reaches −6."""
    one = part_a({"ollama:one": (7.0, 0.9)}, temperatures=(0.3, 1.0))
    assert _drop(_sized(one, [1.0] * 5)).verdict == "cannot tell"
    alone = _drop(_sized(one, V3_FALLS))  # a family of one: a drop of 6 or more excluded
    assert alone.verdict == "does not hold" and alone.scope is None
    assert "≥ 6: 0.046" in alone.evidence and "≥ 8: 0.013" in alone.evidence
    # excluded only from 8 points on: the verdict says which part of the size is open
    part = _drop(_sized(one, [0.2, 0.08, 0.03, 0.01, 0.005]))
    assert part.verdict == "cannot tell"
    assert part.scope == "does not hold for a drop of 8 points or more; 6–7 not excluded"
    assert part.stated == ("cannot tell: does not hold for a drop of 8 points or more; 6–7 "
                           "not excluded")
    assert "does not hold for a drop of 8 points or more" in render_study_page(
        _sized(one, [0.2, 0.08, 0.03, 0.01, 0.005]))


def test_the_sized_claims_are_one_holm_family() -> None:
    """Two models tested at the claim's size are two hypotheses of one Holm family: v3's
    p of 0.046 at 6 points no longer excludes 6 (0.092 after Holm), 7 is excluded (Holm over
    0.023 and the other's 0.046)."""
    two = part_a({"ollama:one": (7.0, 0.9), "ollama:two": (3.0, 0.9)},
                 temperatures=(0.3, 1.0))
    check = _drop(_sized(two, V3_FALLS))
    assert check.verdict == "cannot tell"
    assert check.scope == ("one: does not hold for a drop of 7 points or more; 6 not "
                           "excluded; two: does not hold for a drop of 7 points or more; 6 not "
                           "excluded")


def _with_safety(f: StudyFacts, counts: list[tuple[int, int]]) -> StudyFacts:
    """``f`` with every model's measured safety replaced by ``counts``."""
    from slmbench.core.stats import task_level_rate

    assert f.summary is not None
    dims = []
    for d in f.summary.dimensions:
        report = d.report.model_copy(update={"safety": d.report.safety.model_copy(
            update={"measured_counts": counts})})
        dims.append(d.model_copy(update={
            "report": report, "dimensions": {**d.dimensions, "safety": task_level_rate(counts)}}))
    return f.model_copy(update={"summary": f.summary.model_copy(update={"dimensions": dims})})


def test_a_rate_claim_of_a_stated_size_is_tested_one_sided_within_the_family() -> None:
    """"The best model stays under 50%": a safety of 8 tasks × 3 trials whose 95% interval
    reaches below 50% but whose 90% interval does not is shown at 50% or more one-sided
    (issue #60): does not hold, where the two-sided reading said cannot tell."""
    from slmbench.core.stats import task_level_rate

    base = part_a({"ollama:one": (7.0, 0.9)}, temperatures=(0.7,))
    found = None
    for wins in range(24):
        counts = [(3, 3 if k < wins // 3 else wins % 3 if k == wins // 3 else 0)
                  for k in range(8)]
        if sum(c for _, c in counts) != wins:
            continue
        at95, at90 = task_level_rate(counts), task_level_rate(counts, confidence=0.9)
        if at95.low is not None and at90.low is not None and at95.low <= 0.5 < at90.low:
            found = counts
            break
    assert found is not None
    check = next(k for c, k in check_claims(_with_safety(base, found))
                 if c.check.__name__ == "safety_poor")
    assert check.verdict == "does not hold", check.evidence
    assert "one-sided p of 50% or more, Holm over the sized claims: one " in check.evidence
