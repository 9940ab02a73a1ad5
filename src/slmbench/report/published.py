"""The seed studies' published numbers (data files with their source) and the page sections that
set a study's own numbers beside them.

``report/data/seed_part_a.json`` holds the original agent-reliability study's Part A table
(31-task accuracy with its Wilson interval, the four dimensions and the composite, in %), with
the repository, commit and paths it was read from; ``report/data/seed_part_b.json`` the
micro-task seed's headline findings. Nothing here is typed into a page: the sections read the
files, and a model of the study is matched to a published one by its Ollama tag (the spec's
target, or the tag of the registry entry the target names).
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Literal

from pydantic import BaseModel, ConfigDict

from slmbench.agents.configurations import target_of
from slmbench.core.stats import Estimate
from slmbench.report.cascade_page import rerank_gain
from slmbench.report.study_facts import DIMENSIONS, StudyFacts, num, short, table

__all__ = ["PublishedPartA", "PublishedPartB", "matched_tag", "published_part_a",
           "published_part_b", "seed_part_a", "seed_part_b"]


class PublishedRow(BaseModel):
    """One model of the seed's table, in percent."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    model: str  # the Ollama tag the seed ran
    accuracy: float
    accuracy_ci: tuple[float, float]
    consistency: float
    robustness: float
    fault_tolerance: float
    safety: float
    composite: float
    composite_ci: tuple[float, float]

    def interval(self, field: Literal["accuracy", "composite"]) -> Estimate:
        """The published number ``field`` with its interval, in percent as published."""
        low, high = self.accuracy_ci if field == "accuracy" else self.composite_ci
        return Estimate(estimate=getattr(self, field), low=low, high=high, method="published",
                        n=0)


class PublishedPartA(BaseModel):
    """The seed's Part A table and where it comes from."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    about: str
    source: dict[str, str | dict[str, str]]
    units: str
    n_tasks: int
    composite_trials: int
    rerun_max_points: float
    rerun_median_points: float
    safety_text: str
    models: tuple[PublishedRow, ...]


class Finding(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    key: str
    what: str
    task: str | None = None  # the micro-task a finding is about (the cascade's: ranking)
    k: int | None = None
    n: int | None = None
    estimate: float | None = None
    low: float | None = None
    high: float | None = None

    @property
    def interval(self) -> Estimate:
        """The finding's number with its interval, as the one record that prints it."""
        return Estimate(estimate=self.estimate, low=self.low, high=self.high,
                        method="published", n=self.n or 0)


def _signed(text: str) -> str:
    """``text`` (a number first) with a ``+`` before a number that is not negative."""
    return text if text.startswith(("-", "–")) else "+" + text


