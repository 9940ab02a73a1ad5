"""A synthetic run store for analysis and report tests: real Trial records, known rates.

Four models of known size, each with a fixed skill, run the shipped suites'
tasks (two capability tasks per group, every reliability task with its
rewordings and fault variants) at three temperatures with three repeats.
Outcomes come from a seeded generator, so every run built here is identical.
Planted on purpose: a task every model fails, format failures that grow as
skill falls, faults that sometimes never reach the model, and a transcript
holding HTML/script text (the report must show it as text).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from slmbench.agents.questions import question_for
from slmbench.agents.records import Action, Outcome, Score, Step, Trial, TrialKey
from slmbench.agents.store import RunStore
from slmbench.agents.tasks import Task, load_tasks
from slmbench.agents.tasks.perturb import fault_plan_for, variants
from slmbench.models.records import Message

MODELS = {  # spec -> (params in B, skill)
    "ollama:alpha-0.5b": (0.5, 0.25),
    "ollama:beta-1.5b": (1.5, 0.45),
    "ollama:gamma-3b": (3.0, 0.65),
    "ollama:delta-7b": (7.0, 0.85),
}
PARAMS = {m: p for m, (p, _) in MODELS.items()}
TEMPERATURES = (0.3, 0.7, 1.0)
REPEATS = 3
TASKS = load_tasks()
CAPABILITY = [t for t in TASKS.values() if t.suite == "capability"]
CAPABILITY = [t for g in sorted({t.group for t in CAPABILITY})
              for t in [c for c in CAPABILITY if c.group == g][:2]]
RELIABILITY = [t for t in TASKS.values() if t.suite == "reliability"]
IMPOSSIBLE = CAPABILITY[0].id  # planted: every model fails it
SCRIPT_TEXT = "I think <script>alert(1)</script> maybe"


def _trial(model: str, task: Task, *, variant: str, temperature: float, repeat: int,
           ok: bool, outcome: Outcome, size: float, reached: bool) -> Trial:
    plan = fault_plan_for(task, variant)
    injected = plan is not None and reached
    tool = task.tools[0] if task.tools else "calculator"
    call = Step(index=0, raw_response=f'{{"name": "{tool}", "arguments": {{}}}}',
                action=Action(kind="tool", name=tool, format="json"),
                observation="error: injected fault" if injected else "result <b>42</b>",
                injected_fault=plan.fault if injected and plan else None,
                tool_ok=not injected, prompt_tokens=120, completion_tokens=20, latency_s=0.2)
    answer = "42" if ok else "41"
    final = Step(index=1, raw_response=f"Final answer: {answer}",
                 action=Action(kind="final", answer=answer, format="action_lines"),
                 prompt_tokens=150, completion_tokens=10, latency_s=0.1)
    steps = [call, final] if outcome != Outcome.FORMAT_FAILURE else [
        Step(index=0, raw_response=SCRIPT_TEXT,
             action=Action(kind="invalid", error="no action found"))]
    return Trial(
        model=model, task_id=task.id, suite=task.suite, variant=variant,
        temperature=temperature, seed=1000 + repeat,
        repeat=repeat, outcome=outcome, question=question_for(task),
        final_answer=None if outcome == Outcome.FORMAT_FAILURE else answer,
        score=Score(value=1.0 if ok else 0.0, passed=ok,
                    reason="matches 42" if ok else "expected 42"),
        steps=steps,
        messages=[Message(role="system", content="You are an agent. Use the tools."),
                  Message(role="user", content=task.instruction),
                  Message(role="assistant", content=steps[-1].raw_response)],
        fault_plan=plan, faults_injected=1 if injected else 0, prompt_tokens=270,
        completion_tokens=30, latency_s=0.3 * size, wall_s=0.35 * size,
    )


def _outcome(rng: np.random.Generator, ok: bool, skill: float) -> Outcome:
    if ok:
        return Outcome.SUCCESS
    return Outcome.FORMAT_FAILURE if rng.random() < (1 - skill) * 0.5 else Outcome.WRONG_ANSWER


def make_trials(models: dict[str, tuple[float, float]] | None = None,
                temperatures: tuple[float, ...] = TEMPERATURES, repeats: int = REPEATS,
                reliability: bool = True, seed: int = 0) -> list[Trial]:
    """Every trial of the synthetic run, deterministic for a seed."""
    rng = np.random.default_rng(seed)
    tasks = CAPABILITY + (RELIABILITY if reliability else [])
    out: list[Trial] = []
    for model, (size, skill) in (models or MODELS).items():
        for temperature in temperatures:
            p = max(0.02, skill - 0.15 * temperature)
            for repeat in range(repeats):
                for task in tasks:
                    for variant in variants(task):
                        q = p * (0.7 if variant != "base" else 1.0)
                        ok = task.id != IMPOSSIBLE and bool(rng.random() < q)
                        reached = bool(rng.random() < 0.9)
                        ok = ok and (reached or fault_plan_for(task, variant) is None)
                        out.append(_trial(model, task, variant=variant,
                                          temperature=temperature, repeat=repeat, ok=ok,
                                          outcome=_outcome(rng, ok, skill), size=size,
                                          reached=reached))
    return out


def make_run(run_dir: Path, trials: list[Trial] | None = None) -> Path:
    """Write the trials into a run store at ``run_dir``; returns the directory."""
    with RunStore(run_dir) as store:
        for t in trials if trials is not None else make_trials():
            key = TrialKey(model=t.model, task=t.task_id, variant=t.variant,
                           temperature=t.temperature, seed=t.seed, repeat=t.repeat)
            store.put(key, t.outcome.value, t)
    return run_dir
