"""The study's page: everything stored gathered into :class:`~slmbench.report.study_facts.
StudyFacts` and rendered (the exports, figures and HTML report beside it)."""

from __future__ import annotations

import json
import platform
import re
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from pydantic import ValidationError

from slmbench.agents.configurations import configurations
from slmbench.agents.humaneval import summaries
from slmbench.agents.records import Trial
from slmbench.agents.runner.config import Experiment
from slmbench.agents.runner.plan import plan_of
from slmbench.agents.store import export_trials
from slmbench.agents.summary import AnalysisSummary
from slmbench.agents.summary_file import SUMMARY_NAME, read_summary
from slmbench.core.errors import ConfigError, ModelNotFoundError
from slmbench.core.paths import shown_path
from slmbench.core.sources import sha256_file
from slmbench.core.version import VERSION
from slmbench.microtasks import tasks as micro_tasks
from slmbench.microtasks.cells import CELL_VERSION
from slmbench.microtasks.datasets.records import AnyItem
from slmbench.microtasks.diagnostics.cascade import CascadeReport
from slmbench.microtasks.eligibility import deciding_metrics
from slmbench.microtasks.matrix import MatrixRun, family_runs
from slmbench.microtasks.recommend import Recommendation, recommend
from slmbench.microtasks.store import ReadingStore
from slmbench.models.catalog import PypiSource, load_registry, resolve_target
from slmbench.models.pull import read_record
from slmbench.models.spec import parse_spec
from slmbench.report import report_trials
from slmbench.report.partb import unread_undecided, verdict_changes
from slmbench.report.readme import checked_entry, write_entry
from slmbench.report.since import VERDICTS_NAME, page_verdicts
from slmbench.report.study_facts import (
    BlockTime,
    PageVerdicts,
    ReadingTally,
    StudyFacts,
    group_costs,
    short,
)
from slmbench.report.study_page import (
    readme_block,
    relative,
    render_study_page,
)
from slmbench.study.export import export_humaneval, stored_trials
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
    HUMANEVAL_EXPORT,
    MATRIX_NAME,
    READINGS_EXPORT,
    READINGS_NAME,
    TRIALS_EXPORT,
    PartB,
    Study,
    all_models,
    assets_dir,
    part_a_experiment,
    planned_items,
)


@dataclass
class _Facts:
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


def versions() -> dict[str, str]:
    """slmbench (and its git commit when run from a checkout), Python, llama-cpp-python."""

    out = {"slmbench": VERSION}
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                                text=True, timeout=10, cwd=Path(__file__).parent)
        if commit.returncode == 0 and commit.stdout.strip():
            out["commit"] = commit.stdout.strip()
    except (OSError, subprocess.SubprocessError):
        pass
    out["Python"] = platform.python_version()
    for dist in ("llama-cpp-python", "transformers", "torch"):
        try:
            out[dist] = version(dist)
        except PackageNotFoundError:
            continue
    return out


def model_hashes(specs: list[str]) -> dict[str, str]:
    """sha256 of each llama.cpp model file: from its pull record, else hashed now, else (no
    file here, e.g. a fresh clone regenerating a page) the sha256 its registry entry pins."""
    out: dict[str, str] = {}
    for spec in specs:
        parsed = parse_spec(spec)
        if parsed.backend != "llamacpp":
            continue
        record = None if parsed.target.endswith(".gguf") else read_record(parsed.target)
        if record is not None:
            out[f"{parsed.target}.gguf"] = record.sha256
            continue
        try:
            path = resolve_target(parsed.target)
        except (ConfigError, ModelNotFoundError):
            entry = load_registry().find(parsed.target)
            if entry is not None and isinstance(entry.source, PypiSource) and entry.source.sha256:
                out[f"{parsed.target}.gguf"] = entry.source.sha256
            continue  # not pulled and not pinned: nothing to show
        out[path.name] = sha256_file(path)
    return out


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


def collect_part_a(study: Study, facts: _Facts) -> dict[str, int]:
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


def page_blocker(study: Study, study_file: Path) -> str | None:
    """Why the study's page must not be written now, or None. A page (and the exports beside
    it) at the study's ``page`` that another study file made is replaced only by a complete
    study: a partial page never takes the place of another study's finished one."""
    assert study.page is not None
    if not study.page.is_file():
        return None
    made = re.search(r"^From the study file `([^`]+)`", study.page.read_text(encoding="utf-8"),
                     re.MULTILINE)
    if made is None or made.group(1) == shown_path(study_file, published=True) or (
            Path(made.group(1)).resolve() == study_file.resolve()):
        return None
    if not (left := [r for r in size_plan(study) if r.remaining]):
        return None
    blocks = ", ".join(dict.fromkeys(r.block for r in left))
    return (f"{shown_path(study.page)} is the page of {made.group(1)}, and this study is not "
            f"complete ({blocks} still to run); its page replaces that one once it is")


