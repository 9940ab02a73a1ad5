"""``--plan``: each block's remaining work in model hours, at the rates measured in the stores."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from pydantic import (
    BaseModel,
    ConfigDict,
)

from slmbench.agents.humaneval import VARIANT
from slmbench.agents.records import TrialKey
from slmbench.agents.runner.plan import plan_of
from slmbench.agents.store import DB_NAME, RunStore
from slmbench.core.jsonl import read_jsonl_gz
from slmbench.microtasks.store import ReadingStore
from slmbench.study.carry import IMPORT_HINT
from slmbench.study.run import (
    decided,
    shortlist_keys,
)
from slmbench.study.spec import (
    READINGS_EXPORT,
    READINGS_NAME,
    TRIALS_EXPORT,
    Study,
    assets_dir,
    part_a_experiment,
    planned_items,
)


class PlanRow(BaseModel):
    """One model of one block: what the study plans, what is stored, and the model time the
    rest should take at the rate measured for it."""

    model_config = ConfigDict(frozen=True)

    block: str  # A1, B2, ...
    model: str
    unit: str  # "trial" | "reading"
    planned: int
    stored: int
    at_most: bool = False  # a sequential Part B block: ``planned`` is an upper bound
    seconds_per: float | None = None  # None: no rate measured for this model
    measured_n: int = 0  # trials or readings the rate is the mean of
    rate_from: str = ""  # the spec the rate was measured on, when not this one
    spent_s: float = 0.0  # model time of the stored trials (readings) this row plans
    settled: bool = False  # a sequential block's model whose every cell is decided: none left

    @property
    def remaining(self) -> int:
        return 0 if self.settled else max(self.planned - self.stored, 0)

    @property
    def hours(self) -> float | None:
        return None if self.seconds_per is None else self.remaining * self.seconds_per / 3600


def _base(spec: str) -> str:
    return spec.split("?", 1)[0]


class _Rates:
    """Mean model seconds per trial and per reading, by model spec, over every store found.

    A record met twice (in a store and in the export of that store) counts once: it is the
    same (identity, seconds) pair."""

    def __init__(self) -> None:
        self.seen: dict[tuple[str, str], dict[tuple[tuple[object, ...], float], None]] = {}

    def add(self, unit: str, spec: str, identity: tuple[object, ...], seconds: float) -> None:
        self.seen.setdefault((unit, spec), {})[(identity, seconds)] = None

    @property
    def sums(self) -> dict[tuple[str, str], list[float]]:
        return {k: [seconds for _, seconds in v] for k, v in self.seen.items()}

    def of(self, unit: str, spec: str) -> tuple[float | None, int, str]:
        """(seconds per unit, n, the spec it was measured on if another one)."""
        if got := self.sums.get((unit, spec)):
            return sum(got) / len(got), len(got), ""
        near = [(s, v) for (u, s), v in self.sums.items() if u == unit and _base(s) == _base(spec)]
        if near:
            s, v = max(near, key=lambda e: len(e[1]))
            return sum(v) / len(v), len(v), s
        return None, 0, ""


OWN_RATE_MIN = 10  # records of the study's own stores that size a model without older runs


def _seconds(record: object, field: str) -> float:
    """``record[field]``, a record's model seconds (0 when it has none)."""
    value = record.get(field) if isinstance(record, dict) else None
    return float(value) if isinstance(value, int | float) else 0.0


def _measure(folders: list[Path]) -> _Rates:
    """The rates of every run store, readings store and page export (``trials.jsonl.gz``,
    ``readings.jsonl.gz``: the stores of a committed page) found under ``folders``."""
    rates = _Rates()

    def trial(model: str, variant: str, record: dict[str, object]) -> None:
        if variant != VARIANT and (s := _seconds(record, "wall_s")):
            rates.add("trial", model, (*(record.get(k) for k in (
                "task_id", "variant", "toolset", "temperature", "repeat")),
                record.get("instance") or 0), s)  # a record from before instances: 0

    def reading(row: dict[str, object]) -> None:
        if s := _seconds(row["raw"], "seconds"):
            rates.add("reading", str(row["model"]),
                      (row["task"], row["prompt_id"], row["item_id"]), s)

    for folder in folders:
        for db in sorted(folder.glob(f"**/{DB_NAME}")):
            with RunStore(db.parent) as store:
                for t in store.trials():
                    trial(t.key.model, t.key.variant, t.record)
        for db in sorted(folder.glob(f"**/{READINGS_NAME}")):
            with ReadingStore(db) as readings:
                for r in readings.rows():
                    reading(r)
        for dump in sorted(folder.glob(f"**/{TRIALS_EXPORT}")):
            for row in read_jsonl_gz(dump, IMPORT_HINT):
                trial(str(row["model"]), str(row.get("variant", "base")), row)
        for dump in sorted(folder.glob(f"**/{READINGS_EXPORT}")):
            for row in read_jsonl_gz(dump, IMPORT_HINT):
                reading(row)
    return rates


