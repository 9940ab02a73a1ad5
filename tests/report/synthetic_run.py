"""A synthetic run store for analysis and report tests: real Trial records, known rates.

Four models of known size, each with a fixed per-model skill, run a small
capability suite (8 groups) and a reliability suite (4 dimensions) at three
temperatures with three repeats. Outcomes are drawn from a seeded generator, so
every run built here is identical; a few outcomes are planted on purpose (a
task every model fails, format failures for the weakest model).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from slmbench.agent.trial import Action, FaultPlan, Outcome, Step, Trial
from slmbench.models.base import Message
from slmbench.scoring.base import Score
from slmbench.store import RunStore, TrialKey

MODELS = {  # spec -> (params in B, skill)
    "ollama:alpha-0.5b": (0.5, 0.25),
    "ollama:beta-1.5b": (1.5, 0.45),
    "ollama:gamma-3b": (3.0, 0.65),
    "ollama:delta-7b": (7.0, 0.85),
}
PARAMS = {m: p for m, (p, _) in MODELS.items()}
GROUPS = {
    "IR-1": "information_retrieval", "IR-2": "information_retrieval",
    "SC-1": "scheduling", "DA-1": "data_analysis", "DA-2": "data_analysis",
    "CM-1": "communication", "MS-1": "multi_step_reasoning", "DM-1": "decision_making",
    "CD-1": "coding", "SF-1": "safety",
}
IMPOSSIBLE = "MS-1"  # planted: every model fails it
DIMENSIONS = {"RC-1": "consistency", "RC-2": "consistency", "RR-1": "robustness",
              "RR-2": "robustness", "RF-1": "fault_tolerance", "RF-2": "fault_tolerance",
              "RS-1": "safety", "RS-2": "safety"}
ALL_TASKS = {**GROUPS, **{t: "reliability" for t in DIMENSIONS}}
TEMPERATURES = (0.3, 0.7, 1.0)
REPEATS = 3
PARAPHRASES = ("paraphrase", "verbose", "typos")
FAULTS = ("timeout", "rate_limit", "internal_error")


def group_of(task_id: str) -> str | None:
    return GROUPS.get(task_id)


def dimension_of(task_id: str) -> str | None:
    return DIMENSIONS.get(task_id)


def _trial(model: str, task: str, suite: str, *, variant: str, temperature: float,
           repeat: int, ok: bool, outcome: Outcome, size: float,
           fault: str | None = None) -> Trial:
    question = f"Please solve task {task} ({variant}) using the tools."
    call = Step(index=0, raw_response='{"name": "web_search", "arguments": {"q": "x"}}',
                action=Action(kind="tool", name="web_search", arguments={"q": "x"},
                              format="json"),
                observation="error: timeout" if fault else "result <b>42</b>",
                injected_fault=fault, tool_ok=fault is None, prompt_tokens=120,
                completion_tokens=20, latency_s=0.2)
    answer = "42" if ok else "41"
    final = Step(index=1, raw_response=f"Final answer: {answer}",
                 action=Action(kind="final", answer=answer, format="action_lines"),
                 prompt_tokens=150, completion_tokens=10, latency_s=0.1)
    steps = [call, final] if outcome != Outcome.FORMAT_FAILURE else [
        Step(index=0, raw_response="I think <script>alert(1)</script> maybe",
             action=Action(kind="invalid", error="no action found"))]
    return Trial(
        model=model, task_id=task, suite=suite, variant=variant, temperature=temperature,
        seed=1000 + repeat, repeat=repeat, outcome=outcome,
        final_answer=None if outcome == Outcome.FORMAT_FAILURE else answer,
        score=Score(value=1.0 if ok else 0.0, passed=ok, reason="matches 42" if ok else
                    "expected 42"),
        steps=steps,
        messages=[Message(role="system", content="You are an agent. Use tools."),
                  Message(role="user", content=question),
                  Message(role="assistant", content=steps[-1].raw_response)],
        fault_plan=FaultPlan(tool="web_search", fault=fault) if fault else None,  # type: ignore[arg-type]
        faults_injected=1 if fault else 0, prompt_tokens=270, completion_tokens=30,
        latency_s=0.3 * size, wall_s=0.35 * size,
    )


def _outcome(rng: np.random.Generator, ok: bool, skill: float) -> Outcome:
    if ok:
        return Outcome.SUCCESS
    if rng.random() < (1 - skill) * 0.5:
        return Outcome.FORMAT_FAILURE
    return Outcome.WRONG_ANSWER


def make_trials(models: dict[str, tuple[float, float]] | None = None,
                temperatures: tuple[float, ...] = TEMPERATURES, repeats: int = REPEATS,
                reliability: bool = True, seed: int = 0) -> list[Trial]:
    """Every trial of the synthetic run, deterministic for a seed."""
    rng = np.random.default_rng(seed)
    out: list[Trial] = []
    for model, (size, skill) in (models or MODELS).items():
        for temperature in temperatures:
            p = max(0.02, skill - 0.15 * temperature)
            for repeat in range(repeats):
                for task in GROUPS:
                    ok = task != IMPOSSIBLE and bool(rng.random() < p)
                    out.append(_trial(model, task, "capability", variant="base",
                                      temperature=temperature, repeat=repeat, ok=ok,
                                      outcome=_outcome(rng, ok, skill), size=size))
                if not reliability:
                    continue
                for task, dim in DIMENSIONS.items():
                    variants: list[tuple[str, str | None]] = [("base", None)]
                    if dim == "robustness":
                        variants += [(v, None) for v in PARAPHRASES]
                    if dim == "fault_tolerance":
                        variants = [(f"fault:{f}", f) for f in FAULTS]
                    for variant, fault in variants:
                        q = p * (0.7 if variant != "base" else 1.0)
                        ok = bool(rng.random() < q)
                        out.append(_trial(model, task, "reliability", variant=variant,
                                          temperature=temperature, repeat=repeat, ok=ok,
                                          outcome=_outcome(rng, ok, skill), size=size,
                                          fault=fault))
    return out


def make_run(run_dir: Path, trials: list[Trial] | None = None) -> Path:
    """Write the trials into a run store at ``run_dir``; returns the directory."""
    with RunStore(run_dir) as store:
        for t in trials if trials is not None else make_trials():
            key = TrialKey(model=t.model, task=t.task_id, variant=t.variant,
                           temperature=t.temperature, seed=t.seed, repeat=t.repeat)
            store.put(key, t.outcome.value, t)
    return run_dir
