"""The ReAct wording before and after issue #15, paired: what ``docs/results/harness-validity.md``
shows, computed from two runs of the same grid (``benchmarks/harness_validity.py``), as each
run exports itself beside the page (:func:`export_arm`, :func:`read_exported`).

``legacy`` is the old prompt (it told the model to start with 'Final Answer:' after every tool
result), ``neutral`` the prompt the harness uses now. :func:`harness_validity` pairs their
trials (:mod:`slmbench.agents.comparison`: success with task-level intervals, the difference
paired by task), and for each run its forensics (tolerant parser against the strict grammar,
causes), the task-level share of trials with a reply only a tolerant rule reads, and which
parser rule read each action; :mod:`slmbench.report.harness_validity_page` renders the record.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError

from slmbench.agents.comparison import PairedComparison, compare_trials, pair_trials
from slmbench.agents.exclusion import rated
from slmbench.agents.forensics import FailureBreakdown, breakdown, diagnose
from slmbench.agents.loading import shipped_tasks
from slmbench.agents.records import Trial
from slmbench.agents.store import RunStore
from slmbench.core import stats
from slmbench.core.errors import ConfigError
from slmbench.core.jsonl import read_jsonl_gz, validated, write_jsonl_gz
from slmbench.core.stats import ClusteredEstimate
from slmbench.core.tomlfile import first_error

__all__ = ["ARMS", "Arm", "ArmRun", "HarnessValidity", "TrialPair", "export_arm",
           "harness_validity", "read_exported"]


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


class ArmRun(BaseModel):
    """What a run's store records beside its trials, exported as ``ARM-run.json``."""

    model_config = ConfigDict(frozen=True)

    run: str  # the run directory, as the page names it
    fingerprint: str | None  # the harness fingerprint its store records
    planned: int | None  # trials its store plans (None: not recorded)


ARMS = ("legacy", "neutral")
EXPORT_HINT = ("run `python benchmarks/harness_validity.py run ARM` for each arm (it exports "
               "the arm when it finishes), or restore docs/results/harness-validity/ from git")


def export_arm(run: str | Path, arm: str, folder: Path) -> None:
    """One run's stored trials and its store's record into ``folder``:
    ``ARM-trials.jsonl.gz`` (one stored trial per line, key, outcome and full record) and
    ``ARM-run.json`` (:class:`ArmRun`). The page is built from these alone
    (:func:`read_exported`), so it regenerates on a clone that never ran a model."""
    with RunStore(run) as store:
        write_jsonl_gz(folder / f"{arm}-trials.jsonl.gz",
                       [stored.model_dump_json() for stored in store.trials()])
        meta = ArmRun(run=str(run), fingerprint=store.get_meta("harness_fingerprint"),
                      planned=sum((store.get_meta("planned", {}) or {}).values()) or None)
    (folder / f"{arm}-run.json").write_text(meta.model_dump_json(indent=2) + "\n",
                                            encoding="utf-8")


def _read_arm(folder: Path, arm: str) -> tuple[ArmRun, list[Trial]]:
    meta_path, trials_path = folder / f"{arm}-run.json", folder / f"{arm}-trials.jsonl.gz"
    for path in (meta_path, trials_path):
        if not path.is_file():
            raise ConfigError(f"{path}: no such export", EXPORT_HINT)
    try:
        meta = ArmRun.model_validate_json(meta_path.read_text(encoding="utf-8"))
    except ValidationError as exc:
        raise ConfigError(f"{meta_path}: not an arm's run record: {first_error(exc)}",
                          EXPORT_HINT) from None
    rows = read_jsonl_gz(trials_path, EXPORT_HINT)
    return meta, validated(Trial, trials_path, (r.get("record") for r in rows), EXPORT_HINT)


def read_exported(folder: str | Path) -> HarnessValidity:
    """:func:`harness_validity` of the two arms :func:`export_arm` wrote into ``folder``:
    their trials, and the run, fingerprint and planned trials each store recorded.
    ConfigError naming the file when one is missing or malformed."""
    (m_old, old), (m_new, new) = (_read_arm(Path(folder), arm) for arm in ARMS)
    return harness_validity(old, new, fingerprints=(m_old.fingerprint, m_new.fingerprint),
                            planned=(m_old.planned, m_new.planned), runs=(m_old.run, m_new.run))
