"""Reading until decided: the anytime-valid rule's error rate, its saving, and the read loop."""

from __future__ import annotations

import itertools
import random
from pathlib import Path

import pytest
from seq_fakes import N_EVAL, Oracle, write_approval

from slmbench.core import stats
from slmbench.microtasks import tasks as registry
from slmbench.microtasks.eligibility import SequentialRule, make_cell, settle
from slmbench.microtasks.matrix import run_matrix
from slmbench.microtasks.store import ReadingStore

APPROVAL = registry.get("approval")
MEMORY = registry.get("memory")

TAU = 0.70
HORIZON = 600


def _run_cell(p: float, rng: random.Random) -> tuple[str, int]:
    """One synthetic accuracy cell of true accuracy ``p``, read until decided; a cell still
    undecided at the end of its split gets the cell's own verdict there (:func:`make_cell`,
    which also weighs the fixed-n paired interval once every item is read)."""
    golds = ["approve"] * HORIZON
    # a reference right on 70% of the items, its misses spread over the split as a shuffled
    # item order spreads them (all at the end, the paired half could clear only after item 420)
    reference = ([["approve"]] * int(TAU * HORIZON)
                 + [["deny"]] * (HORIZON - int(TAU * HORIZON)))
    random.Random(HORIZON).shuffle(reference)
    rule = SequentialRule(APPROVAL, "accuracy", golds, {"reference": reference})
    assert rule.tau == pytest.approx(TAU)
    feed, verdict, read = rule.tracker().feed, "undecided", []
    while verdict == "undecided" and len(read) < HORIZON:
        read.append(["approve", "deny"] if rng.random() < p else ["deny", "approve"])
        verdict = feed(read[-1])
    if verdict == "undecided":
        verdict = make_cell(task=APPROVAL, metric="accuracy", model="m", precision="-",
                            prompt_id="p0", reading="logprob", golds=golds, rankings=read,
                            baselines={"reference": reference}, rule=rule).verdict
    return verdict, len(read)


def test_the_sequential_rule_errs_at_most_5_percent_and_reads_far_fewer_items(
        capsys: pytest.CaptureFixture[str]) -> None:
    rng = random.Random(20261201)
    truths = [0.50, 0.55, 0.60, 0.80, 0.85, 0.90]
    errors, read, cells = 0, [], 0
    for p in truths:
        for _ in range(20):
            verdict, n = _run_cell(p, rng)
            wrong = "ineligible" if p > TAU else "eligible"
            errors += verdict == wrong
            read.append(n)
            cells += 1
    at_tau = [_run_cell(TAU, rng) for _ in range(12)]  # a tie: any "eligible" is an error
    errors_at_tau = sum(v == "eligible" for v, _ in at_tau)
    saving = 1 - sum(read) / (len(read) * HORIZON)
    with capsys.disabled():
        print(f"\nsequential rule: {errors}/{cells} wrong verdicts away from τ, "
              f"{errors_at_tau}/{len(at_tau)} 'eligible' at τ; mean items read "
              f"{sum(read) / len(read):.0f} of {HORIZON} (mean saving {saving:.0%})")
    assert errors / cells <= 0.05 and errors_at_tau / len(at_tau) <= 0.05
    # far fewer items than the full split (the stop also waits for the paired difference
    # model - baseline, as the cell's rule does; that reads more than the sequence alone)
    assert saving >= 0.6
    # a tie never settles "eligible" and mostly reads the whole split
    assert sum(n == HORIZON for _, n in at_tau) >= len(at_tau) // 2


def test_the_confidence_sequence_is_wider_than_the_fixed_n_interval_and_only_narrows() -> None:
    seq = stats.ConfidenceSequence(200)
    widths = []
    for k in range(200):
        got = seq.add(float(k % 4 != 0))
        assert got.low is not None and got.high is not None
        widths.append(got.high - got.low)
    fixed = stats.wilson(150, 200)
    assert got.estimate == 0.75 and got.low < fixed.low and got.high > fixed.high
    assert all(b <= a for a, b in itertools.pairwise(widths))
    with pytest.raises(stats.StatsInputError):
        seq.add(1.5)


def test_settle_needs_the_bound_strictly_past_tau() -> None:
    assert settle(0.71, 0.9, 0.7) == "eligible"
    assert settle(0.5, 0.69, 0.7) == "ineligible"
    assert settle(0.7, 0.9, 0.7) == settle(0.6, 0.7, 0.7) == "undecided"


# --- the read loop --------------------------------------------------------------------------

