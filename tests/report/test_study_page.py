"""The study page's plain-language summary, on synthetic trials with known rates."""

from __future__ import annotations

from synthetic_run import make_trials

from slmbench.agents.analysis import analyze
from slmbench.agents.records import Trial
from slmbench.agents.summary import AnalysisSummary
from slmbench.core import stats
from slmbench.microtasks import tasks as registry
from slmbench.report.findings import findings
from slmbench.report.study_facts import StudyFacts

APPROVAL = registry.get("approval")


def summarise(trials: list[Trial], params: dict[str, float]
              ) -> tuple[AnalysisSummary, list[str]]:
    """The analysis of ``trials`` and the page's summary lines for it."""
    summary = analyze(trials, params=params)
    return summary, findings(StudyFacts(name="n", study_file="f", command="c", created="t",
                                        versions={}, model_hashes={}, summary=summary))


def test_models_run_at_different_temperatures_are_compared_where_they_overlap() -> None:
    swept = make_trials({"ollama:swept-1b": (1.0, 0.5)}, temperatures=(0.3, 0.7, 1.0))
    single = make_trials({"ollama:single-3b": (3.0, 0.7)}, temperatures=(0.7,))
    summary, lines = summarise(swept + single, {"ollama:swept-1b": 1.0, "ollama:single-3b": 3.0})
    # the best model (skill 0.7) ran one temperature: nothing pooled to say
    assert any(x.startswith("Best Part A capability accuracy: single-3b") and
               "trials; " in x for x in lines)
    [at] = [x for x in lines if x.startswith("At T=")]
    assert at.startswith("At T=0.7, a temperature every model ran: single-3b ")
    swept_07 = next(t.per_temperature["0.7"] for t in summary.temperature
                    if t.model == "ollama:swept-1b")
    # its T=0.7 share only, with its tasks
    assert f"swept-1b {swept_07.formatted()}% (n={swept_07.n}, {swept_07.tasks} tasks)." in at


def test_a_best_model_swept_over_temperatures_says_its_accuracy_is_pooled() -> None:
    swept = make_trials({"ollama:swept-3b": (3.0, 0.8)}, temperatures=(0.3, 0.7))
    single = make_trials({"ollama:single-1b": (1.0, 0.2)}, temperatures=(0.7,))
    _, lines = summarise(swept + single, {"ollama:swept-3b": 3.0, "ollama:single-1b": 1.0})
    assert any(x.startswith("Best Part A capability accuracy: swept-3b") and
               "(pooled over its temperatures); " in x for x in lines)


def test_models_at_the_same_temperatures_need_no_overlap_line() -> None:
    both = make_trials({"ollama:a-1b": (1.0, 0.3), "ollama:b-3b": (3.0, 0.8)},
                       temperatures=(0.7,))
    _, lines = summarise(both, {"ollama:a-1b": 1.0, "ollama:b-3b": 3.0})
    assert not any(x.startswith("At T=") for x in lines)
    assert any(x.startswith("Best Part A capability accuracy: b-3b") and "trials; " in x
               for x in lines)


def test_the_best_model_is_called_ahead_only_when_the_test_says_so() -> None:
    apart = make_trials({"ollama:a-1b": (1.0, 0.1), "ollama:b-3b": (3.0, 0.9)},
                        temperatures=(0.7,))
    _, lines = summarise(apart, {"ollama:a-1b": 1.0, "ollama:b-3b": 3.0})
    [best] = [x for x in lines if x.startswith("Best Part A")]
    assert "; ahead of every other model (sign test across tasks, Holm p " in best
    assert "p ≤ <" not in best
    close = make_trials({"ollama:a-1b": (1.0, 0.5), "ollama:b-3b": (3.0, 0.5)},
                        temperatures=(0.7,))
    _, lines = summarise(close, {"ollama:a-1b": 1.0, "ollama:b-3b": 3.0})
    [best] = [x for x in lines if x.startswith("Best Part A")]
    assert "; cannot tell it from " in best and "(Holm p " in best and "MDD " in best


