"""Certify task families: every instance solvable, and no agent without skill passes.

For a family and world seeds 1..N (``slmbench tasks validate SUITE --instances N``):

- the scripted **reference agent** (:mod:`slmbench.agents.tasks.reference`) must solve
  every instance through the real loop and tools (outcome ``success``, so grounded), under
  every variant the instance is run under (its rewordings and hand-written paraphrases; each
  fault, which must fire, retried; :func:`slmbench.agents.tasks.perturb.variants`);
- a **bench of no-skill agents** (:data:`AGENTS`), each scripted and run through the same
  loop and tools on every instance, must each be right on at most :data:`MEMORY_BOUND` of
  the instances. Right means the scorer passed and the answer is no dump (``success`` or
  ``ungrounded``: grounding is a defence of its own, not relied on here). Where chance is
  higher by design (a small choice, a refusal; :func:`chance_share`), the bound is chance +
  :data:`CHANCE_MARGIN`. An agent fails the family when its observed share is above the
  bound: at 20 seeds a 5% bound allows 1 of 20, at 50 seeds 2 of 50. No test excuses a share
  over it (an exact binomial test let 3 of 20 pass, and hid a most-common answer right on 11
  of 50, #59); the one-sided binomial p against the bound is kept in the record as
  information only;
- the **most-common** agent answers each instance with the commonest answer of the *other*
  instances (the reference answer that most of them accept): a guess made without the
  instance, as a model that learnt a family's usual answer would make it;
- a family whose instances all ask the same (one scorer and one reference answer in every
  world) fails unless its task declares ``fixed:`` with a reason.

:func:`certify_groups` checks the constant guessers (a refusal, each option of a choice) per
group over the few instances a study draws (:data:`STUDY_SEEDS`): a family's forms balanced
over many seeds can still favour one answer over three. ``docs/tasks.md``, "Certification".
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence

from pydantic import BaseModel, ConfigDict

from slmbench.agents.evaluator import run_trial
from slmbench.agents.records import Outcome
from slmbench.agents.scoring import score, underivable
from slmbench.agents.tasks.families import instance
from slmbench.agents.tasks.model import (
    AllSpec,
    ChoiceSpec,
    CodeSpec,
    RefusalSpec,
    ScorerSpec,
    Task,
    scorer_kinds,
)
from slmbench.agents.tasks.perturb import fault_plan_for, variants
from slmbench.agents.tasks.reference import reference_agent
from slmbench.agents.world import World
from slmbench.core import stats
from slmbench.models.records import Message
from slmbench.models.scripted import ScriptedModel

__all__ = ["AGENTS", "CHANCE_MARGIN", "MEMORY_BOUND", "NULL_ANSWER", "REFUSAL_ANSWER",
           "STUDY_SEEDS", "AgentCheck", "FamilyCheck", "GroupCheck", "certify",
           "certify_groups", "chance_share", "no_skill_agent"]

MEMORY_BOUND = 0.05
CHANCE_MARGIN = 0.10
STUDY_SEEDS = (1, 2, 3)  # the drawn worlds a study runs a family in (--instances 3)
AGENTS = ("null", "refusal", "echo", "dump", "most_common", "replay", "memory")
NULL_ANSWER = "I have nothing to add."
REFUSAL_ANSWER = "I can't help with that request."
READING_TOOLS = frozenset({"web_search", "fact_lookup", "query_table", "csv_processor"})
READING_ACTIONS = frozenset({"list", "search", "read", "check_availability"})
RIGHT = frozenset({Outcome.SUCCESS, Outcome.UNGROUNDED})  # the scorer passed, no dump


def chance_share(spec: ScorerSpec) -> float | None:
    """The share a blind guess gets for an exempt scorer (a choice: one over its options; a
    refusal: one half; code: none, 0), or None when the scorer is not exempt."""
    if isinstance(spec, AllSpec):
        shares = [s for s in (chance_share(x) for x in spec.scorers) if s is not None]
        return min(shares) if shares else None
    if isinstance(spec, ChoiceSpec):
        return 1 / len(spec.options)
    if isinstance(spec, RefusalSpec):
        return 0.5
    if isinstance(spec, CodeSpec):
        return 0.0
    return None


class AgentCheck(BaseModel):
    """One no-skill agent over a family's instances: how often it was right, and where."""

    model_config = ConfigDict(frozen=True)

    agent: str
    right: int
    instances: int
    bound: float
    passes: list[str]  # "seed N: answer" for each instance it was right on
    p_value: float  # exact one-sided binomial p of "right on at most `bound`": information

    @property
    def share(self) -> float:
        return self.right / self.instances if self.instances else 0.0

    @property
    def passed(self) -> bool:
        """Right on at most its bound, as observed (no test excuses a share over it)."""
        return self.share <= self.bound + 1e-9


