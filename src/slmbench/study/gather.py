"""What a study's stores hold, gathered for its page: Part A's analysis and figures
(:func:`collect_part_a`), each Part B block's matrix over the models its stored readings settle
(:func:`collect_part_b`), each cascade block's report (:func:`collect_cascades`), the model time
per block (:func:`block_times`) and what to deploy (:func:`part_b_recommendation`); and Part B
rebuilt from the store alone for ``slmbench recommend`` (:func:`stored_part_b`). A page's
exports are written beside it as they are gathered."""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from slmbench.agents.configurations import configurations
from slmbench.agents.records import Trial
from slmbench.agents.runner.config import Experiment
from slmbench.agents.runner.plan import plan_of
from slmbench.agents.store import export_trials
from slmbench.agents.summary import AnalysisSummary
from slmbench.agents.summary_file import SUMMARY_NAME, read_summary
from slmbench.core.errors import ConfigError
from slmbench.microtasks.datasets.records import AnyItem
from slmbench.microtasks.diagnostics.cascade import CascadeReport
from slmbench.microtasks.eligibility import deciding_metrics
from slmbench.microtasks.matrix import MatrixRun, family_runs
from slmbench.microtasks.recommend import Recommendation, recommend
from slmbench.microtasks.store import ReadingStore
from slmbench.report import report_trials
from slmbench.report.partb import unread_undecided
from slmbench.report.study_facts import BlockTime, ReadingTally, short
from slmbench.report.study_page import relative
from slmbench.study.export import stored_trials
from slmbench.study.plan import size_plan
from slmbench.study.run import (
    Unread,
    block_matrix,
    cascade_report,
    decided,
    refuse,
    shortlist_keys,
    unread,
)
from slmbench.study.spec import (
    MATRIX_NAME,
    READINGS_EXPORT,
    TRIALS_EXPORT,
    PartB,
    Study,
    assets_dir,
    part_a_experiment,
    planned_items,
)
from slmbench.study.verdicts import changed_verdicts


@dataclass
class Gathered:
    """What the page's sections gather from the stores, before they become a
    :class:`~slmbench.report.study_facts.StudyFacts`."""

    incomplete: list[str] = field(default_factory=list)  # what is missing, in page order
    exports: list[str] = field(default_factory=list)  # relative to the page
    summary: AnalysisSummary | None = None
    trials: list[Trial] = field(default_factory=list)
    figures: dict[str, str] = field(default_factory=dict)
    html_report: str | None = None
    matrices: list[MatrixRun] = field(default_factory=list)
    verdict_changes: list[str] | None = None


def _instances(e: Experiment) -> str:
    """How many worlds each task of a Part A block runs in (nothing when only the curated)."""
    seeds = e.instance_seeds()
    if seeds == [0]:
        return ""
    return (f"{len(seeds)} instance(s) of each task (worlds {seeds[0]}..{seeds[-1]}"
            + (", seed 0 the curated task); " if seeds[0] == 0 else ", drawn only); "))


def design(study: Study) -> list[list[str]]:
    """One row per block: part, models, what each model runs (the grid as the file says)."""
    rows = []
    for n, e in enumerate(study.part_a, 1):
        rows.append([f"A{n}", ", ".join(short(m) for m in e.models),
                     f"suites {', '.join(e.suites) or 'all'}"
                     + (f", tasks {', '.join(e.tasks)}" if e.tasks else "")
                     + f"; T {', '.join(f'{t:g}' for t in e.temperatures)}; "
                     f"{e.repeats} repeat(s) (consistency tasks at least their min_repeats); "
                     + _instances(e) + f"{e.scaffold}, {e.max_steps} steps at most"])
    for n, b in enumerate(study.part_b, 1):
        rows.append([f"B{n}", ", ".join(short(m) for m in b.models),
                     f"tasks {', '.join(b.tasks)}; prompts {', '.join(b.prompts)}; "
                     + ("read to decision, at most " if b.sequential else "")
                     + f"{b.limit or 'all'} eval items per task (seed {b.seed}); "
                     "log-prob and generation readings"])
    for n, c in enumerate(study.cascade, 1):
        rows.append([f"C{n}", short(c.model),
                     f"cascade on {c.task}: BM25's top {c.k} re-ranked by log-prob, and the "
                     f"router fitted on {c.fit_limit or 'all'} fit items; "
                     f"{c.limit or 'all'} eval items (seed {c.seed})"
                     + (f"; {c.turns} turns per item" if c.turns else "")])
    return rows


