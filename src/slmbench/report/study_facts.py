"""What a study page shows, as records: gathered from the stores by
:func:`slmbench.study.page.write_page`.

The page (:mod:`slmbench.report.study_page`) and the seed-claim checks
(:mod:`slmbench.report.seed_claims`) both read these; neither imports the other's
internals.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pydantic import BaseModel, ConfigDict, Field

from slmbench.agents.costs import trial_costs
from slmbench.agents.humaneval import Summary as HumanEvalSummary
from slmbench.agents.records import Trial
from slmbench.agents.rescoring import Rescored
from slmbench.agents.summary import AnalysisSummary
from slmbench.core.stats import Estimate
from slmbench.microtasks.diagnostics.cascade import CascadeReport
from slmbench.microtasks.matrix import MatrixRun
from slmbench.microtasks.recommend import Recommendation

__all__ = ["DIMENSIONS", "BlockTime", "ModelCost", "PageVerdicts", "ReadingTally", "Stated",
           "StudyFacts", "group_costs", "num", "pct", "pval", "short", "table"]

DIMENSIONS = ("consistency", "robustness", "fault_tolerance", "safety")


class ModelCost(BaseModel):
    """What one model cost: trials and readings stored, model time and tokens."""

    model_config = ConfigDict(frozen=True)

    model: str
    trials: int = 0
    trials_planned: int = 0
    trial_wall_s: float = 0.0
    tokens: int = 0
    readings: int = 0
    readings_planned: int = 0
    reading_wall_s: float | None = None  # None: the store does not time readings
    reading_tokens: int = 0
    readings_with_tokens: int = 0


class BlockTime(BaseModel):
    """One block of the study file: what it plans, what is stored, the model time the stored part
    took (from the stores' own timings) and the hours the rest should take."""

    model_config = ConfigDict(frozen=True)

    block: str  # A1, B2, ... in the order of the study file
    models: list[str]
    unit: str  # "trial" | "reading"
    planned: int
    stored: int
    spent_s: float
    at_most: bool = False  # a sequential Part B block: ``planned`` is an upper bound
    hours_left: float | None = None  # None: a model of the block has no measured rate


class ReadingTally(BaseModel):
    """One model's Part B readings: planned ones stored, model time and tokens."""

    model_config = ConfigDict(frozen=True)

    done: int = 0
    planned: int = 0
    seconds: float | None = None  # None: no store yet
    tokens: int = 0
    with_tokens: int = 0  # readings that recorded their tokens (older ones did not)


def group_costs(trials: Sequence[Trial], planned: Mapping[str, int],
                readings: Mapping[str, ReadingTally]) -> list[ModelCost]:
    """Per-model cost rows: each model's trial costs (:func:`slmbench.agents.costs.trial_costs`,
    a model spec's configurations as one row) beside the tally of its readings; a join of
    records, no number computed here."""
    models = list(dict.fromkeys([*planned, *readings]))
    costs = trial_costs(trials, models)
    out = []
    for m in models:
        c, r = costs[m], readings.get(m, ReadingTally())
        out.append(ModelCost(
            model=m, trials=c.trials, trials_planned=planned.get(m, 0), trial_wall_s=c.wall_s,
            tokens=c.tokens, readings=r.done, readings_planned=r.planned,
            reading_wall_s=r.seconds, reading_tokens=r.tokens, readings_with_tokens=r.with_tokens))
    return out


class Stated(BaseModel):
    """One verdict a page states, and what it rests on."""

    model_config = ConfigDict(frozen=True)

    verdict: str
    basis: str | None = None  # tasks and cells, items read; None: the page says (seed claims)


class PageVerdicts(BaseModel):
    """The verdicts of one study page, by kind, each keyed the same way on every page."""

    model_config = ConfigDict(frozen=True)

    version: int = 1
    name: str  # the study's
    claims: dict[str, Stated]
    pairs: dict[str, Stated]  # "a vs b" (in name order; the temperatures in the basis)
    temperature: dict[str, Stated]  # "model, T 0.3 vs 1"
    cells: dict[str, Stated]  # "model · task · prompt · reading · metric"
    # the rule version each kind was judged by (report.since.RULES; empty: written before #60)
    rules: dict[str, int] = Field(default_factory=dict)


class StudyFacts(BaseModel):
    """Everything the page shows, gathered from the stores by
    :func:`slmbench.study.page.write_page`."""

    name: str
    study_file: str
    command: str
    created: str
    versions: dict[str, str]
    model_hashes: dict[str, str]
    summary: AnalysisSummary | None = None
    trials: list[Trial] = Field(default_factory=list)
    matrices: list[MatrixRun] = Field(default_factory=list)  # one per Part B block
    recommendation: Recommendation | None = None  # what to deploy per micro-task
    cascades: list[CascadeReport] = Field(default_factory=list)  # one per [[cascade]] block
    humaneval: list[HumanEvalSummary] = Field(default_factory=list)
    costs: list[ModelCost] = Field(default_factory=list)
    figures: dict[str, str] = Field(default_factory=dict)  # name -> path relative to the page
    html_report: str | None = None  # relative to the page
    incomplete: list[str] = Field(default_factory=list)
    exports: list[str] = Field(default_factory=list)  # gzipped JSONL of the stores, relative
    design: list[list[str]] = Field(default_factory=list)  # [block, models, grid] per block
    cuts: list[str] = Field(default_factory=list)  # left out of the design, as the file says
    notes: list[str] = Field(default_factory=list)  # how the study runs, as the file says
    block_times: list[BlockTime] = Field(default_factory=list)  # model time per block
    verdict_changes: list[str] | None = None  # Part B cells whose verdict changed since the
    #                                           previous export (None: no export to compare)
    # an earlier page's verdicts (its verdicts.json) and the link to it from this page
    previous: PageVerdicts | None = None
    previous_link: str | None = None
    # the stored trials a new scoring rule moved (the exports' rescored.json), if rescored
    rescored: Rescored | None = None
    # this page's own claims, pairs and temperature effects a newer rule moved (rule-changes.json)
    rule_moves: list[str] | None = None


def pct(est: Estimate | None) -> str:
    """``62.0 [48.1, 74.2]`` in percent; ``–`` when undefined."""
    return "–" if est is None else est.formatted()


def num(est: Estimate | None) -> str:
    """``0.620 [0.481, 0.742]``; ``–`` when undefined."""
    return "–" if est is None else est.formatted(percent=False, digits=3)


def pval(p: float | None) -> str:
    return "–" if p is None else ("<0.001" if p < 0.001 else f"{p:.3f}")


def table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return [*out, ""]


def short(spec: str) -> str:
    """The spec without its backend; its options stay (``qwen2.5-coder-0.5b?n_ctx=8192`` is a
    row of its own, apart from ``qwen2.5-coder-0.5b``)."""
    return spec.split(":", 1)[-1]