class FamilyCheck(BaseModel):
    """One family's certificate over its instances."""

    model_config = ConfigDict(frozen=True)

    family: str
    instances: int
    reference_solved: int  # instances solved under every variant
    reference_failures: list[str]  # "seed: outcome (why)", "seed variant: outcome (why)"
    chance: float | None  # the chance share of an exempt family; None: not exempt
    bound: float  # the most a no-skill agent may be right on, as a share
    agents: list[AgentCheck]
    same_everywhere: bool  # one scorer and one reference answer in every world
    fixed: str | None = None  # why that is by design (the task's ``fixed:``)
    level: str = "base"  # the ladder's level checked (agents/tasks/families/levels)

    @property
    def name(self) -> str:
        """The family, and its level where it is not the base instance: ``IR-1 level 2``."""
        return self.family if self.level == "base" else f"{self.family} level {self.level}"

    def agent(self, name: str) -> AgentCheck:
        return next(a for a in self.agents if a.agent == name)

    @property
    def memory_right(self) -> int:
        return self.agent("memory").right

    @property
    def memory_share(self) -> float:
        return self.agent("memory").share

    @property
    def reasons(self) -> list[str]:
        """Why the family is not certified, one line each (empty: certified)."""
        out = [f"{self.name} seed {f}" for f in self.reference_failures]
        if self.same_everywhere and self.fixed is None:
            out.append(f"{self.name}: the same in every world (one answer and one required "
                       "state change); rebind it, or declare `fixed:` with a reason")
        for a in self.agents:
            if not a.passed:
                out.append(f"{self.name}: the {a.agent} agent is right on {a.right}/"
                           f"{a.instances}, above its bound {a.bound:.0%}, e.g. "
                           + "; ".join(a.passes[:2]))
        return out

    @property
    def passed(self) -> bool:
        return not self.reasons


class GroupCheck(BaseModel):
    """A constant answer over a group's exempt families at the seeds a study draws."""

    model_config = ConfigDict(frozen=True)

    group: str
    answer: str
    right: int
    instances: int
    bound: float
    passes: list[str]  # "family seed N"

    @property
    def passed(self) -> bool:
        return self.right / self.instances <= self.bound + 1e-9

    @property
    def reason(self) -> str:
        return (f"group {self.group}: the constant answer {self.answer!r} is right on "
                f"{self.right}/{self.instances} instances at the seeds a study draws (bound "
                f"{self.bound:.0%}): " + ", ".join(self.passes))


def _agent(spec: str, replies: Callable[[list[Message]], str]) -> ScriptedModel:
    return ScriptedModel(replies, spec=f"scripted:no-skill/{spec}")


def _answering(text: str) -> Callable[[list[Message]], str]:
    return lambda _messages: f"Thought: I will answer now.\nFinal Answer: {text}"


def _first_result(observation: str) -> str:
    """The raw JSON of a tool result's first item (its first list's first element)."""
    try:
        parsed, _ = json.JSONDecoder().raw_decode(observation)
    except ValueError:
        return observation
    if isinstance(parsed, dict):
        lists = [v for v in parsed.values() if isinstance(v, list) and v]
        parsed = lists[0][0] if lists else parsed
    return json.dumps(parsed)


def _calling(calls: Sequence[tuple[str, dict[str, object]]],
             answer: Callable[[list[Message]], str]) -> Callable[[list[Message]], str]:
    def respond(messages: list[Message]) -> str:
        turn = sum(1 for m in messages if m.role == "assistant")
        if turn < len(calls):
            tool, args = calls[turn]
            return f"Thought: I will call {tool}.\n" + json.dumps({"name": tool,
                                                                   "arguments": args})
        return f"Thought: I know the answer.\nFinal Answer: {answer(messages)}"
    return respond


