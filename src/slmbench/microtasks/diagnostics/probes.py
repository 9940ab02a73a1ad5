"""Context-length probe: a task's scores as the history in the prompt grows.

A task the probe can read (``MicroTask.probed``) is shown ``n`` turns of history from the
conversations of the task it names (``history_from``: the memory dataset for the built-in
tasks; :mod:`slmbench.microtasks.datasets.history`), one of two ways:

* ``widen`` (ranking): the item itself over ``n`` turns (its question over a window that
  holds the gold turn; BFCL's prerequisite conversations have 4-14 user turns, so a longer
  window is padded before it with turns of other conversations), under the frozen prompt. The
  BM25 baseline ranks the same widened turns.
* ``history`` (memory): the frozen prompt, with the ``n`` user turns that came before the
  item's (same padding rule) shown first as "Earlier messages from this user".

Each point is an eligibility cell (:func:`slmbench.microtasks.eligibility.make_cell`) of the
log-prob decision on one metric (F1 for memory; nDCG@5 and MRR for ranking): the score with
its 95% interval, τ = the best of the task's non-LLM references on the same items (BM25 on
the widened turns for ranking; the rules and the learned baseline on the turn alone for
memory; majority, random and every constant answer for both), the paired difference, the
verdict and the constant flag. Readings go through the one read loop
(:class:`~slmbench.microtasks.session.Session`) and its readings store, so a killed probe
resumes and its page can be rebuilt from the store.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from pydantic import BaseModel, ConfigDict, Field

from slmbench.core.errors import ConfigError
from slmbench.microtasks.cells import EligibilityCell
from slmbench.microtasks.datasets.history import Conversations
from slmbench.microtasks.datasets.records import Item
from slmbench.microtasks.eligibility import make_cell
from slmbench.microtasks.samples import fit_sample, select_items
from slmbench.microtasks.session import (
    Block,
    BlockReading,
    Session,
)
from slmbench.microtasks.spec import MicroTask
from slmbench.microtasks.store import ReadCounts
from slmbench.models.catalog import precision_of
from slmbench.models.records import Message

HISTORY_LENGTHS: tuple[int, ...] = (4, 8, 16, 32)
HISTORY_HEADER = "Earlier messages from this user:"


def history_messages(task: MicroTask, item: Item, history: Sequence[str]) -> list[Message]:
    """The task's frozen prompt of ``item`` with ``history`` shown first in the user message."""
    system, user = task.render("p0", item)
    shown = "\n".join(f"[{k + 1}] {' '.join(t.split())}" for k, t in enumerate(history))
    return [system, Message(role="user", content=f"{HISTORY_HEADER}\n{shown}\n\n{user.content}")]


def history_conversations(history: MicroTask) -> Conversations:
    """The conversations of ``history`` (a task declaring ``conversations``), every split."""
    if history.conversations is None:
        raise ConfigError(f"micro-task {history.name!r} holds no conversations to show as "
                          "history", "name a task with conversations= in history_from=")
    return history.conversations(history.load_items())


class ProbePoint(BaseModel):
    """One task's cell at one history length: the model's log-prob decisions scored against
    τ = the best non-LLM reference (constant answers included) on the same items."""

    model_config = ConfigDict(frozen=True)

    n_turns: int
    cell: EligibilityCell  # score, τ with its interval, paired difference, verdict, constant


def _points(spec: str, task: MicroTask, n: int, read: BlockReading,
            fit: Sequence[Item]) -> list[ProbePoint]:
    """Every metric of the task on the items read, against the task's references (each
    fitted on ``fit``) on the same items."""
    rankings = []
    for item, reading in zip(read.items, read.readings, strict=True):
        if reading.logprob_ranking is None:
            raise ConfigError(f"{spec} gives no log-probabilities ({item.id}): the probe "
                              "reads log-prob decisions", "probe a llamacpp:, llamaserver: "
                              "or hf: model")
        rankings.append(reading.logprob_ranking)
    golds = [task.gold(i) for i in read.items]
    refs = {b.name: [b.rankings[i.id] for i in read.items]
            for b in task.baselines(fit, read.items)}
    return [ProbePoint(n_turns=n, cell=make_cell(
        task=task, metric=metric, model=spec, precision=precision_of(spec),
        prompt_id=read.block.prompt_id, reading="logprob", golds=golds, rankings=rankings,
        baselines=refs)) for metric in task.metrics]