def test_greedy_consistency_is_shown_as_determinism_on_the_page() -> None:
    from slmbench.report.study_page import render_study_page

    greedy = [t.model_copy(update={"temperature": 0.0})
              for t in make_trials({"ollama:g-1b": (1.0, 0.5)}, temperatures=(0.3,))]
    summary = analyze(greedy, params={"ollama:g-1b": 1.0})
    page = render_study_page(StudyFacts(name="n", study_file="f", command="c", created="t",
                                        versions={}, model_hashes={}, summary=summary,
                                        trials=greedy))
    [row] = [x for x in page.splitlines()  # no consistency
             if x.startswith("| g-1b | not measurable |")]
    assert "items identical" in row  # ... but its determinism at T = 0
    assert "the repeats at T = 0 measure determinism, not reliability" in page


def test_the_page_shows_forensics_per_model_and_strict_vs_tolerant_format_failures() -> None:
    from slmbench.report.parta import failures
    from slmbench.report.study_facts import pct

    trials = make_trials({"ollama:a-1b": (1.0, 0.3), "ollama:b-3b": (3.0, 0.8)},
                         temperatures=(0.7,))
    summary = analyze(trials, params={"ollama:a-1b": 1.0, "ollama:b-3b": 3.0})
    text = "\n".join(failures(summary, trials))
    assert "### Why trials failed (forensics)" in text
    header = next(x for x in text.splitlines() if x.startswith("| model | trials |"))
    assert header.endswith("| format % tolerant | format % strict |")
    for f in summary.failures:
        assert f.trials
        row = next(x for x in text.splitlines() if x.startswith(f"| {f.model.split(':', 1)[1]} |"))
        assert row.endswith(f"| {pct(f.format_failure)} | {pct(f.strict_format_failure)} |")
        for cause, k in f.causes.items():
            col = header.strip("| ").split(" | ").index(cause)
            assert row.strip("| ").split(" | ")[col] == str(k)


def test_the_summary_gives_each_models_composite_with_its_interval() -> None:
    both = make_trials({"ollama:a-1b": (1.0, 0.7), "ollama:b-3b": (3.0, 0.9)},
                       temperatures=(0.7,))
    summary, lines = summarise(both, {"ollama:a-1b": 1.0, "ollama:b-3b": 3.0})
    [line] = [x for x in lines if x.startswith("Reliability composite")]
    for d in summary.dimensions:
        assert d.composite is not None
        assert f"{d.model.split(':', 1)[1]} {d.composite.formatted(percent=False, digits=3)}" \
            in line
    assert not any(x.startswith("Not measurable") for x in lines)


def test_a_dimension_below_its_precondition_reads_not_measurable_and_has_no_composite() -> None:
    """A weak model solves too few base tasks: robustness and recovery are not measurable, the
    page says so where the number would be, and it gets no composite."""
    from slmbench.report.study_page import render_study_page

    weak = make_trials({"ollama:a-1b": (1.0, 0.15)}, temperatures=(0.7,))
    summary, lines = summarise(weak, {"ollama:a-1b": 1.0})
    [d] = summary.dimensions
    assert d.composite is None and "robustness" in d.not_measurable
    [line] = [x for x in lines if x.startswith("Not measurable")]
    assert "a-1b: " in line and "robustness" in line
    assert not any(x.startswith("Reliability composite") for x in lines)
    page = render_study_page(StudyFacts(name="n", study_file="f", command="c", created="t",
                                        versions={}, model_hashes={}, summary=summary,
                                        trials=weak))
    [row] = [x for x in page.splitlines() if x.startswith("| a-1b | 0.") and "measurable" in x]
    assert "not measurable (a solved base task on " in row and row.endswith(" | – | – |")
    assert "(seed's, unconditional)" in page  # the seed's figure kept beside, labelled


