"""An anytime-valid interval is printed as the sequence gives it (issue #60, item 4): never
widened to hold the final estimate, and where the items read later moved the estimate out of
it, its note says so."""

from __future__ import annotations

from slmbench.core import stats

# a paired reading where ``a`` wins the first 12 items and ties the next 100, then wins 3
# disagreements in 4: the running bounds lock in during the early stretch, and the final
# estimate falls below the intersected lower end
EARLY = [(True, False)] * 12 + [(False, False)] * 100
LATE = ([(True, False)] * 3 + [(False, True)]) * 40 + [(True, True)] * 300
A, B = zip(*(EARLY + LATE), strict=True)


def test_the_paired_binary_bound_is_the_sequences_not_the_estimate() -> None:
    t = stats.anytime_paired_binary(A, B, horizon=len(A))
    e = t.interval
    assert e.low is not None and e.high is not None and e.estimate is not None
    assert e.estimate < e.low < e.high  # the sequence's lower end, not the estimate
    assert e.note == stats.OUTSIDE_NOTE
    assert "settled early; the later items moved the estimate out of the interval" in e.note
    assert t.p_value <= 0.05  # still the deciding, anytime-valid result
    # read only as far as the early stretch, the estimate is inside and no note is added
    early = stats.anytime_paired_binary(A[:112], B[:112], horizon=len(A)).interval
    assert early.low is not None and early.low <= early.estimate and early.note is None


def test_the_paired_difference_and_the_mean_are_not_clamped_either() -> None:
    a = [float(x) for x in A]
    b = [float(x) for x in B]
    e = stats.anytime_paired_difference(a, b, horizon=len(a)).interval
    assert e.low is not None and e.estimate is not None
    assert (e.estimate < e.low) == (e.note == stats.OUTSIDE_NOTE)
    values = [1.0] * 80 + [0.0] * 220  # the mean settles high, then falls
    m = stats.anytime_mean(values, null=0.5, horizon=len(values)).interval
    assert m.low is not None and m.estimate is not None
    assert (m.estimate < m.low) == (m.note == stats.OUTSIDE_NOTE)
    seq = stats.ConfidenceSequence(len(values))
    for v in values:
        last = seq.add(v)
    assert last.low == m.low and last.note == m.note
