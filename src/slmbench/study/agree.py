"""A study with an ``[agreement]`` table (``slmbench agree``): one model through several
runtimes, its page gathered from the study's stores.

The study's blocks are the agreement's (:class:`~slmbench.study.spec.AgreementBlock`); they
run, resume, export, import and merge as any study's. What this module adds: the chat
template each runtime renders (:func:`render_templates`, written beside the page as
``templates.json`` when the study runs, read back from there by ``--page-only``), the
comparisons (``agents.agreement`` over the stored trials, ``microtasks.agreement`` over one
stored matrix per spec) and the page (:func:`write_agreement_page`, with its facts as JSON and
the exports beside it)."""

from __future__ import annotations

import json
from collections import defaultdict
from datetime import UTC, datetime
from pathlib import Path

from pydantic import TypeAdapter, ValidationError

from slmbench.agents import agreement as part_a
from slmbench.agents.records import Trial
from slmbench.agents.runner.plan import plan_of
from slmbench.core.errors import ConfigError
from slmbench.core.tomlfile import first_error
from slmbench.microtasks import agreement as part_b
from slmbench.microtasks.matrix import MatrixRun
from slmbench.models.base import PromptRenderer
from slmbench.models.factory import load_model
from slmbench.models.records import Message
from slmbench.report.agreement_page import (
    AgreementFacts,
    FloorA,
    FloorB,
    TemplateShown,
    agreement_markdown,
    agreement_readme_block,
)
from slmbench.report.readme import checked_entry, write_entry
from slmbench.study.export import export_study, stored_trials
from slmbench.study.provenance import versions
from slmbench.study.run import Unread, block_matrix, unread
from slmbench.study.spec import (
    AgreementBlock,
    Study,
    assets_dir,
    part_a_experiment,
)

__all__ = [
    "CONVERSATION",
    "TEMPLATES_NAME",
    "agreement_block",
    "agreement_facts",
    "render_templates",
    "write_agreement_file",
    "write_agreement_page",
]

TEMPLATES_NAME = "templates.json"
FACTS_NAME = "agreement.json"
#: the fixed conversation whose rendered prompt each runtime shows first
CONVERSATION = [Message(role="system", content="You are a careful assistant."),
                Message(role="user", content="Is the USB-C Dock in stock? Answer yes or no.")]
_TEMPLATES = TypeAdapter(list[TemplateShown])


def _block(study: Study) -> AgreementBlock:
    if study.agreement is None:
        raise ConfigError(f"study {study.name!r} has no [agreement] table",
                          "slmbench agree SPEC SPEC ... makes one")
    return study.agreement


def render_templates(study: Study) -> list[TemplateShown]:
    """The prompt each runtime makes of :data:`CONVERSATION` (its model loaded, then closed);
    a runtime that cannot say (``openai:``, ``ollama:``) shows none, with why. Written to
    ``templates.json`` beside the page."""
    shown = []
    for spec in _block(study).specs:
        model = load_model(spec)
        try:
            shown.append(TemplateShown(label=spec, text=model.render_prompt(CONVERSATION))
                         if isinstance(model, PromptRenderer) else
                         TemplateShown(label=spec, text=None,
                                       note="the backend does not expose its prompt"))
        finally:
            model.close()
    assets = assets_dir(study)
    assets.mkdir(parents=True, exist_ok=True)
    (assets / TEMPLATES_NAME).write_bytes(_TEMPLATES.dump_json(shown, indent=1) + b"\n")
    return shown


def _stored_templates(study: Study) -> list[TemplateShown]:
    path = assets_dir(study) / TEMPLATES_NAME
    if not study.readings_path.is_file():
        return [TemplateShown(label=s, text=None, note="not rendered yet (run the study)")
                for s in _block(study).specs]
    return _TEMPLATES.validate_json(path.read_bytes())


def _complete_trials(study: Study) -> dict[str, list[Trial]]:
    """The stored trials of each spec whose every planned trial is stored: a runtime with
    part of its grid run is not compared yet (a comparison over the tasks that happened to
    run first would be over another sample than the next sitting's)."""
    plan = plan_of(part_a_experiment(study, 0))
    out: dict[str, list[Trial]] = defaultdict(list)
    for t in stored_trials(study):
        out[t.model].append(t)
    return {spec: ts for spec, ts in out.items()
            if {p.key for p in plan.for_model(spec)} <= {t.key for t in ts}}


def _part_a(block: AgreementBlock, trials: dict[str, list[Trial]]
            ) -> tuple[list[part_a.RuntimePair], list[part_a.RuntimePair], list[FloorA]]:
    if not all(trials.get(s) for s in block.specs):
        return [], [], []
    cross = part_a.compare_runtimes({s: trials[s] for s in block.specs}, margin=block.margin)
    floors = [pair for spec, floor, _ in block.floor_pairs() if trials.get(floor)
              for pair in part_a.compare_runtimes({spec: trials[spec], floor: trials[floor]},
                                                  margin=block.margin)]
    stated = part_a.holm_equivalence([*cross, *floors])  # the page's TOSTs: one family
    cross, floors = stated[:len(cross)], stated[len(cross):]
    beyond = [FloorA(cross=(c.a, c.b), floor=(f.a, f.b), comparison=part_a.against_floor(c, f))
              for f in floors for c in cross if f.a in (c.a, c.b)]
    return cross, floors, beyond


