"""How small a difference between two models a Part A design can detect (issue #39).

The unit that repeats is the family (a task id): its instances (worlds) and trials (repeats,
temperatures) are nested in it. A paired comparison of two models averages ``passed(a) −
passed(b)`` per family and tests across families (``stats.task_paired``), so its minimum
detectable difference depends on how that per-trial difference varies between families,
between instances of one family and between trials of one instance:
:func:`difference_components` estimates the three from stored trials
(``stats.variance_components``), :func:`planned` gives the MDD of a design
(``stats.planned_mdd``), :func:`power_table` a grid of designs.

A comparison of one model at two temperatures is sized the same way, its arms paired on
(task, instance, repeat) (``most_variable_pair(..., temperatures=True)``).

Which trials count: the capability suite's base variant (the comparison every block makes),
paired on (task, instance, temperature, repeat); a pair where either side is not the model's
(``backend_error``, ``environment_error``) is dropped. Of several model pairs, the one whose
single cell varies most (:func:`most_variable_pair`) sizes the design: the MDD is then one
that every measured pair would meet.

When the stored pairs have one instance per family, the instance term is inside the family
term and more instances do not help. :func:`split_by_instances` moves a share of it to the
instance term: the share measured on one model's successes over several instances
(:func:`instance_share`). That is an assumption (the difference of two models splits as one
model's successes do), stated wherever it is used.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from itertools import combinations

from pydantic import BaseModel, ConfigDict

from slmbench.agents.exclusion import excluded_as
from slmbench.agents.records import Outcome, Trial
from slmbench.core import stats
from slmbench.core.stats import StatsInputError, VarianceComponents

__all__ = [
    "DEFAULT_COMPONENTS",
    "DEFAULT_SOURCE",
    "DEFAULT_TEMPERATURE_COMPONENTS",
    "DEFAULT_TEMPERATURE_SOURCE",
    "FAMILIES",
    "INSTANCES",
    "TRIALS",
    "DesignRow",
    "PairComponents",
    "PowerRow",
    "design_row",
    "difference_components",
    "instance_share",
    "most_variable_pair",
    "planned",
    "power_table",
    "render_designs",
    "render_power_table",
    "sizing",
    "split_by_instances",
]

SUITE, VARIANT = "capability", "base"
FAMILIES = (31, 62, 124)  # today's capability families, twice, four times
INSTANCES = (1, 3, 5, 10)
TRIALS = (1, 3)

Cell = tuple[str, int, float, int]  # (task, instance, temperature, repeat)


def _passed(trials: Iterable[Trial], by_temperature: bool = False
            ) -> dict[str, dict[Cell, bool]]:
    """Each arm's capability base trials that are the model's: cell -> passed. An arm is a
    model; ``by_temperature``: a model at one temperature (``MODEL @ T t``), its cells
    paired on (task, instance, repeat) with the same model's at another temperature."""
    out: dict[str, dict[Cell, bool]] = defaultdict(dict)
    for t in trials:
        if t.suite == SUITE and t.variant == VARIANT and excluded_as(t) is None:
            temperature = round(t.temperature, 4)
            arm = f"{t.model} @ T {temperature:g}" if by_temperature else t.model
            cell = (t.task_id, t.instance, 0.0 if by_temperature else temperature, t.repeat)
            out[arm][cell] = t.outcome == Outcome.SUCCESS
    return out


def _nest(values: dict[Cell, float]) -> list[list[list[float]]]:
    """``values`` as ``[family][instance][trial]`` (sorted, so the same data nest the same)."""
    nested: dict[str, dict[int, list[float]]] = defaultdict(lambda: defaultdict(list))
    for (task, instance, _, _), v in sorted(values.items()):
        nested[task][instance].append(v)
    return [[cells for _, cells in sorted(fam.items())] for _, fam in sorted(nested.items())]


class PairComponents(BaseModel):
    """The variance components of ``passed(a) − passed(b)`` over ``pairs`` paired trials."""

    model_config = ConfigDict(frozen=True)

    a: str
    b: str
    pairs: int
    components: VarianceComponents

    @property
    def cell_sd(self) -> float:
        """The sd of one family's difference on one instance and one trial."""
        return self.components.family_sd(1, 1)


def _difference(ok: dict[str, dict[Cell, bool]], a: str, b: str) -> PairComponents:
    shared = sorted(ok[a].keys() & ok[b].keys())
    diffs = {c: float(ok[a][c]) - float(ok[b][c]) for c in shared}
    return PairComponents(a=a, b=b, pairs=len(diffs),
                          components=stats.variance_components(_nest(diffs)))


def difference_components(trials: Sequence[Trial], a: str, b: str) -> PairComponents:
    """:class:`PairComponents` of models ``a`` and ``b`` on the cells both ran.
    StatsInputError when they share fewer than 2 families or no replicated cell."""
    return _difference(_passed(trials), a, b)