def write_page(study: Study, *, study_file: Path, command: str,
               readme: Path | None = None) -> Path:
    """Gather everything stored and write the study's Markdown page; returns its path.

    With ``readme``, also replace the study's generated entry in that file (between the lines
    of :func:`~slmbench.report.study_page.readme_markers`); ConfigError, before anything is
    written, if it lacks them."""
    assert study.page is not None
    text = "" if readme is None else checked_entry(readme, study.page)
    previous = previous_verdicts(study)  # refused before anything is written
    facts = _Facts()
    planned = collect_part_a(study, facts)
    readings = collect_part_b(study, facts)
    cascades = collect_cascades(study, facts)
    shown_file = shown_path(study_file, published=True)
    recommendation = part_b_recommendation(study, facts.matrices, cascades,
                                           command=f"slmbench recommend {shown_file}")
    found = [d for d in study.humaneval if d.is_dir()]
    for d in study.humaneval:
        if not d.is_dir():
            facts.incomplete.append(
                f"HumanEval: run directory {shown_path(d, published=True)} does not exist")
    if found:
        export_humaneval(found, assets_dir(study) / HUMANEVAL_EXPORT)
        facts.exports.append(relative(assets_dir(study) / HUMANEVAL_EXPORT, study.page.parent))
    page = StudyFacts(
        design=design(study), cuts=study.cuts, notes=study.notes,
        block_times=block_times(study),
        name=study.name, study_file=shown_file,
        command=command,
        created=datetime.now(UTC).isoformat(timespec="seconds"), versions=versions(),
        model_hashes=model_hashes(all_models(study)), humaneval=summaries(found),
        costs=group_costs(facts.trials, planned, readings), incomplete=facts.incomplete,
        exports=facts.exports, summary=facts.summary, trials=facts.trials,
        figures=facts.figures, html_report=facts.html_report, matrices=facts.matrices,
        verdict_changes=facts.verdict_changes, cascades=cascades, recommendation=recommendation,
        previous=previous, previous_link=(
            relative(study.previous, study.page.parent) if study.previous else None))
    study.page.parent.mkdir(parents=True, exist_ok=True)
    study.page.write_text(render_study_page(page), encoding="utf-8")
    assets_dir(study).mkdir(parents=True, exist_ok=True)
    (assets_dir(study) / VERDICTS_NAME).write_text(
        page_verdicts(page).model_dump_json(indent=1) + "\n", encoding="utf-8")
    if readme is not None:
        write_entry(readme, text, study.page, command,
                    lambda where, again: readme_block(page, page=where, command=again))
    return study.page


def previous_verdicts(study: Study) -> PageVerdicts | None:
    """The verdicts of the page ``study.previous`` names (its ``verdicts.json``); None when
    the study names none. ConfigError when that page has none to compare with."""
    if study.previous is None:
        return None
    path = study.previous.parent / study.previous.stem / VERDICTS_NAME
    try:
        return PageVerdicts.model_validate_json(path.read_bytes())
    except FileNotFoundError:
        raise ConfigError(f"previous = {str(study.previous)!r}: {path} does not exist",
                          "regenerate that page with this checkout (slmbench study FILE "
                          "--page-only) so that it writes its verdicts") from None
    except ValidationError as exc:
        raise ConfigError(f"{path} is not a page's verdicts: {exc}".splitlines()[0],
                          "regenerate that page with this checkout") from exc


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
    with ReadingStore(study.part_b_dir / READINGS_NAME) as store:
        return recommend(matrices, store=store, cascades=cascades, command=command)


def collect_part_b(study: Study, facts: _Facts) -> dict[str, ReadingTally]:
    """Each Part B block's matrix, over the models whose readings are all stored, into
    ``facts.matrices``; return each model's planned readings stored, time and tokens."""
    if not study.part_b:
        return {}
    path = study.part_b_dir / READINGS_NAME
    items = [planned_items(b) for b in study.part_b]
    if not path.is_file():
        facts.incomplete.append("Part B: no reading stored yet")
        planned: dict[str, int] = {}
        for b, its in zip(study.part_b, items, strict=True):
            for m in b.models:
                planned[m] = planned.get(m, 0) + sum(map(len, its.values())) * len(b.prompts)
        return {m: ReadingTally(planned=n) for m, n in planned.items()}
    out: dict[str, ReadingTally] = {}
    matrices = []
    with ReadingStore(path) as store:
        for b, its in zip(study.part_b, items, strict=True):
            complete, unsettled = [], []
            tasks = {t.name: t for t in micro_tasks.lookup(b.tasks)}
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
    tasks = {t.name: t for t in micro_tasks.lookup(b.tasks)}
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


CHANGES_NAME = "verdict-changes.json"


def changed_verdicts(previous: Path, matrices: list[MatrixRun]) -> list[str] | None:
    """The Part B cells whose verdict differs from the export at ``previous`` (the page's
    last ``eligibility.json``, before it is overwritten), when that export was made under an
    older cell rule (``CELL_VERSION``): saved beside it as ``verdict-changes.json``, so that
    every later regeneration states the same changes. None when there is nothing to compare
    (no export, or one made under this rule and no saved changes)."""
    saved = previous.parent / CHANGES_NAME
    try:
        old = ([MatrixRun.model_validate(r) for r in json.loads(previous.read_text("utf-8"))]
               if previous.is_file() else [])
    except (ValidationError, json.JSONDecodeError, TypeError):
        old = []
    cells = [c for m in old for c in m.cells]
    if cells and any(c.version < CELL_VERSION for c in cells):
        changes = verdict_changes(cells, [c for m in matrices for c in m.cells])
        saved.write_text(json.dumps(changes, indent=1, ensure_ascii=False) + "\n",
                         encoding="utf-8")
        return changes
    if saved.is_file():
        return list(json.loads(saved.read_text("utf-8")))
    return None


def collect_cascades(study: Study, facts: _Facts) -> list[CascadeReport]:
    """Each cascade block's report, rebuilt from the stored readings alone (a block with a
    reading missing is left out, and the page says so)."""
    path = study.part_b_dir / READINGS_NAME
    if not path.is_file():
        facts.incomplete += [f"Cascade C{n}: no reading stored yet"
                             for n in range(1, len(study.cascade) + 1)]
        return []
    reports = []
    with ReadingStore(path) as store:
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
    facts = _Facts()
    collect_part_b(study, facts)
    cascades = collect_cascades(study, facts)
    store = study.part_b_dir / READINGS_NAME
    return StoredPartB(matrices=facts.matrices,
                       store=store if store.is_file() else None, cascades=cascades,
                       notes=facts.incomplete)