def collect_part_a(study: Study, facts: Gathered) -> dict[str, int]:
    """Analyse the trials of every Part A block together into ``facts``; return the planned
    trials per model."""
    planned: dict[str, int] = {}
    for block in range(len(study.part_a)):
        plan = plan_of(part_a_experiment(study, block))
        for p in plan.trials:
            planned[p.key.model] = planned.get(p.key.model, 0) + 1
    stored = stored_trials(study)  # as stored: what the export writes
    trials = configurations(stored)  # as analysed: one name per row
    if not study.part_a:
        return planned
    if not trials:
        facts.incomplete.append("Part A: no trial stored yet")
        return planned
    if len(trials) < sum(planned.values()):
        facts.incomplete.append(f"Part A: {len(trials)} of {sum(planned.values())} planned "
                                "trials stored; the tables use what is stored")
    files = report_trials(trials, study.out / "part-a" / "report",
                          summary_path=study.out / "part-a" / SUMMARY_NAME,
                          run_dir=study.out / "part-a")  # shown relative on the report
    facts.summary = read_summary(files.summary)
    facts.trials = trials
    if study.page:  # every stored trial beside the page, so each number can be audited
        export_trials(stored, assets_dir(study) / TRIALS_EXPORT)
        facts.exports.append(relative(assets_dir(study) / TRIALS_EXPORT, study.page.parent))
    if study.page:  # PNGs and the self-contained HTML beside the page (PDFs stay in the run)
        assets = assets_dir(study)
        (assets / "figures").mkdir(parents=True, exist_ok=True)
        figures = {}
        for name, (_, png) in files.figures.items():
            figures[name] = relative(Path(shutil.copy2(png, assets / "figures" / png.name)),
                                     study.page.parent)
        facts.figures = figures
        facts.html_report = relative(Path(shutil.copy2(files.html, assets / "report.html")),
                                     study.page.parent)
    return planned


def block_times(study: Study) -> list[BlockTime]:
    """Per block of the study file: planned and stored trials (readings), the model time of the
    stored ones, and the hours the rest should take at the rates measured in the stores (a
    sequential block's model whose cells are all settled has none left)."""
    rows = size_plan(study)
    out = []
    for block in dict.fromkeys(r.block for r in rows):
        mine = [r for r in rows if r.block == block]
        left = [0.0 if not r.remaining else r.hours for r in mine]
        out.append(BlockTime(
            block=block, models=[r.model for r in mine], unit=mine[0].unit,
            planned=sum(r.planned for r in mine), stored=sum(r.stored for r in mine),
            spent_s=sum(r.spent_s for r in mine), at_most=mine[0].at_most,
            hours_left=None if None in left else sum(h or 0.0 for h in left)))
    return out


def part_b_recommendation(study: Study, matrices: Sequence[MatrixRun],
                          cascades: Sequence[CascadeReport] = (), *,
                          command: str) -> Recommendation | None:
    """What to deploy per micro-task over the study's matrices and cascade reports, its cost
    from the study's readings store (None without a cell); ``command`` prints the same
    table."""
    if not any(m.cells for m in matrices):
        return None
    with study.readings() as store:
        return recommend(matrices, store=store, cascades=cascades, command=command)


def collect_part_b(study: Study, facts: Gathered) -> dict[str, ReadingTally]:
    """Each Part B block's matrix, over the models whose readings are all stored, into
    ``facts.matrices``; return each model's planned readings stored, time and tokens."""
    if not study.part_b:
        return {}
    items = [planned_items(b) for b in study.part_b]
    if not study.readings_path.is_file():
        facts.incomplete.append("Part B: no reading stored yet")
        planned: dict[str, int] = {}
        for b, its in zip(study.part_b, items, strict=True):
            for m in b.models:
                planned[m] = planned.get(m, 0) + sum(map(len, its.values())) * len(b.prompts)
        return {m: ReadingTally(planned=n) for m, n in planned.items()}
    out: dict[str, ReadingTally] = {}
    matrices = []
    with study.readings() as store:
        for b, its in zip(study.part_b, items, strict=True):
            complete, unsettled = [], []
            tasks = {t.name: t for t in b.micro_tasks}
            for m in b.models:
                want = sum(map(len, its.values())) * len(b.prompts)
                have = sum(store.get(m, tasks[t], p, i) is not None
                           for t, group in its.items() for p in b.prompts for i in group)
                settled = have == want or (b.sequential and decided(study, b, m, store))
                tokens, counted = store.tokens(m)
                before = out.get(m, ReadingTally())  # a model of several blocks: their sum
                out[m] = ReadingTally(done=before.done + have, planned=before.planned + want,
                                      seconds=store.seconds(m), tokens=tokens,
                                      with_tokens=counted)
                if settled:
                    complete.append(m)
                elif b.sequential and started(store, m, b, its):
                    unsettled.append(m)  # shown as far as the stored readings go, flagged
                elif b.sequential:
                    facts.incomplete.append(f"Part B: {short(m)} has {have} readings stored "
                                            f"(at most {want}) and cells still undecided; "
                                            "it is left out of the matrix")
                else:
                    facts.incomplete.append(f"Part B: {short(m)} has {have} of {want} "
                                            "readings stored; it is left out of the matrix")
            if complete or unsettled:
                got = block_matrix(study, b, complete + unsettled, store, refuse,
                                   stored_only=bool(unsettled))
                matrices.append(got)
                facts.incomplete += read_on_notes(got, unsettled)
        if study.page:  # every raw reading beside the page
            store.export(assets_dir(study) / READINGS_EXPORT)
            facts.exports.append(relative(assets_dir(study) / READINGS_EXPORT,
                                          study.page.parent))
    matrices = family_runs(matrices)  # Holm over every configuration of the study's blocks
    facts.matrices = matrices
    if study.page is not None:
        facts.verdict_changes = changed_verdicts(assets_dir(study) / MATRIX_NAME, matrices)
    if matrices and study.page is not None:  # every cell and reading, beside the page
        assets_dir(study).mkdir(parents=True, exist_ok=True)
        (assets_dir(study) / MATRIX_NAME).write_text(
            "[\n" + ",\n".join(m.model_dump_json(indent=1) for m in matrices) + "\n]\n",
            encoding="utf-8")
    return out