class _PlanRates:
    """The rate of a model as measured in the study's own stores once they hold at least
    :data:`OWN_RATE_MIN` of its records (this harness, this machine), else pooled with the
    exports beside its page and the ``--rates`` folders (older runs, maybe another harness)."""

    def __init__(self, own: _Rates, pooled: _Rates) -> None:
        self.own, self.pooled = own, pooled

    def of(self, unit: str, spec: str) -> tuple[float | None, int, str]:
        got = self.own.of(unit, spec)
        return got if got[1] >= OWN_RATE_MIN else self.pooled.of(unit, spec)


def size_plan(study: Study, rate_folders: Sequence[Path] = ()) -> list[PlanRow]:
    """Every block's models with planned and stored trials (readings), the model time the stored
    ones took, and the hours the rest should take, at the mean rate measured in this study's
    stores (alone, once they hold :data:`OWN_RATE_MIN` records of the model), else pooled with
    the exports beside its page and ``rate_folders`` (run directories, study ``out`` folders or
    a page's exports folder of earlier runs on this machine)."""
    beside = [assets_dir(study)] if study.page is not None else []
    own = _measure([study.out])
    pooled = _measure([*beside, *rate_folders])
    for key, seen in own.seen.items():  # each store read once; a record met twice counts once
        pooled.seen.setdefault(key, {}).update(seen)
    rates = _PlanRates(own, pooled)
    rows = []
    for block, exp in enumerate(study.part_a):
        walls: dict[TrialKey, float] = {}  # stored trial key -> its model seconds
        if (study.part_a_dir(block) / DB_NAME).is_file():
            with RunStore(study.part_a_dir(block)) as store:
                walls = {t.key: float(t.record.get("wall_s") or 0.0) for t in store.trials()}
        for m in exp.models:
            keys = {p.key for p in plan_of(part_a_experiment(study, block, [m])).trials}
            per, n, src = rates.of("trial", m)
            done = keys & walls.keys()
            rows.append(PlanRow(block=f"A{block + 1}", model=m, unit="trial", planned=len(keys),
                                stored=len(done), seconds_per=per, measured_n=n,
                                rate_from=src, spent_s=sum(walls[k] for k in done)))
    path = study.part_b_dir / READINGS_NAME
    stored: dict[str, dict[tuple[str, ...], float]] = {}  # model -> reading key -> seconds
    settled: set[tuple[int, str]] = set()  # (sequential block, model) with every cell decided
    if path.is_file():
        with ReadingStore(path) as store:
            for r in store.rows():
                stored.setdefault(r["model"], {})[(r["task"], r["prompt_id"], r["item_id"])] = (
                    float(r["raw"].get("seconds") or 0.0))
            settled = {(block, m) for block, b in enumerate(study.part_b) if b.sequential
                       for m in b.models if m in stored and decided(study, b, m, store)}
    for block, b in enumerate(study.part_b):
        items = planned_items(b)
        want = {(t, p, i.id) for t, its in items.items() for p in b.prompts for i in its}
        for m in b.models:
            per, n, src = rates.of("reading", m)
            mine = stored.get(m, {})
            done = want & mine.keys()
            rows.append(PlanRow(block=f"B{block + 1}", model=m, unit="reading",
                                planned=len(want), stored=len(done), at_most=b.sequential,
                                seconds_per=per, measured_n=n, rate_from=src,
                                spent_s=sum(mine[k] for k in done),
                                settled=(block, m) in settled))
    for block, c in enumerate(study.cascade):
        keys = set(shortlist_keys(c))
        per, n, src = rates.of("reading", c.model)
        mine = stored.get(c.model, {})
        done = keys & mine.keys()
        rows.append(PlanRow(block=f"C{block + 1}", model=c.model, unit="reading",
                            planned=len(keys), stored=len(done), seconds_per=per,
                            measured_n=n, rate_from=src, spent_s=sum(mine[k] for k in done)))
    return rows
