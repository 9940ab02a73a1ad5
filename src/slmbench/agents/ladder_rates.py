"""The difficulty ladder of a run (issue #61, "Pages"): per configuration, the success rate at
each level with its task-level interval, and the highest level it holds.

A trial ran a family's *base* instance (``Trial.level == "base"``, today's task) or one of its
generated levels (the level's number as text; :mod:`slmbench.agents.tasks.families.levels`).
Only base trials feed the established figures of the summary (:func:`split`): a generated
level is another question under the same task id, and mixing it in would move every number
the run had before. The ladder reads both: a base trial counts at its family's base level
(:func:`~slmbench.agents.tasks.families.levels.level_number`), a generated one at its number.

Over the trials the accuracy counts (capability suite, base variant, no injected fault; those
that are the model's: :func:`slmbench.agents.exclusion.rated` is applied here), a level's rate
is ``stats.task_level_rate`` over tasks, the family being the task (its instances and repeats
one cluster), as every rate of :mod:`slmbench.agents.rates`. A configuration *holds* a level
where that rate's lower bound reaches ``summary.HOLDS_AT`` (50%); its
``held`` level is the highest such level (None: none is).

A run without generated-level trials has no ladder (``[]``), and only the configurations that
ran a generated level have one: their base trials alone would restate the accuracy.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from slmbench.agents.exclusion import rated
from slmbench.agents.rates import by, in_accuracy_scope, passed, task_rate
from slmbench.agents.records import Trial
from slmbench.agents.summary import LevelLadder, LevelRate
from slmbench.agents.tasks.families import levels
from slmbench.agents.tasks.families.levels import BASE

__all__ = ["held_level", "is_base", "level_ladder", "level_ladders", "split"]

def is_base(trial: Trial) -> bool:
    """Whether ``trial`` ran its family's base instance (today's task): the only trials the
    summary's established figures count."""
    return trial.level == BASE


def split(trials: Sequence[Trial]) -> tuple[list[Trial], list[Trial]]:
    """``trials`` as (base-instance trials, generated-level trials), each in order."""
    return [t for t in trials if is_base(t)], [t for t in trials if not is_base(t)]


def _in_scope(t: Trial) -> bool:
    """A trial the ladder counts: the accuracy's scope (capability suite, base variant, no
    injected fault), of a family with a ladder."""
    return in_accuracy_scope(t) and levels.level_number(t.task_id, t.level) is not None


def _level(t: Trial) -> int:
    number = levels.level_number(t.task_id, t.level)
    assert number is not None  # _in_scope kept only trials of a family with a ladder
    return number


def held_level(rates: Sequence[LevelRate]) -> int | None:
    """The highest level whose success lower bound reaches HOLDS_AT (None: none does)."""
    return max((r.level for r in rates if r.holds), default=None)


def level_ladder(model: str, trials: Sequence[Trial],
                 ok: Callable[[Trial], bool] = passed) -> LevelLadder:
    """The :class:`LevelLadder` of one configuration's ``trials`` (base and generated levels
    together; those out of the accuracy's scope, of a family with no ladder, or not the
    model's are dropped here)."""
    kept = [t for t in rated(trials) if _in_scope(t)]
    rates = [LevelRate(level=level, trials=len(ts), successes=sum(map(ok, ts)),
                       tasks=len({t.task_id for t in ts}),
                       families=sorted({t.task_id for t in ts}),
                       generated=sum(not is_base(t) for t in ts), rate=task_rate(ts, ok))
             for level, ts in sorted(by(kept, _level).items())]
    return LevelLadder(model=model, levels=rates, held=held_level(rates))


def level_ladders(trials: Sequence[Trial]) -> list[LevelLadder]:
    """Per configuration that ran a generated level in the accuracy's scope, its ladder; []
    for a run without one (every configuration's trials, base and levels, by model)."""
    ran = sorted({t.model for t in rated(trials) if not is_base(t) and _in_scope(t)})
    per_model = by(trials, lambda t: t.model)
    return [level_ladder(m, per_model[m]) for m in ran]
