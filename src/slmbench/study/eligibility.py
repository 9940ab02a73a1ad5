"""The eligibility page of a readings store (``slmbench eligibility --page``), rebuilt from
the stored readings alone."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from slmbench.core.errors import ConfigError
from slmbench.microtasks import tasks as micro_tasks
from slmbench.microtasks.recommend import recommend
from slmbench.microtasks.store import ReadingStore
from slmbench.microtasks.stored import stored_keys, stored_matrices
from slmbench.report.eligibility_page import render_eligibility_page
from slmbench.study.spec import MATRIX_NAME


def write_eligibility_page(store_path: Path, page: Path, *, command: str,
                           models: list[str] | None = None,
                           tasks: list[micro_tasks.MicroTask] | None = None,
                           prompts: list[str] | None = None, limit: int | None = None,
                           seed: int = 0, sequential: bool = True,
                           read_with: list[str] | None = None,
                           title: str = "Eligibility read until decided") -> Path:
    """Rebuild every stored block's matrix from ``store_path`` (no model is loaded), run
    ``recommend`` on them, and write ``page`` plus ``<page stem>/eligibility.json`` (cells,
    no readings) and ``<page stem>/routes.json`` (loads into ``Cascade``). ``models``,
    ``tasks``, ``prompts``: default, everything the store holds."""

    if not store_path.is_file():
        raise ConfigError(f"readings store {store_path} does not exist",
                          "pass the --store of an `slmbench eligibility` run")
    with ReadingStore(store_path) as store:
        keys = stored_keys(store)
        got = stored_matrices(
            store, models or list(dict.fromkeys(k[0] for k in keys)),
            tasks or [micro_tasks.get(t) for t in micro_tasks.names()
                      if t in {k[1] for k in keys}],
            prompts or sorted({k[2] for k in keys}), limit=limit, seed=seed,
            sequential=sequential, command=command)
        rec = (recommend(got.runs, store=store, command=command)
               if any(r.cells for r in got.runs) else None)
    assets = page.parent / page.stem
    assets.mkdir(parents=True, exist_ok=True)
    (assets / MATRIX_NAME).write_text(
        "[\n" + ",\n".join(r.model_copy(update={"readings": []}).model_dump_json(indent=1)
                           for r in got.runs) + "\n]\n", encoding="utf-8")
    if rec is not None:
        (assets / "routes.json").write_text(rec.routes().model_dump_json(indent=1),
                                            encoding="utf-8")
    page.write_text(render_eligibility_page(
        title=title, command=command, created=datetime.now(UTC).isoformat(timespec="seconds"),
        store=str(store_path), read_with=read_with or [], runs=got.runs,
        incomplete=got.incomplete, rec=rec), encoding="utf-8")
    return page
