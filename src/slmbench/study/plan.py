"""A study's ``--plan``: each block's remaining work in model hours, at the rates measured in the
stores (:func:`size_plan`), and each Part A block's power: the minimum detectable difference
between its models (or temperatures) at its design and the variance components of the trials
stored so far, or the stated defaults until there are some (:func:`size_power`; the arithmetic
is :mod:`slmbench.agents.power`'s)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from pydantic import (
    BaseModel,
    ConfigDict,
)

from slmbench.agents import power
from slmbench.agents.humaneval import VARIANT
from slmbench.agents.loading import load_trials
from slmbench.agents.records import Trial, TrialKey
from slmbench.agents.runner.config import Experiment
from slmbench.agents.runner.plan import plan_of
from slmbench.agents.store import DB_NAME, RunStore, read_trials
from slmbench.agents.tasks.families.levels import level_number
from slmbench.core.jsonl import read_jsonl_gz
from slmbench.core.stats import VarianceComponents
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
    stored: dict[str, dict[tuple[str, ...], float]] = {}  # model -> reading key -> seconds
    settled: set[tuple[int, str]] = set()  # (sequential block, model) with every cell decided
    if study.readings_path.is_file():
        with study.readings() as store:
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


class BlockPower(BaseModel):
    """One Part A block's paired comparison: its design, per model, on the capability
    suite's base variant, and the MDD in points (None: no comparison; ``note`` says why)."""

    model_config = ConfigDict(frozen=True)

    block: str
    models: int
    compares: str = "models"  # or "temperatures": one model's, paired on task and repeat
    families: int
    instances: int  # the fewest a family has
    trials: int  # the fewest an instance has (temperatures × repeats)
    mdd: float | None
    source: str  # where the variance components come from
    note: str = ""


def trials_and_export(study: Study) -> list[Trial]:
    """Every trial of the study's Part A stores and of the export beside its page (what the
    power is sized with)."""
    out = [t for b in range(len(study.part_a)) if (study.part_a_dir(b) / DB_NAME).is_file()
           for t in load_trials(study.part_a_dir(b))]
    if study.page is not None and (dump := assets_dir(study) / TRIALS_EXPORT).is_file():
        out += read_trials(dump, IMPORT_HINT)
    return out


def components_of(trials: list[Trial], temperatures: bool = False
                  ) -> tuple[VarianceComponents, str]:
    """The components a design is sized with, and where they come from: the most variable
    pair of ``trials`` (its family term split by the instance share they measure, if any),
    else :data:`agents.power.DEFAULT_COMPONENTS`; ``temperatures``: of one model's
    temperatures, else :data:`agents.power.DEFAULT_TEMPERATURE_COMPONENTS`."""
    pair = power.most_variable_pair(trials, temperatures)
    if pair is None:
        if temperatures:
            return (power.DEFAULT_TEMPERATURE_COMPONENTS,
                    f"defaults: {power.DEFAULT_TEMPERATURE_SOURCE}")
        return power.DEFAULT_COMPONENTS, f"defaults: {power.DEFAULT_SOURCE}"
    source = f"this study's stored trials, {pair.a} − {pair.b} ({pair.pairs} pairs)"
    share = power.instance_share(trials)
    if share is not None and pair.components.instance is None:
        source += f"; family term split {share[0]:.0%} to instances as {share[1]}'s"
    return power.sizing(pair, share), source


def _design(block: str, exp: Experiment, keys: list[TrialKey], by_temperature: bool,
            sized: tuple[VarianceComponents, str]) -> BlockPower:
    """One design's row: ``keys`` (one model's capability cells, base variant) counted per
    family, instance (and temperature) and the MDD of a paired comparison over them."""
    per_instance = Counter((k.task, k.instance) + ((k.temperature,) if by_temperature else ())
                           for k in keys)
    per_family = Counter(task for task, _ in {k[:2] for k in per_instance})
    families = len(per_family)
    instances = min(per_family.values(), default=0)
    trials = min(per_instance.values(), default=0)
    note = ("one model at one temperature: nothing to compare"
            if len(exp.models) < 2 and not by_temperature else
            "fewer than 2 capability families: nothing to test across" if families < 2
            else "")
    components, source = sized
    mdd = None if note else power.planned(components, families, instances, trials)
    return BlockPower(block=block, models=len(exp.models),
                      compares="temperatures" if by_temperature else "models",
                      families=families, instances=instances, trials=trials, mdd=mdd,
                      source=source, note=note)


def size_power(study: Study) -> list[BlockPower]:
    """:class:`BlockPower` of every Part A block: a block of several models compares its
    models (paired on task, instance, temperature and repeat); a block of one model at several
    temperatures compares its temperatures (paired on task, instance and repeat), sized by
    temperature pairs; one model at one temperature compares nothing. A block that runs the
    difficulty ladder's levels has a row per level too (``A1 level 2``: the families that
    have the level, a base instance counted at its family's base level), sized with the same
    components."""
    stored = trials_and_export(study)
    sizes: dict[bool, tuple[VarianceComponents, str]] = {}  # by_temperature -> components
    rows = []
    for block, exp in enumerate(study.part_a):
        by_temperature = len(exp.models) < 2 and len(set(exp.temperatures)) > 1
        cells = [p.key for p in plan_of(part_a_experiment(study, block, exp.models[:1])).trials
                 if p.suite == power.SUITE and p.key.variant == power.VARIANT]
        if by_temperature not in sizes:  # each kind of comparison sized once, and only if asked
            sizes[by_temperature] = components_of(stored, temperatures=by_temperature)
        rows.append(_design(f"A{block + 1}", exp, [k for k in cells if k.level == "base"],
                            by_temperature, sizes[by_temperature]))
        for n in exp.levels:
            at = [k for k in cells if level_number(k.task, k.level) == n]
            rows.append(_design(f"A{block + 1} level {n}", exp, at, by_temperature,
                                sizes[by_temperature]))
    return rows
