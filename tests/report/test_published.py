"""The seeds' published numbers: read from their data files, set beside a study's own."""

from __future__ import annotations

from synthetic_run import make_trials

from slmbench.agents.analysis import analyze
from slmbench.core.stats import wilson
from slmbench.report.published import matched_tag, published_part_a, published_part_b, seed_part_a
from slmbench.report.study_facts import StudyFacts
from slmbench.report.study_page import render_study_page


def facts(**kw: object) -> StudyFacts:
    return StudyFacts(name="n", study_file="f", command="c", created="t", versions={},
                      model_hashes={}, **kw)  # type: ignore[arg-type]


def test_the_data_file_is_the_seeds_table_and_agrees_with_itself() -> None:
    p = seed_part_a()
    assert [r.model for r in p.models][:3] == ["qwen2.5-coder:7b", "qwen2.5:7b", "gemma2:9b"]
    assert len(p.models) == 9 and p.n_tasks == 31
    assert p.source["commit"] == "3d000352c998b5d0204e621ddcdb10568bc986bc"
    for r in p.models:
        # its accuracy interval is the Wilson interval of k of 31 tasks ...
        est = wilson(round(r.accuracy * p.n_tasks / 100), p.n_tasks)
        assert est.low is not None and est.high is not None
        assert abs(100 * est.low - r.accuracy_ci[0]) < 0.06, r.model
        assert abs(100 * est.high - r.accuracy_ci[1]) < 0.06, r.model
        # ... and its composite the mean of its four dimensions
        mean = (r.consistency + r.robustness + r.fault_tolerance + r.safety) / 4
        assert abs(mean - r.composite) < 0.06, r.model


def test_a_model_is_matched_by_its_ollama_tag_or_registry_name() -> None:
    tags = {r.model for r in seed_part_a().models}
    assert matched_tag("ollama:qwen2.5-coder:7b", tags) == "qwen2.5-coder:7b"
    assert matched_tag("ollama:llama3.2:1b?num_ctx=8192", tags) == "llama3.2:1b"
    assert matched_tag("llamacpp:qwen2.5-coder-7b", tags) == "qwen2.5-coder:7b"  # registry name
    assert matched_tag("llamacpp:qwen2.5-coder-0.5b", tags) is None
    # a configuration matches as its spec
    assert matched_tag("ollama:qwen2.5-coder:7b (all tools)", tags) == "qwen2.5-coder:7b"


def test_the_reference_section_says_what_the_numbers_are_and_sets_ours_beside_them() -> None:
    trials = make_trials({"ollama:qwen2.5-coder:7b": (7.6, 0.8),
                          "ollama:other-1b": (1.0, 0.3)}, temperatures=(0.7,))
    summary = analyze(trials, params={"ollama:qwen2.5-coder:7b": 7.6, "ollama:other-1b": 1.0})
    text = "\n".join(published_part_a(facts(summary=summary)))
    assert "| qwen2.5-coder:7b | 67.7 [50.1, 81.4] | 100 | 90 | 100 | 50 | 85.0 [60.1, 96.0] |" \
        in text
    assert "pass@k plus the similarity of tool trajectories, not pass^k" in text
    assert "a proportion of 14 trials" in text and "up to 9.7 points" in text
    assert 'best safety score is "under 50%" while its table gives 50' in text
    assert "a comparison, not a replication" in text
    acc = next(a.accuracy for a in summary.accuracy if a.model == "ollama:qwen2.5-coder:7b")
    assert acc.estimate is not None
    row = next(x for x in text.splitlines() if x.startswith("| qwen2.5-coder:7b | qwen2.5"))
    assert f"{acc.formatted()} ({100 * acc.estimate - 67.7:+.1f})" in row
    assert "| other-1b |" not in text  # not in the published table: nothing beside it


def test_without_a_published_model_the_table_stands_alone() -> None:
    trials = make_trials({"ollama:other-1b": (1.0, 0.3)}, temperatures=(0.7,))
    text = "\n".join(published_part_a(facts(summary=analyze(trials))))
    assert "No model of this study is in the published table" in text
    assert "beside the published table" not in text


def test_the_part_b_findings_stand_beside_what_this_study_cannot_count() -> None:
    text = "\n".join(published_part_b(facts()))
    assert "| 0 of 16 |" in text and "| 12 of 12 |" in text and "| 0 of 112 |" in text
    assert "+0.047 [0.020, 0.073]" in text
    assert "– (no Llama model in this study)" in text


def test_a_finding_whose_cells_are_planned_but_unsettled_says_so() -> None:
    design = [["B1", "qwen2.5-coder-0.5b", "tasks approval; prompts p0, p1; read to decision"],
              ["C1", "qwen2.5-coder-0.5b", "cascade on ranking: BM25's top 3 re-ranked"]]
    text = "\n".join(published_part_b(facts(design=design, incomplete=["Part B: left out"])))
    assert "the study plans a Part B cell on p0, but none is settled yet" in text
    assert "the study plans a paraphrase, but none is settled yet" in text
    assert "the study plans a `[[cascade]]` block on ranking, but none is settled yet" in text
    assert "– (no Llama model in this study)" in text  # none planned: none to wait for


def test_the_page_carries_both_reference_sections() -> None:
    page = render_study_page(facts())
    assert "## The seed's published Part A table (reference)" in page
    assert "## The Part B seed's findings beside ours" in page
