"""The README's results entries, generated from the reports committed beside the pages, so that
no number in the README is typed by hand.

An entry sits between two marker lines naming its source, a report JSON under ``docs/results``:

.. code-block:: markdown

    <!-- result:docs/results/cascade-ranking-qwen2.5-coder-0.5b/cascade.json -->
    ...generated...
    <!-- /result:docs/results/cascade-ranking-qwen2.5-coder-0.5b/cascade.json -->

:func:`refresh_results` rewrites every such entry from its source (``slmbench readme``). The
kind of report is told by its file name: ``eligibility.json`` (with the ``routes.json`` beside
it), ``cascade.json`` or ``probe.json``. An entry links the page made from the same report
(``<stem>.md`` beside it, else ``<folder>.md``) and takes its title from the page's heading.
Every sentence comes from a page module's own reading of the report: nothing is recomputed.
(A study's entry, between ``<!-- study:... -->`` markers, is written from its stores by
``slmbench study FILE --page-only --readme README.md``.)
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from pydantic import ValidationError

from slmbench.core.errors import ConfigError
from slmbench.core.paths import shown_path
from slmbench.microtasks.diagnostics.cascade import CascadeReport
from slmbench.microtasks.diagnostics.probes import ProbeReport
from slmbench.microtasks.diagnostics.routes import Route, RoutingTable
from slmbench.microtasks.eligibility import deciding_metrics
from slmbench.microtasks.recommend import load_matrices
from slmbench.report.cascade_page import cascade_findings
from slmbench.report.eligibility_page import verdict_counts
from slmbench.report.partb import unread_undecided, verdict_text
from slmbench.report.study_facts import short
from slmbench.report.study_page import readme_markers, relative

__all__ = ["RESULT_MARKER", "checked_entry", "refresh_results", "result_block", "with_block",
           "write_entry"]

#: the first line of a generated entry; its source path is the group
RESULT_MARKER = re.compile(r"^<!-- result:(\S+) -->$", re.MULTILINE)
_HINT = ("a result entry's marker names a report JSON committed beside its page, e.g. "
         "<!-- result:docs/results/NAME/cascade.json -->")


def with_block(text: str, block: str) -> str | None:
    """``text`` with the part between ``block``'s first and last line (its markers, included)
    replaced by ``block``; None if ``text`` lacks either marker."""
    lines = block.splitlines()
    head, begin, rest = text.partition(lines[0])
    _, end, tail = rest.partition(lines[-1])
    if not begin or not end:
        return None
    return head + block + tail


def checked_entry(readme: Path, page: Path) -> str:
    """``readme``'s text, which must hold the entry markers of the study page ``page``
    (:func:`~slmbench.report.study_page.readme_markers`); ConfigError where it lacks them, so
    a caller checks before it writes anything."""
    begin, end = readme_markers(page.name)
    text = readme.read_text(encoding="utf-8") if readme.is_file() else ""
    if with_block(text, f"{begin}\n{end}") is None:
        raise ConfigError(f"{shown_path(readme)} has no {begin} ... {end} lines around the "
                          "study's entry", "put the two lines where the entry goes, once")
    return text


def write_entry(readme: Path, text: str, page: Path, command: str,
                entry: Callable[[str, str], str]) -> None:
    """Replace ``page``'s entry in ``readme`` (its ``text``, from :func:`checked_entry`) by
    ``entry(the page's path from the README, the command that writes the entry again)``."""
    again = f"{command} --page-only --readme {shown_path(readme, published=True)}"
    block = entry(relative(page, readme.parent), again)
    readme.write_text(with_block(text, block) or text, encoding="utf-8")


def _route(r: Route) -> str:
    if r.deploy == "baseline":
        return f"{r.task}: the baseline ({r.baseline})"
    what = f"{short(r.model or '')} {r.prompt_id} {r.reading}"
    return f"{r.task}: {'the model' if r.deploy == 'model' else 'the cascade'} ({what})"


def _eligibility(source: Path) -> list[str]:
    runs, _ = load_matrices(source)
    cells = [c for r in runs for c in r.cells]
    deciding = deciding_metrics(cells)
    unread = sum(unread_undecided(c, deciding[c.task] == c.metric) for c in cells)
    lines = ["Eligible: the 95% lower bound above τ (the best non-LLM or constant reference on "
             "the same items) and the paired interval of model − τ-reference above 0; a "
             "constant cell (one answer to ≥ 95% of items) never is. Per model, on each "
             "task's deciding metric (both readings):"]
    for v in verdict_counts(cells, deciding):
        lines.append(f"{short(v.model)}: {v.cells} cells, {v.eligible} eligible, "
                     f"{v.ineligible} ineligible, {v.undecided} undecided, {v.constant} "
                     f"constant; {v.read:,} of {v.split:,} items of the splits read.")
    lines.append(f"Cells undecided while unread items remain: {unread}.")
    routes = source.parent / "routes.json"
    if routes.is_file():
        table = RoutingTable.load(routes)
        lines.append("What to deploy: " + "; ".join(_route(r) for r in table.routes) + ".")
    return lines


def _cascade(source: Path) -> list[str]:
    report = CascadeReport.model_validate_json(source.read_text(encoding="utf-8"))
    return [x.removeprefix("- ") for x in cascade_findings(report)]


def _probe(source: Path) -> list[str]:
    report = ProbeReport.model_validate_json(source.read_text(encoding="utf-8"))
    lines = [f"{report.limit or 'All'} eval items per point; each point is an eligibility "
             "cell against τ, constant answers included."]
    keys = dict.fromkeys((p.cell.task, p.cell.model, p.cell.metric) for p in report.points)
    for task, model, metric in keys:
        points = [p for p in report.points
                  if (p.cell.task, p.cell.model, p.cell.metric) == (task, model, metric)]
        lines.append(f"{task}, {short(model)}, {metric}: " + "; ".join(
            f"{p.n_turns} turns {verdict_text(p.cell)}" for p in points) + ".")
    return lines


_KINDS: dict[str, Callable[[Path], list[str]]] = {
    "eligibility.json": _eligibility, "cascade.json": _cascade, "probe.json": _probe}


def _page(source: Path) -> Path:
    """The page made from the same report: ``<stem>.md`` beside it, else ``<folder>.md``."""
    for page in (source.with_suffix(".md"), source.parent.with_suffix(".md")):
        if page.is_file():
            return page
    raise ConfigError(f"no page beside {source} ({source.with_suffix('.md').name} or "
                      f"{source.parent.with_suffix('.md').name})", _HINT)


def result_block(shown: str, base: Path, *, command: str) -> str:
    """The entry of the report at ``shown`` (relative to ``base``, the README's folder), with
    its markers; ``command`` is the one that writes it again."""
    source = base / shown
    kind = _KINDS.get(source.name)
    if kind is None:
        raise ConfigError(f"{shown}: no README entry is made from a {source.name}",
                          f"name one of {', '.join(_KINDS)}")
    if not source.is_file():
        raise ConfigError(f"{shown} does not exist", _HINT)
    page = _page(source)
    title = next((x[2:] for x in page.read_text(encoding="utf-8").splitlines()
                  if x.startswith("# ")), page.stem)
    try:
        lines = kind(source)
    except (ValidationError, ValueError) as exc:
        raise ConfigError(f"{shown} is not a {source.name} report: {exc}".splitlines()[0],
                          _HINT) from None
    link = page.relative_to(base).as_posix()
    return "\n".join([
        f"<!-- result:{shown} -->",
        f"- **{title}** ([`{link}`]({link}); this entry is generated from `{shown}` by "
        f"`{command}`, do not edit between the markers):",
        *(f"  - {x}" for x in lines),
        f"<!-- /result:{shown} -->"])


def refresh_results(text: str, base: Path, *, command: str) -> tuple[str, list[str]]:
    """``text`` (a README in ``base``) with every result entry written again from its report;
    and the reports it read. ConfigError, before anything changes, for an entry without its
    closing marker or a report that is missing or malformed."""
    sources = list(dict.fromkeys(RESULT_MARKER.findall(text)))
    for shown in sources:
        if f"<!-- /result:{shown} -->" not in text:
            raise ConfigError(f"the entry of {shown} has no closing <!-- /result:{shown} --> "
                              "line", _HINT)
    for shown in sources:
        text = with_block(text, result_block(shown, base, command=command)) or text
    return text, sources


def refresh_readme(path: Path, *, command: str) -> tuple[bool, list[str]]:
    """Write every result entry of the README at ``path`` again (:func:`refresh_results`),
    the file only when something changed; whether it did, and the reports read. ConfigError
    when ``path`` is not a file (nothing is written then, or on any other error)."""
    if not path.is_file():
        raise ConfigError(f"{path} does not exist", "pass the README, e.g. README.md")
    text = path.read_text(encoding="utf-8")
    new, sources = refresh_results(text, path.parent, command=command)
    if new != text:
        path.write_text(new, encoding="utf-8")
    return new != text, sources