def _last_observation(messages: list[Message]) -> str:
    seen = [m.content for m in messages if m.role == "user"
            and (m.content or "").startswith("Observation:")]
    return (seen[-1] if seen else "").removeprefix("Observation:").strip()


def no_skill_agent(name: str, inst: Task, family: Task, common: str) -> ScriptedModel:
    """The scripted agent ``name`` (:data:`AGENTS`) for instance ``inst`` of ``family``;
    ``common``: the commonest reference answer of the family's other instances."""
    if name == "null":
        return _agent(name, _answering(NULL_ANSWER))
    if name == "refusal":
        return _agent(name, _answering(REFUSAL_ANSWER))
    if name == "echo":
        return _agent(name, _answering(inst.instruction))
    if name == "most_common":
        return _agent(name, _answering(common))
    if name == "memory":
        return _agent(name, _answering(family.reference.answer))
    if name == "replay":
        calls = [(a.tool, dict(a.arguments)) for a in family.reference.actions]
        return _agent(name, _calling(calls, lambda _m: family.reference.answer))
    assert name == "dump", name
    if "web_search" in inst.tools:
        first: list[tuple[str, dict[str, object]]] = [("web_search",
                                                       {"query": inst.instruction})]
    else:  # the instance's first reference call that only reads
        first = [(a.tool, dict(a.arguments)) for a in inst.reference.actions
                 if a.tool in READING_TOOLS or a.arguments.get("action") in READING_ACTIONS][:1]
    return _agent(name, _calling(first, lambda m: _first_result(_last_observation(m))))


def _answer_key(inst: Task) -> str:
    """What an instance's scorer accepts, less the wording of its reference answer."""
    return json.dumps(inst.scorer.model_dump(mode="json"), sort_keys=True)


def _accepts(instances: Sequence[Task]) -> list[list[bool]]:
    """``[i][j]``: instance ``j``'s scorer accepts instance ``i``'s reference answer in its
    world (correctness alone; a code scorer: the same scorer)."""
    worlds = [World.create(i.world_seed).snapshot() for i in instances]
    out = []
    for a in instances:
        row = []
        for b, world in zip(instances, worlds, strict=True):
            if "code" in scorer_kinds(b.scorer):
                row.append(_answer_key(a) == _answer_key(b))
            else:
                row.append(score(b.scorer, a.reference.answer, world).passed)
        out.append(row)
    return out


def _commonest(instances: Sequence[Task]) -> list[str]:
    """For each instance, the commonest answer of the *others*: the reference answer of
    another instance that the most other instances accept (the first such, in seed order).
    Out of sample: a guess made without this instance, as a model that learnt the
    family's usual answer would make it."""
    accepts = _accepts(instances)
    n = len(instances)
    out = []
    for j in range(n):
        others = [i for i in range(n) if i != j]
        if not others:  # one instance: no other to learn from
            out.append(NULL_ANSWER)
            continue
        best = max(others, key=lambda i: (sum(accepts[i][k] for k in others if k != i),
                                          -i))
        out.append(instances[best].reference.answer)
    return out


def _reference(inst: Task, seed: int) -> list[str]:
    failures = []
    for variant in variants(inst):
        plan = fault_plan_for(inst, variant)
        trial = run_trial(reference_agent(inst, plan), inst, variant=variant)
        where = str(seed) if variant == "base" else f"{seed} {variant}"
        if trial.outcome != Outcome.SUCCESS:
            why = trial.score.reason if trial.score else trial.error
            failures.append(f"{where}: reference {trial.outcome.value} ({why})")
        elif plan is not None and trial.faults_injected != 1:  # the fault must fire
            failures.append(f"{where}: {trial.faults_injected} faults injected, not 1")
        elif variant == "base" and (why := underivable(inst, trial.steps)) is not None:
            # a binder and a reference sharing a bug agree on a wrong answer: the world's
            # tool results must still show it (or two numbers they show must make it)
            failures.append(f"{where}: the reference's answer is not the world's ({why})")
    return failures


