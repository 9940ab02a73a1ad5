"""``--plan``'s power: the minimum detectable difference between each Part A block's models,
at its design (families, instances, trials an instance) and the variance components of the
trials stored so far (``agents.power``), or its stated defaults until there are some."""

from __future__ import annotations

from collections import Counter

from pydantic import BaseModel, ConfigDict

from slmbench.agents import power
from slmbench.agents.loading import load_trials
from slmbench.agents.records import Trial
from slmbench.agents.runner.plan import plan_of
from slmbench.agents.store import DB_NAME, read_trials
from slmbench.core.stats import VarianceComponents
from slmbench.study.carry import IMPORT_HINT
from slmbench.study.spec import TRIALS_EXPORT, Study, assets_dir, part_a_experiment


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


def stored_trials(study: Study) -> list[Trial]:
    """Every trial of the study's Part A stores and of the export beside its page."""
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


def size_power(study: Study) -> list[BlockPower]:
    """:class:`BlockPower` of every Part A block: a block of several models compares its
    models (paired on task, instance, temperature and repeat); a block of one model at several
    temperatures compares its temperatures (paired on task, instance and repeat), sized by
    temperature pairs; one model at one temperature compares nothing."""
    stored = stored_trials(study)
    sizes: dict[bool, tuple[VarianceComponents, str]] = {}  # by_temperature -> components
    rows = []
    for block, exp in enumerate(study.part_a):
        by_temperature = len(exp.models) < 2 and len(set(exp.temperatures)) > 1
        cells = [p.key for p in plan_of(part_a_experiment(study, block, exp.models[:1])).trials
                 if p.suite == power.SUITE and p.key.variant == power.VARIANT]
        per_instance = Counter((k.task, k.instance) + ((k.temperature,) if by_temperature
                                                       else ()) for k in cells)
        per_family = Counter(task for task, _ in {k[:2] for k in per_instance})
        families = len(per_family)
        instances = min(per_family.values(), default=0)
        trials = min(per_instance.values(), default=0)
        note = ("one model at one temperature: nothing to compare"
                if len(exp.models) < 2 and not by_temperature else
                "fewer than 2 capability families: nothing to test across" if families < 2
                else "")
        if by_temperature not in sizes:  # each kind of comparison sized once, and only if asked
            sizes[by_temperature] = components_of(stored, temperatures=by_temperature)
        components, source = sizes[by_temperature]
        mdd = None if note else power.planned(components, families, instances, trials)
        rows.append(BlockPower(block=f"A{block + 1}", models=len(exp.models),
                               compares="temperatures" if by_temperature else "models",
                               families=families, instances=instances, trials=trials,
                               mdd=mdd, source=source, note=note))
    return rows