def most_variable_pair(trials: Sequence[Trial], temperatures: bool = False
                       ) -> PairComponents | None:
    """Of every pair of models with enough shared cells, the one whose single cell varies
    most (:attr:`PairComponents.cell_sd`); None when no pair has enough, or none varies (two
    models that never differ in the cells stored say nothing of how far others would).
    ``temperatures``: of every pair of one model's temperatures instead (arms
    ``MODEL @ T t``), what sizes a comparison of temperatures."""
    models = sorted({t.model for t in trials}) if temperatures else [None]
    found = []
    for model in models:  # a temperature pair is one model's: pair within each model's trials
        ok = _passed([t for t in trials if model in (None, t.model)], temperatures)
        for a, b in combinations(sorted(ok), 2):
            try:
                found.append(_difference(ok, a, b))
            except StatsInputError:
                continue
    best = max(found, key=lambda p: (p.cell_sd, p.a, p.b), default=None)
    return best if best is not None and best.cell_sd > 0 else None


def instance_share(trials: Sequence[Trial]) -> tuple[float, str] | None:
    """The share ``instance / (family + instance)`` of one model's successes, from the model
    with the most trials over ≥ 2 instances of some family; and that model. None when no
    model's trials separate the two terms, or both are 0."""
    best: tuple[int, float, str] | None = None
    for model, cells in _passed(trials).items():
        try:
            c = stats.variance_components(_nest({k: float(v) for k, v in cells.items()}))
        except StatsInputError:
            continue
        if c.instance is None or c.family + c.instance == 0:
            continue
        if best is None or len(cells) > best[0]:
            best = (len(cells), c.instance / (c.family + c.instance), model)
    return None if best is None else (best[1], best[2])


def split_by_instances(components: VarianceComponents, share: float) -> VarianceComponents:
    """``components`` with ``share`` of an unseparated family term moved to the instance
    term (components that already separate them are returned as they are)."""
    if components.instance is not None:
        return components
    if not 0 <= share <= 1:
        raise StatsInputError(f"an instance share lies in [0, 1], not {share}",
                              "pass instance / (family + instance)")
    return components.model_copy(update={
        "family": components.family * (1 - share), "instance": components.family * share,
        "method": f"{components.method}; family term split {share:.2f} to instances"})


def sizing(pair: PairComponents, share: tuple[float, str] | None) -> VarianceComponents:
    """The components a design is sized with: ``pair``'s, its unseparated family term split by
    the measured instance ``share`` (:func:`instance_share`) when there is one."""
    return pair.components if share is None else split_by_instances(pair.components, share[0])


# The components a design is sized with until a study's stores hold some: those of
# ``most_variable_pair`` over the reference study v2's committed trials
# (docs/results/reference-study/trials.jsonl.gz; tests/agents/test_power_planning.py
# recomputes them). 181 pairs of 186: 5 of the 0.5B's trials overflowed a window set below its own
# and are not the model's (agents/exclusion.py), so 5.84 trials an instance on average.
DEFAULT_SOURCE = ("reference study v2 (docs/results/reference-study), the most variable pair "
                  "llamacpp:qwen2.5-coder-0.5b − llamacpp:qwen2.5-coder-1.5b")
DEFAULT_COMPONENTS = VarianceComponents(
    family=0.0495, instance=None, trial=0.0756, families=31, instances=1.0, trials=181 / 31)
# A comparison of one model's temperatures is sized, until a study's stores hold some, by
# ``most_variable_pair(..., temperatures=True)`` over the same trials: the 1.5B at T 0.7 and
# T 1.0, whose single cell varies more than the model pair's (sd 0.375 against 0.350) but
# whose family term is smaller.
DEFAULT_TEMPERATURE_SOURCE = ("reference study v2 (docs/results/reference-study), the most "
                              "variable temperature pair llamacpp:qwen2.5-coder-1.5b at "
                              "T 0.7 − T 1.0")
DEFAULT_TEMPERATURE_COMPONENTS = VarianceComponents(
    family=0.0225, instance=None, trial=0.1183, families=31, instances=1.0, trials=3.0)


class PowerRow(BaseModel):
    """The MDD (in points of success rate; None where undefined) of ``families`` ×
    ``instances`` × ``trials``."""

    model_config = ConfigDict(frozen=True)

    families: int
    instances: int
    trials: int
    mdd: float | None


def planned(components: VarianceComponents, families: int, instances: int,
            trials: int) -> float | None:
    """The MDD of a paired comparison on this design, in points (0–100)."""
    mdd = stats.planned_mdd(components, families=families, instances=instances, trials=trials)
    return None if mdd is None else 100 * mdd


def power_table(components: VarianceComponents, families: Sequence[int] = FAMILIES,
                instances: Sequence[int] = INSTANCES,
                trials: Sequence[int] = TRIALS) -> list[PowerRow]:
    """:func:`planned` over every design of the grid."""
    return [PowerRow(families=f, instances=i, trials=r, mdd=planned(components, f, i, r))
            for f in families for r in trials for i in instances]


