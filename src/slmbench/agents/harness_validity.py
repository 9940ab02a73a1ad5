"""The ReAct wording before and after issue #15, paired: what ``docs/results/harness-validity.md``
shows, computed from two run directories of the same grid (``benchmarks/harness_validity.py``).

``legacy`` is the old prompt (it told the model to start with 'Final Answer:' after every tool
result), ``neutral`` the prompt the harness uses now. :func:`harness_validity` pairs their
trials (:mod:`slmbench.agents.comparison`: success with task-level intervals, the difference
paired by task), and for each run its forensics (tolerant parser against the strict grammar,
causes), the task-level share of trials with a reply only a tolerant rule reads, and which
parser rule read each action; :mod:`slmbench.report.harness_validity` renders the record.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from slmbench.agents.comparison import PairedComparison, compare_trials, pair_trials
from slmbench.agents.exclusion import rated
from slmbench.agents.forensics import FailureBreakdown, breakdown, diagnose
from slmbench.agents.loading import load_trials, shipped_tasks
from slmbench.agents.records import Trial
from slmbench.agents.store import RunStore
from slmbench.core import stats
from slmbench.core.jsonl import write_jsonl_gz
from slmbench.core.stats import ClusteredEstimate

__all__ = ["Arm", "HarnessValidity", "TrialPair", "export_trials", "harness_validity",
           "read_harness_validity"]


class Arm(BaseModel):
    """One of the two runs: its trials and what the page reads from them."""

    model_config = ConfigDict(frozen=True)

    label: str  # "legacy" | "neutral"
    run: str  # the run directory, as the page names it
    fingerprint: str | None  # the harness fingerprint its store records
    planned: int | None  # trials its store plans (None: not recorded)
    trials: list[Trial]
    failures: FailureBreakdown
    tolerant_share: ClusteredEstimate | None  # trials with a reply only a tolerant rule reads
    formats: dict[str, int]  # parser rule -> steps it read (invalid actions not counted)


class TrialPair(BaseModel):
    """The same trial under both prompts, with the forensics cause of each."""

    model_config = ConfigDict(frozen=True)

    legacy: Trial
    neutral: Trial
    legacy_cause: str | None
    neutral_cause: str | None


class HarnessValidity(BaseModel):
    """Everything the harness-validity page shows."""

    model_config = ConfigDict(frozen=True)

    legacy: Arm
    neutral: Arm
    comparison: PairedComparison  # neutral (a) against legacy (b), paired by task
    pairs: list[TrialPair]
    models: list[str]


def _by_task(trials: Sequence[Trial]) -> list[list[Trial]]:
    out: dict[str, list[Trial]] = {}
    for t in trials:
        out.setdefault(t.task_id, []).append(t)
    return [out[k] for k in sorted(out)]


def _tolerant_share(trials: Sequence[Trial]) -> ClusteredEstimate | None:
    """The task-level share of counted trials with a reply only a tolerant rule reads (None: no
    counted trial)."""
    counted = rated(trials)
    if not counted:
        return None
    return stats.task_level_rate(
        [(len(ts), sum(any(s.action.kind != "invalid" and not s.action.strict for s in t.steps)
                       for t in ts)) for ts in _by_task(counted)])


def _formats(trials: Sequence[Trial]) -> dict[str, int]:
    return dict(Counter(s.action.format or s.action.kind for t in trials for s in t.steps
                        if s.action.kind != "invalid"))


def harness_validity(legacy: Sequence[Trial], neutral: Sequence[Trial], *,
                     fingerprints: tuple[str | None, str | None] = (None, None),
                     runs: tuple[str, str] = ("legacy", "neutral"),
                     planned: tuple[int | None, int | None] = (None, None)) -> HarnessValidity:
    """The two runs' trials paired and each run's forensics (see the module docstring)."""
    tools = {i: list(t.tools) for i, t in shipped_tasks().items()}

    def arm(i: int, label: str, trials: Sequence[Trial]) -> Arm:
        return Arm(label=label, run=runs[i], fingerprint=fingerprints[i], planned=planned[i],
                   trials=list(trials), failures=breakdown(label, trials, tools),
                   tolerant_share=_tolerant_share(trials), formats=_formats(trials))

    pairs, _ = pair_trials(legacy, neutral)
    return HarnessValidity(
        legacy=arm(0, "legacy", legacy), neutral=arm(1, "neutral", neutral),
        comparison=compare_trials(neutral, legacy, label_a="neutral", label_b="legacy"),
        pairs=[TrialPair(legacy=old, neutral=new,
                         legacy_cause=diagnose(old, tools.get(old.task_id)).cause,
                         neutral_cause=diagnose(new, tools.get(new.task_id)).cause)
               for old, new in pairs],
        models=sorted({t.model for t in [*legacy, *neutral]}))


def read_harness_validity(legacy_run: str | Path, neutral_run: str | Path) -> HarnessValidity:
    """:func:`harness_validity` of two run directories: their trials, and the fingerprint and
    planned trials each store records."""
    prints, planned = [], []
    for run in (legacy_run, neutral_run):
        with RunStore(run) as store:
            prints.append(store.get_meta("harness_fingerprint"))
            planned.append(sum((store.get_meta("planned", {}) or {}).values()) or None)
    return harness_validity(load_trials(legacy_run), load_trials(neutral_run),
                            fingerprints=(prints[0], prints[1]),
                            planned=(planned[0], planned[1]),
                            runs=(str(legacy_run), str(neutral_run)))


def export_trials(legacy_run: str | Path, neutral_run: str | Path, folder: Path) -> None:
    """Every stored trial of both runs into ``folder`` (``legacy-trials.jsonl.gz``,
    ``neutral-trials.jsonl.gz``: one stored trial per line, key, outcome and full record)."""
    folder.mkdir(parents=True, exist_ok=True)
    for arm, run in (("legacy", legacy_run), ("neutral", neutral_run)):
        with RunStore(run) as store:
            write_jsonl_gz(folder / f"{arm}-trials.jsonl.gz",
                           [stored.model_dump_json() for stored in store.trials()])
