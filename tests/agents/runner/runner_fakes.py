"""Fakes for runner tests: tasks, variants and a trial function shaped like the evaluator's."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from slmbench.agents.records import FaultPlan, Outcome, Trial
from slmbench.agents.runner.plan import Variant
from slmbench.core.errors import BackendError, ConfigError
from slmbench.models.records import Completion, Message
from slmbench.models.scripted import ScriptedModel


@dataclass(frozen=True)
class FakeTask:
    id: str
    suite: str = "alpha"
    faulty: bool = False


SUITES: dict[str, list[FakeTask]] = {
    "alpha": [FakeTask("A-1"), FakeTask("A-2"), FakeTask("A-3", faulty=True)],
    "beta": [FakeTask("B-1", suite="beta"), FakeTask("B-2", suite="beta")],
}


def fake_load_suite(name: str) -> list[FakeTask]:
    if name not in SUITES:
        raise ConfigError(f"no task suite {name!r}", "use alpha or beta")
    return SUITES[name]


def fake_variants(task: FakeTask) -> list[Variant]:
    out = [Variant()]
    if task.faulty:
        out.append(Variant(name="fault-timeout",
                           fault_plan=FaultPlan(tool="calendar", fault="timeout")))
    return out


def fake_trial(model: Any, task: FakeTask, *, temperature: float, seed: int, repeat: int,
               variant: str, fault_plan: FaultPlan | None, scaffold: str, max_steps: int,
               catch: bool = True, **_: Any) -> Trial:
    """Two model calls per trial; success when the last reply says 'ok'."""
    text, prompt, completion, latency = "", 0, 0, 0.0
    try:
        for step in range(2):
            c: Completion = model.generate(
                [Message(role="user", content=f"{task.id} {variant} step {step}")],
                temperature=temperature, seed=seed, max_tokens=16)
            text = c.text
            prompt += c.prompt_tokens
            completion += c.completion_tokens
            latency += c.latency_s
    except BackendError as exc:
        if not catch:
            raise
        return Trial(model=model.spec, task_id=task.id, suite=task.suite, variant=variant,
                     temperature=temperature, seed=seed, repeat=repeat, scaffold=scaffold,
                     outcome=Outcome.BACKEND_ERROR, error=str(exc), fault_plan=fault_plan)
    return Trial(model=model.spec, task_id=task.id, suite=task.suite, variant=variant,
                 temperature=temperature, seed=seed, repeat=repeat, scaffold=scaffold,
                 outcome=Outcome.SUCCESS if "ok" in text else Outcome.WRONG_ANSWER,
                 final_answer=text, fault_plan=fault_plan, prompt_tokens=prompt,
                 completion_tokens=completion, latency_s=latency, wall_s=latency)


def uncaught_trial(model: Any, task: FakeTask, **kw: Any) -> Trial:
    return fake_trial(model, task, catch=False, **kw)


@dataclass
class FlakyModel:
    """Answers 'ok <task>' but raises a transient BackendError on the listed call numbers."""

    spec: str = "scripted:flaky"
    fail_calls: set[int] = field(default_factory=set)
    always_fail: bool = False
    transient: bool = True
    calls: int = 0
    supports_logprobs: bool = False
    supports_native_tools: bool = False
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def generate(self, messages: Sequence[Message | dict[str, Any]], **kw: Any) -> Completion:
        with self._lock:
            self.calls += 1
            n = self.calls
        if self.always_fail or n in self.fail_calls:
            raise BackendError(f"HTTP 503 from server (call {n})", transient=self.transient)
        return Completion(text="ok", prompt_tokens=3, completion_tokens=1, latency_s=0.0,
                          finish_reason="stop", model=self.spec)

    def score(self, messages: Any, candidates: Any) -> list[Any]:
        raise NotImplementedError

    def close(self) -> None:
        return None


class CountingLoader:
    """A model loader handing out ScriptedModels (replying 'ok') and remembering them."""

    def __init__(self, reply: str = "ok") -> None:
        self.reply = reply
        self.models: dict[str, ScriptedModel] = {}

    def __call__(self, spec: str) -> ScriptedModel:
        model = ScriptedModel(lambda msgs: self.reply, spec=spec)
        self.models[spec] = model
        return model