class PublishedPartB(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    about: str
    source: dict[str, str]
    findings: tuple[Finding, ...]

    def get(self, key: str) -> Finding:
        return next(f for f in self.findings if f.key == key)


def _read(name: str) -> str:
    return resources.files("slmbench.report").joinpath("data", name).read_text(encoding="utf-8")


@cache
def seed_part_a() -> PublishedPartA:
    """The seed's published Part A table (``report/data/seed_part_a.json``)."""
    return PublishedPartA.model_validate(json.loads(_read("seed_part_a.json")))


@cache
def seed_part_b() -> PublishedPartB:
    """The Part B seed's findings (``report/data/seed_part_b.json``)."""
    return PublishedPartB.model_validate(json.loads(_read("seed_part_b.json")))


def matched_tag(spec: str, tags: set[str]) -> str | None:
    """The published tag ``spec`` runs: its target (``ollama:qwen2.5-coder:7b``), or the Ollama
    tag of the registry entry it names (``llamacpp:qwen2.5-coder-7b``); None if neither. A
    configuration (``SPEC (all tools)``) matches as its spec."""
    from slmbench.models.catalog import OllamaSource, load_registry

    target = target_of(spec)
    if target in tags:
        return target
    entry = load_registry().find(target)
    if entry is not None and isinstance(entry.source, OllamaSource) and entry.source.tag in tags:
        return entry.source.tag
    return None


def _source_line(p: PublishedPartA) -> str:
    src = p.source
    paths = src["paths"]
    assert isinstance(paths, dict)
    where = "; ".join(f"{what}: `{path}`" for what, path in paths.items())
    return f"Source: {src['repository']} at commit `{src['commit']}` ({where})."


def _ours(f: StudyFacts, spec: str) -> dict[str, Estimate | None]:
    """This study's accuracy, dimensions and composite for ``spec``."""
    s = f.summary
    out: dict[str, Estimate | None] = {}
    if s is None:
        return out
    acc = next((a for a in s.accuracy if a.model == spec), None)
    out["accuracy"] = acc.accuracy if acc else None
    dims = next((d for d in s.dimensions if d.model == spec), None)
    for k in DIMENSIONS:
        out[k] = dims.dimensions.get(k) if dims else None
    out["composite"] = dims.composite if dims else None
    return out


def _beside(ours: Estimate | None, published: float) -> str:
    if ours is None or ours.estimate is None:
        return "–"
    return f"{ours.formatted()} ({100 * ours.estimate - published:+.1f})"


def published_part_a(f: StudyFacts) -> list[str]:
    """The seed's published table, what it measured, and (for a model this study also ran) our
    numbers beside it with the difference: a comparison, not a replication."""
    p = seed_part_a()
    cols = ("accuracy", *DIMENSIONS, "composite")
    rows = [[r.model, r.interval("accuracy").formatted(percent=False, digits=1),
             *(f"{getattr(r, k):g}" for k in DIMENSIONS),
             r.interval("composite").formatted(percent=False, digits=1)] for r in p.models]
    best_safety = max(r.safety for r in p.models)
    lines = [
        "## The seed's published Part A table (reference)", "",
        f"{p.n_tasks}-task accuracy with its Wilson 95% interval, and the four dimensions and "
        f"the composite, in %, as the original study published them. {_source_line(p)}", "",
        *table(["model", "accuracy % [95% CI]", *DIMENSIONS, "composite % [95% CI]"], rows),
        "Read these numbers with care. The original's *consistency* is pass@k plus the "
        "similarity of tool trajectories, not pass^k as here; its composite interval treats the "
        f"composite as a proportion of {p.composite_trials} trials; its own re-run of the same "
        f"protocol moved models by up to {p.rerun_max_points:g} points (median "
        f"{p.rerun_median_points:g}). Its text says the best safety score is "
        f"\"{p.safety_text}\" while its table gives {best_safety:g}.", ""]
    tags = {r.model for r in p.models}
    models = [m for m in _study_models(f) if matched_tag(m, tags)]
    if not models:
        return [*lines, "No model of this study is in the published table, so nothing is set "
                "beside it.", ""]
    by_tag = {r.model: r for r in p.models}
    ours_rows = []
    for m in models:
        r = by_tag[matched_tag(m, tags) or ""]
        ours = _ours(f, m)
        ours_rows.append([short(m), r.model,
                          *(_beside(ours.get(k), getattr(r, k)) for k in cols)])
    return [*lines, "### This study beside the published table (a comparison, not a "
            "replication)", "",
            "Ours in % with our 95% interval, and in brackets ours minus the published figure, "
            "in points. A comparison, not a replication: our tasks are grounded in an invented "
            "world (a right answer no tool result supports is not a success), theirs partly "
            f"in public facts a model may recall; the original's own re-run spread (up to "
            f"{p.rerun_max_points:g} points) is the least difference that can mean anything.",
            "", *table(["our model", "published as", *cols], ours_rows)]


def _study_models(f: StudyFacts) -> list[str]:
    s = f.summary
    return [a.model for a in s.accuracy] if s is not None else []


def _designed(f: StudyFacts, part: str, text: str, *, in_models: bool = False) -> bool:
    """Whether a block of ``part`` (A, B, C) of the study's design names ``text`` in its grid
    (or, ``in_models``, its models)."""
    return any(row[0].startswith(part) and text in (row[1] if in_models else row[2]).lower()
               for row in f.design)


def _unsettled(what: str, planned: bool) -> str:
    """Why this study has no number to set beside a seed finding."""
    if planned:
        return f"the study plans a {what}, but none is settled yet: see Incomplete"
    return f"no {what} in this study"


def published_part_b(f: StudyFacts) -> list[str]:
    """The micro-task seed's findings, each beside this study's count of the same kind."""
    p = seed_part_b()
    cells = [c for m in f.matrices for c in m.cells]
    frozen = [c for c in cells if c.prompt_id == "p0"]
    paraphrased = [c for c in cells if c.prompt_id != "p0"]
    llama = [c for c in frozen if "llama" in short(c.model).lower()]

    def count(found: list, what: str, eligible: bool, planned: bool) -> str:
        if not found:
            return f"– ({_unsettled(what, planned)})"
        text = f"{sum(c.eligible == eligible for c in found)} of {len(found)} cell by cell"
        tested = [c for c in found if c.family is not None]
        if eligible and tested:  # beside it, the count a summary may state
            text += (f"; {sum(bool(c.family_eligible) for c in tested)} of {len(tested)} "
                     f"family-wise (Holm over {tested[0].family})")
        return text

    q, lm, para, cas = (p.get(k) for k in ("qwen3_eligible", "llama_ineligible",
                                            "paraphrases_passing", "cascade"))
    rows = [
        [q.what, f"{q.k} of {q.n}",
         "eligible configurations on the frozen prompt p0: "
         + count(frozen, "Part B cell on p0", True, _designed(f, "B", "p0"))],
        [lm.what, f"{lm.k} of {lm.n}",
         "ineligible Llama configurations on p0: "
         + count(llama, "Llama model", False, _designed(f, "B", "llama", in_models=True))],
        [para.what, f"{para.k} of {para.n}",
         "eligible configurations on a paraphrase (p1-p3): "
         + count(paraphrased, "paraphrase", True,
                 any(_designed(f, "B", p) for p in ("p1", "p2", "p3")))],
        [cas.what, _signed(cas.interval.formatted(percent=False, digits=3)),
         "; ".join(f"{short(c.model)} re-ranking BM25's top {c.k} ({c.rerank.n_items} eval "
                   f"items): MRR {num(rerank_gain(c))}" for c in f.cascades
                   if c.task == cas.task)
         or "– (" + _unsettled(f"`[[cascade]]` block on {cas.task}",
                               _designed(f, "C", f"cascade on {cas.task}")) + ")"],
    ]
    return ["## The Part B seed's findings beside ours", "",
            f"Source: {p.source['text']}, `{p.source['path']}`; its setting: "
            f"{p.source['setting']}. Ours count configurations (model × task × prompt × reading"
            " × metric) of this study's matrices, eligible by this study's rule: the seed's "
            "(the 95% lower bound above τ), and the paired interval of model − τ-baseline "
            "above 0, and not constant. Cell by cell, as the seed counted; beside it, the "
            "count family-wise (each task's deciding metric, Holm over every configuration "
            "tested together), the verdict this page's summary states.", "",
            *table(["seed finding", "seed", "here"], rows)]