def _matrices(study: Study) -> dict[str, MatrixRun]:
    """One matrix per spec of the Part B block, from the stored readings alone (empty when
    a spec's readings are not all stored)."""
    if not study.readings_path.is_file():
        return {}
    b = study.part_b[0]
    out = {}
    with study.readings() as store:
        for spec in b.models:
            try:
                out[spec] = block_matrix(study, b, [spec], store, unread)
            except Unread:  # a reading is not stored yet: the spec is not compared
                continue
    return out


def _part_b(block: AgreementBlock, runs: dict[str, MatrixRun]
            ) -> tuple[list[part_b.ReadingAgreement], list[part_b.ReadingAgreement],
                       list[FloorB]]:
    if not all(s in runs for s in block.specs):
        return [], [], []
    cross = part_b.readings_agreement({s: runs[s] for s in block.specs})
    floors = [row for spec, floor, _ in block.floor_pairs() if floor in runs
              for row in part_b.readings_agreement({spec: runs[spec], floor: runs[floor]})]
    beyond = [FloorB(task=c.task, prompt_id=c.prompt_id, cross=(c.a, c.b), floor=(f.a, f.b),
                     test=part_b.against_floor(c, f, runs[f.a].items[c.task]))
              for f in floors for c in cross
              if f.a in (c.a, c.b) and (f.task, f.prompt_id) == (c.task, c.prompt_id)]
    return cross, floors, beyond


def agreement_facts(study: Study, *, command: str) -> AgreementFacts:
    """Everything the page shows, from the study's stores and ``templates.json`` alone (no
    model is loaded). A runtime whose trials or readings are not all stored yet leaves its
    part empty, and a note says so."""
    block, made_by = _block(study), versions()
    cross_a, floor_a, beyond_a = _part_a(block, _complete_trials(study))
    cross_b, floor_b, beyond_b = _part_b(block, _matrices(study))
    notes = [f"{what} not shown: not every runtime's {unit} is stored yet (run the study)"
             for what, unit, rows in (("Part A", "trials", cross_a),
                                      ("Part B", "readings", cross_b)) if not rows]
    return AgreementFacts(
        title=f"Backend agreement: {study.name}", command=command,
        created=datetime.now(UTC).isoformat(timespec="seconds"), commit=made_by.get("commit"),
        specs=block.specs, floor=[why for _, _, why in block.floor_pairs()],
        margin=block.margin, suite=", ".join(block.suites), conversation=CONVERSATION,
        templates=_stored_templates(study), part_a=cross_a, part_a_floor=floor_a,
        part_a_beyond=beyond_a, part_b=cross_b, part_b_floor=floor_b, part_b_beyond=beyond_b,
        notes=[*notes, "made with " + ", ".join(f"{k} {v}" for k, v in made_by.items()
                                                if k != "commit")])


def write_agreement_page(study: Study, *, command: str, readme: Path | None = None) -> Path:
    """Write the study's page, its facts beside it (``<page stem>/agreement.json``) and the
    exports a fresh clone regenerates it from (``trials.jsonl.gz``, ``readings.jsonl.gz``).

    With ``readme``, also replace the study's entry in that file (between the lines of
    :func:`~slmbench.report.study_page.readme_markers`); ConfigError, before anything is
    written, if it lacks them."""
    if study.page is None:
        raise ConfigError(f"study {study.name!r} names no page", "give it a `page`")
    text = "" if readme is None else checked_entry(readme, study.page)
    facts = agreement_facts(study, command=command)
    assets = assets_dir(study)
    assets.mkdir(parents=True, exist_ok=True)
    export_study(study, assets)
    (assets / FACTS_NAME).write_text(facts.model_dump_json(indent=1) + "\n", encoding="utf-8")
    study.page.parent.mkdir(parents=True, exist_ok=True)
    study.page.write_text(agreement_markdown(facts), encoding="utf-8")
    if readme is not None:
        write_entry(readme, text, study.page, command,
                    lambda where, again: agreement_readme_block(facts, page=where, command=again))
    return study.page


def agreement_block(**fields: object) -> AgreementBlock:
    """The ``[agreement]`` table of ``slmbench agree``'s options; ConfigError (one line, the
    field and what is wrong) for a bad one, e.g. a single runtime."""
    try:
        return AgreementBlock.model_validate(fields)
    except ValidationError as exc:
        raise ConfigError(f"slmbench agree: {first_error(exc)}",
                          "pass two or more specs of one model, e.g. llamacpp:NAME "
                          "llamaserver:NAME 'hf:NAME?dtype=fp32'") from None


def _toml(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    return json.dumps(value)  # a TOML basic string or number


def write_agreement_file(path: Path, *, name: str, out: Path, page: Path,
                         block: AgreementBlock) -> Path:
    """Write the study file of ``slmbench agree`` (``slmbench study PATH`` runs it again).
    An existing file is kept when it says the same, else ConfigError: another agreement study
    is there."""
    fields = {k: v for k, v in block.model_dump(mode="json").items() if v is not None}
    text = "\n".join([f"# written by slmbench agree; run again with: slmbench study {path}",
                      f"name = {_toml(name)}", f"out = {_toml(str(out))}",
                      f"page = {_toml(str(page))}", "", "[agreement]",
                      *(f"{k} = {_toml(v)}" for k, v in fields.items())]) + "\n"
    if path.is_file() and path.read_text(encoding="utf-8") != text:
        raise ConfigError(f"{path} holds another study",
                          "pass another --file, or delete it to start this one")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path
