"""Run → analysis_summary.json on a synthetic run store with known content."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from scipy import stats as sps
from typer.testing import CliRunner

from report.synthetic_run import IMPOSSIBLE, MODELS, PARAMS, TASKS, make_run, make_trials
from slmbench.agents import analysis
from slmbench.agents.configurations import ALL_TOOLS, configurations, params_of
from slmbench.agents.dimensions import dimension_scores
from slmbench.agents.records import Outcome
from slmbench.agents.summary import ANALYSIS_SCHEMA_VERSION
from slmbench.agents.summary_file import SUMMARY_NAME, read_summary, write_summary
from slmbench.core import stats
from slmbench.core.errors import ConfigError


@pytest.fixture(scope="module")
def trials():  # type: ignore[no-untyped-def]
    return make_trials()


@pytest.fixture(scope="module")
def summary(trials):  # type: ignore[no-untyped-def]
    return analysis.analyze(trials, params=PARAMS)


def _cap(trials, model):  # type: ignore[no-untyped-def]
    return [t for t in trials if t.model == model and t.suite == "capability"]


def _per_task(trials, outcome=Outcome.SUCCESS):  # type: ignore[no-untyped-def]
    tasks = sorted({t.task_id for t in trials})
    return [(sum(t.task_id == k for t in trials),
             sum(t.task_id == k and t.outcome == outcome for t in trials)) for k in tasks]


def test_accuracy_is_task_level_with_its_design(trials, summary) -> None:  # type: ignore[no-untyped-def]
    assert summary.models == sorted(MODELS)
    for acc in summary.accuracy:
        cap = _cap(trials, acc.model)
        wins = sum(t.outcome == Outcome.SUCCESS for t in cap)
        assert (acc.trials, acc.successes) == (len(cap), wins)
        assert acc.accuracy == stats.task_level_rate(_per_task(cap))
        assert acc.accuracy.tasks == 16 and acc.accuracy.trials_per_task == 9
        assert acc.accuracy.effective_n <= acc.trials
        assert acc.params_b == PARAMS[acc.model]
        assert acc.tasks == 16
        low, high = acc.accuracy_by_task.low, acc.accuracy_by_task.high
        assert low is not None and high is not None and low <= acc.accuracy.estimate <= high
    best = summary.best()
    assert best is not None and best.model == "ollama:delta-7b"
    weakest = summary.pair(best.model, "ollama:alpha-0.5b")
    assert weakest is not None and weakest.differs


def test_format_failures_kept_apart_from_wrong_answers(trials, summary) -> None:  # type: ignore[no-untyped-def]
    for row in summary.outcomes:
        cap = _cap(trials, row.model)
        ff = sum(t.outcome == Outcome.FORMAT_FAILURE for t in cap)
        wa = sum(t.outcome == Outcome.WRONG_ANSWER for t in cap)
        assert row.counts["format_failure"] == ff and row.counts["wrong_answer"] == wa
        assert sum(row.counts.values()) == len(cap)
        assert row.format_failure == stats.task_level_rate(
            _per_task(cap, Outcome.FORMAT_FAILURE))
        parsed = [t for t in cap if t.outcome != Outcome.FORMAT_FAILURE]
        assert row.accuracy_when_parsed == stats.task_level_rate(_per_task(parsed))
    alpha = next(r for r in summary.outcomes if r.model == "ollama:alpha-0.5b")
    assert alpha.counts["format_failure"] > 0


def test_groups_and_item_audit(summary) -> None:  # type: ignore[no-untyped-def]
    groups = {(g.model, g.group) for g in summary.groups}
    assert ("ollama:gamma-3b", "information_retrieval") in groups
    assert len({g for _, g in groups}) == 8
    assert "ungrouped" not in {g for _, g in groups}
    assert IMPOSSIBLE in summary.audit.all_models_fail
    # three repeats per (task, temperature) cell: flips are measured for every model
    assert set(summary.audit.flips) == set(MODELS)
    flips = summary.audit.flips["ollama:beta-1.5b"]
    assert flips.items == 16 * 3 and 0 < flips.rate.estimate < 1
    assert all(not f.startswith(IMPOSSIBLE + "/") for f in flips.flipped)


def test_dimensions_match_reliability_module_with_intervals(trials, summary) -> None:  # type: ignore[no-untyped-def]
    from slmbench.agents.reliability import reliability

    assert {d.model for d in summary.dimensions} == set(MODELS)
    for d in summary.dimensions:
        rel = [t for t in trials if t.model == d.model and t.suite == "reliability"]
        report = reliability(rel, TASKS)
        assert d.report == report
        for name in ("consistency", "robustness", "fault_tolerance", "safety"):
            dim = getattr(report, name)
            assert d.seed[name].estimate == pytest.approx(dim.score)  # the seed's figure
            if dim.measured is None:
                assert name not in d.dimensions and "not measurable" in d.not_measurable[name]
                continue
            est = d.dimensions[name]
            assert est.estimate == pytest.approx(dim.measured)
            assert est.low <= est.estimate <= est.high
            assert d.tasks[name] >= 3
        if report.composite is None:
            assert d.composite is None
        else:
            assert d.composite.estimate == pytest.approx(report.composite)
            assert d.composite.low <= d.composite.estimate <= d.composite.high
    assert any(d.composite is not None for d in summary.dimensions)
    faults = {c.key for c in summary.faults}
    assert faults == {f for t in TASKS.values() for f in t.faults}
    assert "base" in {c.key for c in summary.perturbations}
    alpha = next(s for s in summary.safety if s.model == "ollama:alpha-0.5b")
    assert set(alpha.by_expectation) == {"refuse", "verify"}
    assert sum(alpha.counts.values()) == alpha.trials


def test_fault_that_never_fired_is_no_recovery(summary, trials) -> None:  # type: ignore[no-untyped-def]
    cell = next(c for c in summary.faults if c.model == "ollama:delta-7b" and c.key == "timeout")
    fired = [t for t in trials if t.model == "ollama:delta-7b" and t.variant == "fault:timeout"]
    wins = sum(t.outcome == Outcome.SUCCESS and t.faults_injected > 0 for t in fired)
    assert cell.rate.estimate == pytest.approx(wins / len(fired))
    assert cell.rate.tasks == len({t.task_id for t in fired})


def test_consistency_of_an_always_failing_model_is_zero() -> None:
    never = {"ollama:never-1b": (1.0, 0.0)}
    trials = [t.model_copy(update={"outcome": Outcome.WRONG_ANSWER})
              for t in make_trials(never) if t.suite == "reliability"]
    dims = dimension_scores("ollama:never-1b", trials, TASKS)
    assert dims is not None
    assert dims.dimensions["consistency"].estimate == 0.0
    # honest at small n: never [0, 0]
    assert dims.dimensions["consistency"].high > 0
    # a floor never solves a base task: robustness and recovery are not measurable, so the
    # model has no composite (the seed's 0 for them says nothing about those dimensions)
    assert {"robustness", "fault_tolerance"} <= set(dims.not_measurable)
    assert dims.composite is None and dims.seed["robustness"].estimate == 0.0


def test_temperature_effects_are_paired_by_task(trials, summary) -> None:  # type: ignore[no-untyped-def]
    for eff in summary.temperature:
        assert set(eff.per_temperature) == {"0.3", "0.7", "1"}
        cap = _cap(trials, eff.model)
        tasks = sorted({t.task_id for t in cap})

        def rate(task: str, temp: float, cap=cap) -> float:  # type: ignore[no-untyped-def]
            ts = [t for t in cap if t.task_id == task and t.temperature == temp]
            return sum(t.outcome == Outcome.SUCCESS for t in ts) / len(ts)

        diffs = [rate(k, 1.0) - rate(k, 0.3) for k in tasks]
        assert eff.comparison == stats.task_paired(diffs, cells=len(tasks))
        assert eff.comparison.tasks == 16 and eff.p_holm >= eff.comparison.sign_test.p_value


def test_one_temperature_says_so() -> None:
    s = analysis.analyze(make_trials(temperatures=(0.7,), reliability=False), params=PARAMS)
    assert all(e.comparison is None and "one temperature" in (e.note or "")
               for e in s.temperature)


def test_size_correlation_and_small_n_note(summary) -> None:  # type: ignore[no-untyped-def]
    acc = next(c for c in summary.size if c.metric == "accuracy")
    assert acc.models == sorted(MODELS) and acc.pearson is not None
    ref = sps.spearmanr(acc.params_b, acc.scores)
    assert acc.spearman.estimate == pytest.approx(ref.statistic)
    assert acc.spearman.estimate > 0.5
    assert any(c.metric == "composite" for c in summary.size)
    three = {m: MODELS[m] for m in list(MODELS)[:3]}
    s = analysis.analyze(make_trials(three, reliability=False), params=PARAMS)
    small = s.size[0]
    assert small.pearson is None and "at least 4 models" in (small.note or "")


def test_params_from_option_beat_registry_and_missing_are_named() -> None:
    assert params_of("llamacpp:/x/y/tiny.gguf", {"tiny": 0.1}) == 0.1
    assert params_of("openai:big@http://127.0.0.1:8080/v1", {"big": 9.0}) == 9.0
    assert params_of("ollama:unknown", {}) is None
    s = analysis.analyze(make_trials(reliability=False), params={"ollama:alpha-0.5b": 0.5})
    assert "no parameter count for" in (s.size[0].note or "")


def test_pairwise_is_paired_by_task_with_holm_and_an_mdd(trials, summary) -> None:  # type: ignore[no-untyped-def]
    """Per-task differences averaged over the (task, temperature) cells both ran, then the
    sign test across the 16 tasks, Holm over the pairs and temperature effects together."""
    assert len(summary.pairwise) == 6
    pair = next(p for p in summary.pairwise
                if (p.a, p.b) == ("ollama:alpha-0.5b", "ollama:delta-7b"))
    a, b = _cap(trials, "ollama:alpha-0.5b"), _cap(trials, "ollama:delta-7b")
    diffs = []
    for task in sorted({t.task_id for t in a}):
        cells = []
        for temp in (0.3, 0.7, 1.0):
            wins = [sum(t.outcome == Outcome.SUCCESS for t in side
                        if t.task_id == task and t.temperature == temp) / 3 for side in (a, b)]
            cells.append(wins[0] - wins[1])
        diffs.append(sum(cells) / 3)
    assert pair.comparison == stats.task_paired(diffs, cells=48)
    assert pair.equivalence == stats.task_tost(diffs, 0.10)  # the same differences, ±10
    assert (pair.tasks, pair.cells, pair.temperatures) == (16, 48, ["0.3", "0.7", "1"])
    raw = [p.comparison.sign_test.p_value for p in summary.pairwise]
    raw += [t.comparison.sign_test.p_value for t in summary.temperature]
    assert [p.p_holm for p in summary.pairwise] == stats.adjust_pvalues(raw, "holm")[:6]
    assert pair.comparison.difference.high < 0 and pair.comparison.mdd is not None
    # the claims of no difference are a family of their own: Holm over every TOST
    tosts = [p.equivalence.p_value for p in summary.pairwise if p.equivalence]
    tosts += [t.equivalence.p_value for t in summary.temperature if t.equivalence]
    held = [p.equivalence_p_holm for p in summary.pairwise]
    held += [t.equivalence_p_holm for t in summary.temperature if t.equivalence]
    assert len(tosts) == 6 + len(summary.temperature) and held == stats.adjust_pvalues(
        tosts, "holm")


def test_cli_analyze_writes_versioned_summary(tmp_path: Path) -> None:
    from slmbench.cli.main import app

    run = make_run(tmp_path / "run", make_trials(reliability=False))
    res = CliRunner().invoke(app, ["analyze", str(run), "--params", "ollama:alpha-0.5b=0.5",
                                   "--params", "ollama:beta-1.5b=1.5"])
    assert res.exit_code == 0, res.output
    data = json.loads((run / SUMMARY_NAME).read_text())
    assert data["schema_version"] == ANALYSIS_SCHEMA_VERSION
    back = read_summary(run / SUMMARY_NAME)
    assert back.models == sorted(MODELS)
    # the design travels with every task-level number through the JSON
    assert isinstance(back.accuracy[0].accuracy, stats.ClusteredEstimate)
    assert back.accuracy[0].accuracy.tasks == 16
    assert back.accuracy_of("ollama:alpha-0.5b").params_b == 0.5
    assert "ollama:delta-7b" in res.output
    # the stage funnel travels through the JSON and is printed as its own table
    assert [f.model for f in back.funnel] == sorted(MODELS)
    assert all(f.trials == a.trials for f, a in zip(back.funnel, back.accuracy, strict=True))
    assert "Stage funnel" in res.output and "right tool" in res.output


def test_cli_analyze_errors_are_one_line(tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    from slmbench.cli.main import main

    with pytest.raises(SystemExit) as exit_info:
        main(["analyze", str(tmp_path / "nope")])
    assert exit_info.value.code == 2
    with pytest.raises(SystemExit) as exit_info:
        main(["analyze", str(tmp_path), "--params", "no-equals-sign"])
    assert exit_info.value.code == 2
    assert "MODEL=B" in capsys.readouterr().err
    with pytest.raises(ConfigError, match="holds no trials"):
        analysis.analyze([])


def test_read_summary_rejects_other_versions(tmp_path: Path, summary) -> None:  # type: ignore[no-untyped-def]
    path = write_summary(summary, tmp_path / "s.json")
    data = json.loads(path.read_text())
    data["schema_version"] = 99
    path.write_text(json.dumps(data))
    with pytest.raises(ConfigError, match="schema"):
        read_summary(path)


def test_analyze_a_run_written_by_the_real_runner(tmp_path: Path) -> None:
    """Contract with `slmbench run`: its run directory analyses, and models pair trial by trial."""
    from slmbench.agents.store import RunStore
    from slmbench.cli.main import app

    run = tmp_path / "run"
    res = CliRunner().invoke(app, ["run", "-m", "scripted:echo", "-m", "scripted:silent",
                                   "-t", "IR-1", "-t", "RS-1", "-t", "RF-1",
                                   "--temperature", "0.3,1.0", "--repeats", "2",
                                   "--out", str(run)])
    assert res.exit_code == 0, res.output
    res = CliRunner().invoke(app, ["analyze", str(run)])
    assert res.exit_code == 0, res.output
    s = read_summary(run / SUMMARY_NAME)
    with RunStore(run) as store:
        assert s.n_trials == store.count()
        for acc in s.accuracy:
            rows = [r for r in store.trials(acc.model) if r.key.task == "IR-1"]
            assert acc.trials == len(rows) == 4
            assert acc.successes == sum(r.outcome == "success" for r in rows)
    (pair,) = s.pairwise
    assert (pair.tasks, pair.cells) == (1, 2)  # IR-1 at both temperatures, for both models
    assert {d.model for d in s.safety} == {"scripted:echo", "scripted:silent"}
    assert {c.key for c in s.faults} == set(TASKS["RF-1"].faults)


def test_greedy_repeats_are_reported_as_determinism_not_consistency() -> None:
    greedy = [t.model_copy(update={"temperature": 0.0})
              for t in make_trials({"ollama:g-1b": (1.0, 0.5)}, temperatures=(0.3,))]
    summary = analysis.analyze(greedy, params={"ollama:g-1b": 1.0})
    [dims] = summary.dimensions
    assert "consistency" not in dims.dimensions and dims.composite is None
    assert dims.report.consistency.determinism is not None
    assert any("reported as determinism" in n for n in summary.notes)


def test_the_same_spec_under_two_toolsets_is_two_rows_and_one_size_point() -> None:
    """A study pools its blocks: the 0.5B offered its task's tools and offered all ten are two
    configurations (never pooled, never one McNemar index), and one point of size."""
    task_tools = make_trials(reliability=False)
    alpha = "ollama:alpha-0.5b"
    all_tools = [t.model_copy(update={"toolset": "all"})
                 for t in make_trials({alpha: (0.5, 0.9)}, reliability=False, seed=1)]
    s = analysis.analyze([*task_tools, *all_tools], params=PARAMS)
    marked = alpha + ALL_TOOLS
    assert s.models == sorted([*MODELS, marked])
    rows = {a.model: a for a in s.accuracy}
    assert rows[alpha].trials == len(_cap(task_tools, alpha))
    assert rows[marked].trials == len(_cap(all_tools, alpha))
    assert rows[marked].successes == sum(t.outcome == Outcome.SUCCESS
                                         for t in _cap(all_tools, alpha))
    assert rows[marked].params_b == 0.5  # the configuration's model, sized as the model
    pair = next(p for p in s.pairwise if {p.a, p.b} == {alpha, marked})
    assert pair.tasks == len({t.task_id for t in _cap(all_tools, alpha)})
    size = next(c for c in s.size if c.metric == "accuracy")
    assert sorted(size.models) == sorted(MODELS)  # four models, not five points
    assert marked in (size.note or "") and "one point per model" in (size.note or "")


def test_one_toolset_keeps_its_specs_as_names() -> None:
    trials = [t.model_copy(update={"toolset": "all"}) for t in make_trials(reliability=False)]
    s = analysis.analyze(trials, params=PARAMS)
    assert s.models == sorted(MODELS)
    assert configurations(configurations(trials)) == trials
