"""Part B across runtimes: item-by-item decisions, log-prob spread and cell verdicts."""

from __future__ import annotations

import pytest

from slmbench.core.errors import ConfigError
from slmbench.core.stats import Estimate
from slmbench.microtasks.agreement import FORMAT_FAILURE, against_floor, readings_agreement
from slmbench.microtasks.cells import EligibilityCell, Verdict
from slmbench.microtasks.matrix import MatrixRun
from slmbench.microtasks.readout import ItemReading

OPTIONS = ["approve", "deny"]
CPP, SERVER, HF = "llamacpp:m", "llamaserver:m", "hf:m.gguf"


def _reading(i: int, choice: str | None, lp: tuple[float, float] | None) -> ItemReading:
    logprobs = None if lp is None else dict(zip(OPTIONS, lp, strict=True))
    ranked = None if logprobs is None else sorted(OPTIONS, key=lambda o: -logprobs[o])
    return ItemReading(item_id=f"i{i}", task="approval", prompt_id="p0", options=OPTIONS,
                       logprobs=logprobs, logprob_ranking=ranked, reply=choice or "?",
                       generation_ranking=[] if choice is None else
                       [choice, *[o for o in OPTIONS if o != choice]])


def _cell(spec: str, reading: str, verdict: Verdict) -> EligibilityCell:
    e = Estimate(estimate=0.8, low=0.7, high=0.9, method="wilson", n=200)
    return EligibilityCell(task="approval", model=spec, precision="q8", prompt_id="p0",
                           reading=reading, metric="f1", n_items=200, score=e, tau=0.6,
                           tau_anchor="majority", baseline_scores={}, diff=e,
                           format_failures=0, eligible=verdict == "eligible", verdict=verdict)


def _run(spec: str, readings: list[ItemReading], verdicts: tuple[Verdict, Verdict] =
         ("eligible", "ineligible"), sequential: bool = False) -> MatrixRun:
    return MatrixRun(command="", created="", models=[spec], tasks=["approval"], prompts=["p0"],
                     limit=200, seed=0, items={"approval": [r.item_id for r in readings]},
                     baseline_scores={}, tau_sweep=[], by_prompt=[], notes=[],
                     readings=readings, sequential=sequential,
                     cells=[_cell(spec, "generation", verdicts[0]),
                            _cell(spec, "logprob", verdicts[1])])


def _decisions(n: int, flips: set[int]) -> list[str]:
    base = ["approve" if i % 3 else "deny" for i in range(n)]
    return [("deny" if d == "approve" else "approve") if i in flips else d
            for i, d in enumerate(base)]


def test_decisions_log_probs_and_verdicts_are_compared_item_by_item() -> None:
    a = [_reading(i, d, (-0.1, -2.0) if d == "approve" else (-2.0, -0.1))
         for i, d in enumerate(_decisions(200, set()))]
    b = [_reading(i, d, (-0.15, -2.1) if d == "approve" else (-2.1, -0.15))
         for i, d in enumerate(_decisions(200, {3, 9}))]
    (got,) = readings_agreement({CPP: _run(CPP, a), HF: _run(HF, b, ("undecided", "ineligible"))})
    assert (got.a, got.b, got.items) == (CPP, HF, 200)
    assert got.decisions.agreed == 198 and got.decisions.kappa.low is not None
    assert got.disagreed == ["i3", "i9"]
    assert got.logprob_decisions is not None and got.logprob_decisions.agreed == 198
    assert got.logprobs is not None and got.logprobs.n == 400
    assert got.logprobs.maximum == pytest.approx(2.0, abs=0.11)  # the two flipped items
    by_reading = {v.reading: v for v in got.verdicts}
    assert by_reading["generation"].same is None  # undecided on one side: not compared
    assert by_reading["logprob"].same is True


def test_a_runtime_without_log_probs_is_compared_on_generation_only() -> None:
    a = [_reading(i, d, (-0.1, -2.0)) for i, d in enumerate(_decisions(50, set()))]
    b = [_reading(i, d, None) for i, d in enumerate(_decisions(50, set()))]
    (got,) = readings_agreement({CPP: _run(CPP, a), SERVER: _run(SERVER, b)})
    assert got.logprobs is None and got.logprob_decisions is None
    assert got.decisions.agreed == 50 and "no log-probabilities" in (got.note or "")


def test_a_format_failure_is_an_answer_of_its_own() -> None:
    a = [_reading(0, None, None), _reading(1, "deny", None)]
    b = [_reading(0, "deny", None), _reading(1, "deny", None)]
    (got,) = readings_agreement({CPP: _run(CPP, a), SERVER: _run(SERVER, b)})
    assert got.decisions.agreed == 1 and FORMAT_FAILURE in got.decisions.labels


def test_three_runtimes_are_three_pairs() -> None:
    rs = [_reading(i, d, None) for i, d in enumerate(_decisions(20, set()))]
    got = readings_agreement({s: _run(s, rs) for s in (CPP, SERVER, HF)})
    assert [(g.a, g.b) for g in got] == [(CPP, SERVER), (CPP, HF), (SERVER, HF)]


def test_matrices_that_cannot_be_compared_are_refused() -> None:
    rs = [_reading(0, "deny", None)]
    with pytest.raises(ConfigError, match="two runtimes"):
        readings_agreement({CPP: _run(CPP, rs)})
    with pytest.raises(ConfigError, match="until decided"):
        readings_agreement({CPP: _run(CPP, rs), HF: _run(HF, rs, sequential=True)})
    with pytest.raises(ConfigError, match="come from a matrix of"):
        readings_agreement({CPP: _run(CPP, rs), HF: _run(SERVER, rs)})
    with pytest.raises(ConfigError, match="share no item"):
        readings_agreement({CPP: _run(CPP, rs), HF: _run(HF, [_reading(5, "deny", None)])})


def test_runtimes_that_disagree_on_more_items_than_two_chunkings_are_beyond_the_floor() -> None:
    same = [_reading(i, d, None) for i, d in enumerate(_decisions(200, set()))]
    few = [_reading(i, d, None) for i, d in enumerate(_decisions(200, {4}))]
    many = [_reading(i, d, None) for i, d in enumerate(_decisions(200, set(range(0, 60, 2))))]
    (floor,) = readings_agreement({CPP: _run(CPP, same), "llamacpp:m?chunking=prompt":
                                   _run("llamacpp:m?chunking=prompt", few)})
    (cross,) = readings_agreement({CPP: _run(CPP, same), HF: _run(HF, many)})
    ids = [r.item_id for r in same]
    beyond = against_floor(cross, floor, ids)
    assert (beyond.only_a, beyond.only_b) == (29, 0) and beyond.p_value < 0.001
    assert against_floor(floor, floor, ids).p_value == 1.0