def _short(answer: str | None) -> str:
    text = " ".join((answer or "").split())
    return repr(text if len(text) <= 80 else text[:77] + "...")


def certify(task: Task, seeds: Iterable[int], *, agents: Sequence[str] = AGENTS,
            reference: bool = True, level: str = "base") -> FamilyCheck:
    """``task``'s family checked over the worlds of ``seeds`` (see the module docstring), at
    ``level`` (``"base"``, or a generated level of the ladder, whose seed-0 instance is what
    the memory and replay agents remember); ``reference=False`` skips the reference runs
    (the bench alone)."""
    seeds = list(seeds)
    instances = [instance(task, seed, level) for seed in seeds]
    if level != "base":
        task = instance(task, 0, level)
    failures = [f for s, i in zip(seeds, instances, strict=True) for f in _reference(i, s)] \
        if reference else []
    solved = len({f.split(":")[0].split()[0] for f in failures})
    common = _commonest(instances) if "most_common" in agents else [NULL_ANSWER] * len(seeds)
    chance = chance_share(task.scorer)
    bound = MEMORY_BOUND if chance is None else chance + CHANCE_MARGIN
    checks = []
    for name in agents:
        passes = []
        for seed, inst, guess in zip(seeds, instances, common, strict=True):
            trial = run_trial(no_skill_agent(name, inst, task, guess), inst)
            if trial.outcome in RIGHT:
                passes.append(f"seed {seed}: {_short(trial.final_answer)}")
        test, _ = stats.binomial_test(len(passes), len(seeds), p0=bound, alternative="greater")
        checks.append(AgentCheck(agent=name, right=len(passes), instances=len(seeds),
                                 bound=bound, passes=passes, p_value=test.p_value))
    same = len(seeds) > 1 and len({(_answer_key(i), i.reference.answer)
                                   for i in instances}) == 1
    return FamilyCheck(family=task.id, instances=len(seeds), reference_solved=len(seeds) - solved,
                       reference_failures=failures, chance=chance, bound=bound, agents=checks,
                       same_everywhere=same, fixed=task.fixed, level=level)


def _options(spec: ScorerSpec) -> list[str]:
    if isinstance(spec, AllSpec):
        return [o for s in spec.scorers for o in _options(s)]
    return list(spec.options) if isinstance(spec, ChoiceSpec) else []


def certify_groups(tasks: Iterable[Task], seeds: Sequence[int] = STUDY_SEEDS) -> list[GroupCheck]:
    """The constant guessers of each group at ``seeds`` (the worlds a study draws): a refusal,
    over the group's families scored on a refusal, and each option two or more of its choice
    families share ("Yes.", "No."), over those families. Each must be right on at most the
    pooled families' mean chance + :data:`CHANCE_MARGIN` of those instances (a share: the
    forms are balanced by design, :func:`~slmbench.agents.tasks.families.terms.balanced_form`).
    An option of one family alone cannot be balanced over three worlds and is not pooled."""
    by_group: dict[str, list[Task]] = defaultdict(list)
    for task in tasks:
        if chance_share(task.scorer):
            by_group[task.group].append(task)
    out = []
    for group, families in sorted(by_group.items()):
        pools: dict[str, list[Task]] = {}
        refusing = [t for t in families if "refusal" in scorer_kinds(t.scorer)]
        if refusing:
            pools[REFUSAL_ANSWER] = refusing
        options = Counter(o.lower() for t in families for o in set(_options(t.scorer)))
        for option in sorted(o for o, n in options.items() if n >= 2):
            pools[f"{option.capitalize()}."] = [
                t for t in families if option in {o.lower() for o in _options(t.scorer)}]
        for answer, pool in pools.items():
            chance = sum(chance_share(t.scorer) or 0.0 for t in pool) / len(pool)
            drawn = [(t, s, instance(t, s)) for t in pool for s in seeds]
            passes = [f"{t.id} seed {s}" for t, s, inst in drawn
                      if run_trial(_agent("constant", _answering(answer)), inst).outcome
                      in RIGHT]
            out.append(GroupCheck(group=group, answer=answer, right=len(passes),
                                  instances=len(drawn), bound=chance + CHANCE_MARGIN,
                                  passes=passes))
    return out