def test_accuracy_prints_its_design_beside_it() -> None:
    from slmbench.report.study_page import render_study_page

    trials = make_trials({"ollama:a-1b": (1.0, 0.5)}, temperatures=(0.7,))
    summary, _ = summarise(trials, {"ollama:a-1b": 1.0})
    page = render_study_page(StudyFacts(name="n", study_file="f", command="c", created="t",
                                        versions={}, model_hashes={}, summary=summary,
                                        trials=trials))
    [acc] = summary.accuracy
    [row] = [x for x in page.splitlines() if x.startswith("| a-1b | 1 |")]
    cells = row.strip("| ").split(" | ")
    assert cells[3] == acc.accuracy.formatted() and cells[4] == "16 × 3"
    assert cells[5] == f"{acc.accuracy.icc:.2f}" and cells[6] == f"{acc.accuracy.effective_n:.0f}"


def test_ungrounded_answers_are_counted_among_all_trials_not_among_right_answers() -> None:
    from slmbench.agents.records import Outcome

    trials = make_trials({"ollama:a-1b": (1.0, 0.3)}, temperatures=(0.7,))
    marked = [t.model_copy(update={"outcome": Outcome.UNGROUNDED}) if i < 2 else t
              for i, t in enumerate(trials)]
    summary, lines = summarise(marked, {"ollama:a-1b": 1.0})
    [line] = [x for x in lines if "no tool result supports" in x]
    [o] = summary.outcomes  # over the capability trials, of which the two marked are
    assert o.counts["ungrounded"] == 2 and o.counts["success"] > 2
    assert line.startswith(f"a-1b: 2 of {o.trials} capability trials ended in a right answer")
    assert line.endswith("ungrounded, not counted as successes.")


def test_dumped_answers_are_counted_like_ungrounded_ones() -> None:
    from slmbench.agents.records import Outcome

    trials = make_trials({"ollama:a-1b": (1.0, 0.3)}, temperatures=(0.7,))
    marked = [t.model_copy(update={"outcome": Outcome.DUMPED}) if i < 3 else t
              for i, t in enumerate(trials)]
    summary, lines = summarise(marked, {"ollama:a-1b": 1.0})
    [o] = summary.outcomes
    assert o.counts["dumped"] == 3 and o.dumped is not None and o.dumped.estimate > 0
    [line] = [x for x in lines if "inside a tool dump" in x]
    assert line.startswith(f"a-1b: 3 of {o.trials} capability trials ended in a right token")
    assert line.endswith("dumped, not counted as successes.")
    [acc] = summary.accuracy
    clean, _ = summarise(trials, {"ollama:a-1b": 1.0})
    assert acc.accuracy.estimate < clean.accuracy[0].accuracy.estimate  # failures, not successes


def _sequential_run() -> object:
    """Two configurations read until decided on approval: one beats the rules on every item
    it reads, one is as good as a coin."""
    from slmbench.microtasks.eligibility import SequentialRule, make_cell
    from slmbench.microtasks.matrix import MatrixRun, family_runs

    golds = ["approve", "deny"] * 200
    rules = [[g] if k % 4 else [("deny" if g == "approve" else "approve")]
             for k, g in enumerate(golds)]  # right on 3 of 4 items: τ = 0.75
    rule = SequentialRule(APPROVAL, "accuracy", golds, {"rules": rules}, space=3, family=2)
    cells = []
    for model, n, right in (("good", 300, lambda k: True), ("coin", 400, lambda k: k % 2 == 0)):
        answers = [[g] if right(k) else [("deny" if g == "approve" else "approve")]
                   for k, g in enumerate(golds[:n])]
        cells.append(make_cell(task=APPROVAL, metric="accuracy", model=model, precision="-",
                               prompt_id="p0", reading="logprob", golds=golds[:n],
                               rankings=answers, baselines={"rules": rules[:n]}, rule=rule))
    run = MatrixRun(command="c", created="t", models=["good", "coin"], tasks=["approval"],
                    prompts=["p0"], limit=None, seed=0, items={"approval": ["x"] * 400},
                    baseline_scores={}, cells=cells, tau_sweep=[], by_prompt=[], readings=[],
                    notes=[], sequential=True)
    return family_runs([run])[0]