@dataclass(frozen=True)
class ProbeStep:
    """One block of the probe: a task's items at one history length, and the fit items its
    references learn from (widened like the block's, for ranking)."""

    n_turns: int
    block: Block
    fit: Sequence[Item]


def probe_steps(pools: Sequence[tuple[MicroTask, Sequence[Item]]], convs: Conversations,
                lengths: Sequence[int] = HISTORY_LENGTHS, *, limit: int | None = None,
                seed: int = 0) -> list[ProbeStep]:
    """The probe's blocks: per (task, its items) in order and per length, a seeded eval
    sample of ``limit`` items shown ``n`` turns of ``convs``: a task that widens its items is
    read over ``n`` turns under the frozen prompt (its fit items widened alike); one shown a
    history keeps its items, with ``n`` earlier turns shown first (stored under
    ``p0+<n>turns``)."""
    steps: list[ProbeStep] = []
    for task, pool in pools:
        chosen, fit = select_items(task, pool, limit, seed), fit_sample(pool, None)
        for n in lengths:
            steps.append(_step(task, n, chosen, fit, convs))
    return steps


def _step(task: MicroTask, n: int, chosen: Sequence[Item], fit: Sequence[Item],
          convs: Conversations) -> ProbeStep:
    """One task's block at history length ``n`` (see :func:`probe_steps`)."""
    widen, history = task.widen, task.history
    if widen is not None:
        return ProbeStep(n, Block(task=task, prompt_id="p0",
                                  items=[widen(i, n, convs) for i in chosen]),
                         [widen(i, n, convs) for i in fit])
    if history is None:
        raise ConfigError(f"micro-task {task.name!r} cannot be shown a longer history",
                          "probe a task that declares widen= or history=")

    def shown(item: Item) -> list[Message]:
        return history_messages(task, item, history(item, n, convs))

    return ProbeStep(n, Block(task=task, prompt_id=f"p0+{n}turns", items=chosen,
                              messages=shown), fit)


def read_probe(session: Session, spec: str, steps: Sequence[ProbeStep]) -> list[ProbePoint]:
    """Read every step's block with ``spec`` through the session (its store reused and
    resumed), and score each one against its references."""
    got = session.read(spec, [s.block for s in steps])
    return [p for step, read in zip(steps, got.blocks, strict=True)
            for p in _points(spec, step.block.task, step.n_turns, read, step.fit)]


class ProbeReport(BaseModel):
    """Everything one ``slmbench probe`` run measured, as written to probe.json."""

    command: str
    created: str
    models: list[str]
    lengths: list[int]
    limit: int | None
    points: list[ProbePoint]
    notes: list[str] = Field(default_factory=list)
    read_counts: ReadCounts = Field(default_factory=ReadCounts)


def run_probe(models: Sequence[str], tasks: Sequence[MicroTask], lengths: Sequence[int], *,
              history: MicroTask | None, limit: int | None = None, seed: int = 0,
              command: str = "", session: Session | None = None) -> ProbeReport:
    """The context-length probe of every model on eval samples of ``tasks`` (each one the
    probe can read: ``MicroTask.probed``), shown the conversations of ``history`` (the task
    their ``history_from`` names), read through the session's read loop (and its store,
    reused and resumed)."""
    source = history.name if history else None
    wrong = [t.name for t in tasks if not t.probed or t.history_from != source]
    if not tasks or wrong or history is None:
        raise ConfigError("the context-length probe cannot read "
                          f"{', '.join(wrong) or 'no task'} with the history of {source}",
                          "probe tasks that declare a longer history (widen= or history=) "
                          "from one task's conversations")
    session = session or Session()
    steps = probe_steps([(t, t.load_items()) for t in tasks], history_conversations(history),
                        lengths, limit=limit, seed=seed)
    points = [p for spec in models for p in read_probe(session, spec, steps)]
    return ProbeReport(command=command, created=datetime.now(UTC).isoformat(timespec="seconds"),
                       models=list(models), lengths=list(lengths), limit=limit, points=points,
                       notes=list(session.notes), read_counts=session.counts)