def _per(n: float, unit: str) -> str:
    return f"{n:.3g} {unit}" + ("" if n == 1 else "s")


def _points(v: float | None) -> str:
    return "–" if v is None else f"{v:.1f}"


def render_power_table(pair: PairComponents, share: tuple[float, str] | None,
                       source: str) -> str:
    """The Markdown of the power table (docs/tasks.md): where the components come from, what
    they are, and the MDD of each design."""
    c = pair.components
    rows = power_table(sizing(pair, share))
    inst = ("not separated (one instance per family): it is inside the family term"
            if c.instance is None else f"{c.instance:.4f}")
    lines = [
        f"Components of passed(a) − passed(b), {source}: the pair {pair.a} − {pair.b}, "
        f"{pair.pairs} paired trials ({c.families} families, {_per(c.instances, 'instance')} a "
        f"family, {_per(c.trials, 'trial')} an instance); {c.method}.",
        "",
        f"- between families: {c.family:.4f}",
        f"- between instances of a family: {inst}",
        f"- between trials of an instance: {c.trial:.4f}",
        "",
    ]
    if share is not None and c.instance is None:
        lines += [f"The instance columns assume the pair's family term splits as "
                  f"{share[1]}'s successes do over instances: {share[0]:.0%} of it between "
                  f"instances (an assumption, not a measurement of the pair).", ""]
    elif c.instance is None:
        lines += ["No stored run separates instances from families yet, so the instance "
                  "columns cannot shrink the family term: more instances only average the "
                  "trial term.", ""]
    lines += ["MDD in points of success rate (two-sided paired t test across families, "
              f"α {stats.MDD_ALPHA:g}, power {stats.MDD_POWER:g}):", ""]
    head = "| families | trials an instance | " + " | ".join(
        f"{i} instance{'s' if i > 1 else ''}" for i in INSTANCES) + " |"
    lines += [head, "|" + "---|" * (2 + len(INSTANCES))]
    for f in FAMILIES:
        for r in TRIALS:
            got = [row.mdd for row in rows if (row.families, row.trials) == (f, r)]
            lines.append(f"| {f} | {r} | " + " | ".join(_points(v) for v in got) + " |")
    return "\n".join(lines) + "\n"


class DesignRow(BaseModel):
    """One model's capability success under one design: its family-level rate, how its
    successes vary (``within``: between the trials of a family, instances and repeats
    together; ``components``: the three terms, None when no instance has two trials) and
    the MDD of a paired comparison run to this design."""

    model_config = ConfigDict(frozen=True)

    label: str
    model: str
    rate: stats.ClusteredEstimate
    families: int
    instances: int  # the fewest a family has
    trials: int  # the fewest an instance has
    between: float  # between families
    within: float
    components: VarianceComponents | None
    mdd: float | None


def design_row(label: str, trials: Sequence[Trial], model: str,
               sizing: VarianceComponents) -> DesignRow:
    """:class:`DesignRow` of ``model``'s capability base trials among ``trials``; the MDD at
    ``sizing`` (the components of a pair's differences). StatsInputError below 2 families."""
    cells = _passed(trials)[model]
    nested = _nest({k: float(v) for k, v in cells.items()})
    two = stats.variance_components([[[v for c in fam for v in c]] for fam in nested])
    try:
        three: VarianceComponents | None = stats.variance_components(nested)
    except StatsInputError:
        three = None
    if three is not None and three.instance is None:
        three = None
    instances = min(len(fam) for fam in nested)
    per = min(len(c) for fam in nested for c in fam)
    rate = stats.task_level_rate([(sum(len(c) for c in fam), int(sum(sum(c) for c in fam)))
                                  for fam in nested])
    return DesignRow(label=label, model=model, rate=rate, families=len(nested),
                     instances=instances, trials=per, between=two.family, within=two.trial,
                     components=three, mdd=planned(sizing, len(nested), instances, per))


def _term(v: float | None) -> str:
    return "–" if v is None else f"{v:.4f}"


def render_designs(rows: Sequence[DesignRow]) -> str:
    """The Markdown table of :class:`DesignRow` s, one a line."""
    lines = ["| design | model | success, family level (95%) | families × instances × trials "
             "| between families | within a family | of which between instances "
             "| of which between trials | MDD (points) |", "|" + "---|" * 9]
    for r in rows:
        c = r.components
        lines.append(
            f"| {r.label} | {r.model} | {r.rate.formatted()} ({r.rate.design()}) | "
            f"{r.families} × {r.instances} × {r.trials} | {r.between:.4f} | {r.within:.4f} | "
            f"{_term(None if c is None else c.instance)} | {_term(None if c is None else c.trial)}"
            f" | {_points(r.mdd)} |")
    return "\n".join(lines) + "\n"