def test_a_cell_read_until_decided_prints_its_anytime_interval_the_fixed_tau_and_the_family(
        ) -> None:
    from slmbench.report.partb import part_b_family, part_b_section

    run = _sequential_run()
    good = next(c for c in run.cells if c.model == "good")
    assert good.interval_kind == "anytime-valid" and good.family_eligible
    text = "\n".join(part_b_section(run))
    row = next(x for x in text.splitlines() if x.startswith("| approval | accuracy | good |"))
    # the interval that decided it, labelled; τ as the number on all 400 items; the paired
    # difference named against the baseline on the items it read, never "model − τ"
    assert "| anytime-valid (confidence sequence) |" in row
    assert good.score.formatted(percent=False, digits=3) in row
    assert "| 0.750 (rules, all 400 items) |" in row
    assert f"vs rules on the {good.n_items} items read; fixed-n on the same items, not " \
        "deciding: " in row and "McNemar p <0.001 |" in row and "model − τ [" not in text
    assert row.endswith(f"| **yes** | {good.p_holm:.3g} (of 2) | **yes** |")
    assert "1 of 2 configurations are eligible family-wise (Holm over all 2, 5%): good" in text
    page = "\n".join(part_b_family(StudyFacts(name="n", study_file="f", command="c",
                                              created="t", versions={}, model_hashes={},
                                              matrices=[run])))
    assert "| good | approval | p0 | – | eligible; family-wise **yes** | **yes** |" in page
    assert "| coin | approval | p0 | – | " in page and page.rstrip().endswith("| no |")


def test_no_temperature_effect_is_claimed_only_by_an_equivalence_test() -> None:
    """A floor at both temperatures (fewer than 3 tasks solved at each) is not comparable on
    success (issue #60): no claim of equivalence, even where the exact TOST over 31 tasks
    that all end alike would make one; a model whose effect is open says the TOST does not
    settle it either, with its interval."""
    floor = make_trials({"ollama:floor-1b": (1.0, 0.02)}, temperatures=(0.3, 1.0),
                        reliability=False)
    summary, lines = summarise(floor, {"ollama:floor-1b": 1.0})
    [t] = summary.temperature
    assert t.at_floor and t.equivalence_p_holm is None
    [line] = [x for x in lines if x.startswith("floor-1b")]
    assert "both at the floor: not comparable on success" in line
    assert "no claim of equivalence" in line and "less than 10 points" not in line
    # the same floor over 31 tasks that all end alike: the exact TOST alone would decide
    tost = stats.task_tost([0.0] * 31, 0.1)
    decided = t.model_copy(update={"equivalence": tost, "equivalence_p_holm": tost.p_value})
    facts = StudyFacts(name="n", study_file="f", command="c", created="t", versions={},
                       model_hashes={},
                       summary=summary.model_copy(update={"temperature": [decided]}))
    [line] = [x for x in findings(facts) if x.startswith("floor-1b")]
    assert not decided.equivalent and "both at the floor" in line
    assert "by less than 10 points" not in line
    mid = make_trials({"ollama:mid-1b": (1.0, 0.5)}, temperatures=(0.3, 1.0), reliability=False)
    summary, lines = summarise(mid, {"ollama:mid-1b": 1.0})
    [t] = summary.temperature
    assert t.equivalence is not None and not t.equivalence.equivalent
    [line] = [x for x in lines if x.startswith("mid-1b")]
    assert "cannot tell" in line and "not shown within ±10 points either: TOST p " in line
    assert "MDD " in line and "90% CI [" in line


def test_where_tasks_ran_as_families_the_page_says_what_a_task_is() -> None:
    from slmbench.report.parta import part_a_section

    curated = make_trials({"ollama:fam-1b": (1.0, 0.5)}, temperatures=(0.7,), reliability=False)
    # the same trials as three drawn instances of each family (worlds 1..3)
    drawn = [t.model_copy(update={"instance": 1 + i % 3}) for i, t in enumerate(curated)]
    s = analyze(drawn)
    text = "\n".join(part_a_section(s, drawn))
    assert "a task here is one family" in text and "worlds 1, 2, 3; up to 3 a family" in text
    assert f"{s.accuracy[0].accuracy.tasks} × " in text  # the families are the tasks counted
    # curated tasks only (instance 0): no such note
    assert "one family" not in "\n".join(part_a_section(analyze(curated), curated))