def test_a_matrix_read_until_decided_stops_early_both_ways_and_resumes(tmp_path: Path) -> None:
    golds = write_approval(tmp_path)
    models = {"scripted:right": Oracle(golds, spec="scripted:right"),
              "scripted:wrong": Oracle(golds, wrong=True, spec="scripted:wrong")}
    with ReadingStore(tmp_path / "r.sqlite") as store:
        run = run_matrix(list(models), [APPROVAL], ["p0"], source=tmp_path,
                         loader=lambda spec: models[spec], store=store, sequential=True)
    by = {(c.model, c.reading): c for c in run.cells}
    right, wrong = by[("scripted:right", "generation")], by[("scripted:wrong", "generation")]
    assert right.verdict == "eligible" and right.eligible and right.n_split == N_EVAL
    assert wrong.verdict == "ineligible" and not wrong.eligible
    assert right.n_items < N_EVAL // 4 and wrong.n_items < N_EVAL // 4  # stopped early
    # the one interval the cell carries is the anytime-valid one that decided it, and the
    # paired half is anytime-valid too (the stop was chosen on the data)
    assert right.interval_kind == "anytime-valid" and right.score.low is not None
    assert right.score.low > right.tau and "confidence sequence" in right.score.method
    assert right.diff.low is not None and right.diff.low > 0
    assert "sequential McNemar" in right.diff.method  # accuracy: on the disagreements
    # the "eligible" stop waits for 0.05 / 4 (two models, two readings tested together), so
    # the cell that stopped eligible is eligible family-wise too (Holm over the four)
    assert right.stop_level == pytest.approx(0.05 / 4) and right.stop_rule_met
    assert right.p_value <= 0.05 / 4 and right.family == 4
    assert right.p_holm is not None and right.p_holm <= 0.05 and right.family_eligible
    assert wrong.family_eligible is False and wrong.stop_rule_met
    # τ was fixed on all 400 items before reading, not on the prefix read
    assert right.tau_anchor in right.baseline_scores
    assert models["scripted:right"].reads == right.n_items
    # a rerun reads nothing new and stops at the same item
    fresh = {s: Oracle(golds, spec=s) for s in models}
    with ReadingStore(tmp_path / "r.sqlite") as store:
        again = run_matrix(list(models), [APPROVAL], ["p0"], source=tmp_path,
                           loader=lambda spec: fresh[spec], store=store, sequential=True)
    assert again.read_counts.read_now == 0
    assert [c.n_items for c in again.cells] == [c.n_items for c in run.cells]


class Recorder:
    """Records what a matrix run reports of its progress."""

    def __init__(self) -> None:
        self.events: list[tuple] = []

    def start(self, label: str, total: int) -> None:
        self.events.append(("start", label, total))

    def advance(self, read: int, estimate: stats.Estimate | None) -> None:
        self.events.append(("advance", read, estimate))

    def finish(self, read: int, verdict: str) -> None:
        self.events.append(("finish", read, verdict))


def test_progress_reports_items_read_the_running_bound_and_the_end(tmp_path: Path) -> None:
    golds = write_approval(tmp_path)
    model = Oracle(golds, spec="scripted:right")
    rec = Recorder()
    run = run_matrix(["scripted:right"], [APPROVAL], ["p0"], source=tmp_path,
                     loader=lambda _s: model, sequential=True, cell_progress=rec)
    n = run.cells[0].n_items
    assert rec.events[0] == ("start", "scripted:right · approval · p0", N_EVAL)
    advances = [e for e in rec.events if e[0] == "advance"]
    assert [e[1] for e in advances] == list(range(1, n + 1))
    last = advances[-1][2]
    assert last is not None and last.estimate == 1.0 and last.low is not None
    assert last.low > run.cells[0].tau  # the bound that settled it
    assert rec.events[-1] == ("finish", n, "settled")
    fixed = Recorder()  # reading every item: counts only, and the end of the split
    run_matrix(["scripted:right"], [APPROVAL], ["p0"], source=tmp_path, limit=30,
               loader=lambda _s: model, cell_progress=fixed)
    assert fixed.events[-1] == ("finish", 30, "full split")
    assert all(e[2] is None for e in fixed.events if e[0] == "advance")


def test_an_f1_cell_gets_a_rule_and_reads_to_the_end_of_its_split() -> None:
    """F1 is not a mean over items: its rule fixes τ but never settles before the horizon
    (a memory block read until decided, or rebuilt from a store, used to raise here)."""
    golds = ["save", "skip"] * 20
    rule = SequentialRule(MEMORY, "f1", golds, {"always save": [["save", "skip"]] * 40,
                                                  "rules": [["skip", "save"]] * 40})
    assert rule.anchor == "always save" and not rule.sequential
    tracker = rule.tracker()
    verdicts = [tracker.feed([g]) for g in golds]  # even a perfect reader
    assert set(verdicts) == {"undecided"} and tracker.estimate is None