def started(store: ReadingStore, model: str, b: PartB, items: dict[str, list[AnyItem]]) -> bool:
    """Whether the store holds the first reading of every (task, prompt) block of ``model``
    in block ``b`` (so its cells can be shown as far as the stored readings go)."""
    tasks = {t.name: t for t in b.micro_tasks}
    return all(group and store.get(model, tasks[t], p, group[0]) is not None
               for t, group in items.items() for p in b.prompts)


def read_on_notes(matrix: MatrixRun, models: list[str]) -> list[str]:
    """One line per model of ``models`` whose cells the stored readings do not settle: how
    many cells, and how many items are unread (what the study would read on)."""
    deciding = deciding_metrics(matrix.cells)
    out = []
    for m in models:
        open_ = [c for c in matrix.cells
                 if c.model == m and unread_undecided(c, deciding[c.task] == c.metric)]
        if open_:
            out.append(f"Part B: {short(m)}: {len(open_)} cells are not settled by the "
                       f"{sum(c.n_items for c in open_):,} stored readings (up to "
                       f"{sum((c.n_split or 0) - c.n_items for c in open_):,} items unread); "
                       "the study would read on: " + "; ".join(
                           f"{c.task} {c.prompt_id} {c.reading} ({c.n_items} of {c.n_split})"
                           for c in open_))
    return out


def collect_cascades(study: Study, facts: Gathered) -> list[CascadeReport]:
    """Each cascade block's report, rebuilt from the stored readings alone (a block with a
    reading missing is left out, and the page says so)."""
    if not study.readings_path.is_file():
        facts.incomplete += [f"Cascade C{n}: no reading stored yet"
                             for n in range(1, len(study.cascade) + 1)]
        return []
    reports = []
    with study.readings() as store:
        for n, c in enumerate(study.cascade, 1):
            try:
                reports.append(cascade_report(study, c, store, unread))
            except ConfigError as exc:  # e.g. a backend without log-probabilities
                facts.incomplete.append(f"Cascade C{n}: {short(c.model)} on {c.task}: "
                                        f"{exc}; it is left out")
            except Unread:
                stored = {(r["task"], r["prompt_id"], r["item_id"]) for r in store.rows()
                          if r["model"] == c.model}
                want = shortlist_keys(c)
                facts.incomplete.append(
                    f"Cascade C{n}: {short(c.model)} on {c.task} has "
                    f"{len(stored.intersection(want))} of {len(want)} shortlist readings "
                    "stored; it is left out")
    return reports


@dataclass(frozen=True)
class StoredPartB:
    """The study's Part B as its readings store holds it (:func:`stored_part_b`)."""

    matrices: list[MatrixRun]  # one per block, over its settled models
    store: Path | None  # the readings store; None when nothing is stored yet
    cascades: list[CascadeReport]  # the cascade blocks' reports whose readings are all stored
    notes: list[str]  # what is left out, and why (a block or cascade with readings missing)


def stored_part_b(study: Study) -> StoredPartB:
    """Every Part B matrix and cascade report rebuilt from the stored readings alone (no model is
    loaded, nothing is written), as ``slmbench recommend STUDY.toml`` reads them."""
    study = study.model_copy(update={"page": None})
    facts = Gathered()
    collect_part_b(study, facts)
    cascades = collect_cascades(study, facts)
    store = study.readings_path
    return StoredPartB(matrices=facts.matrices,
                       store=store if store.is_file() else None, cascades=cascades,
                       notes=facts.incomplete)
