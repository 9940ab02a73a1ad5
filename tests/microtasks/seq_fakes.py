"""Approval items whose words say nothing, and a model that knows (or flips) every gold."""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from slmbench.models.records import CandidateScore, Completion, Message

N_EVAL = 400


def write_approval(root: Path) -> dict[str, str]:
    """Approval items whose words say nothing (each command is unique), 70% approve."""
    rng = random.Random(7)
    golds: dict[str, str] = {}
    lines = []
    for k in range(N_EVAL + 200):
        split = "eval" if k < N_EVAL else "fit"
        label = "approve" if rng.random() < 0.7 else "deny"
        command = f"tool{k} --flag{k}"
        golds[command] = label
        lines.append(json.dumps({"id": f"a{k}", "split": split, "provenance": [],
                                 "command": command, "label": label, "rule": "t",
                                 "origin": "t"}))
    (root / "approval.jsonl").write_text("\n".join(lines) + "\n")
    return golds


def write_tools(root: Path, n: int) -> None:
    """``n`` eval and ``n // 2`` fit tool items with two functions, half served by none."""
    fns = [{"name": "weather.forecast", "description": "Weather forecast for a city."},
           {"name": "stock.price", "description": "Current price of a stock ticker."}]
    rows = [{"id": f"t{k}", "split": "eval" if k < n else "fit", "provenance": [],
             "request": f"request number {k}", "functions": fns,
             "label": "none" if k % 2 else "weather.forecast"} for k in range(n + n // 2)]
    (root / "tools.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")


class Oracle:
    """Knows every gold answer (or answers every one wrong), counts what it reads."""

    supports_native_tools = False
    supports_logprobs = True

    def __init__(self, golds: dict[str, str], *, wrong: bool = False, spec: str) -> None:
        self.golds, self.wrong, self.spec, self.reads = golds, wrong, spec, 0

    def _answer(self, messages: Sequence[Message | dict[str, Any]]) -> str:
        text = str(messages[-1].content if isinstance(messages[-1], Message)
                   else messages[-1]["content"])
        gold = next(g for c, g in self.golds.items() if f"{c}\n" in text or text.endswith(c))
        return ("deny" if gold == "approve" else "approve") if self.wrong else gold

    def score(self, messages: Sequence[Message | dict[str, Any]],
              candidates: Sequence[str]) -> list[CandidateScore]:
        answer = self._answer(messages)
        lps = [-0.1 if c.lower() == answer else -3.0 for c in candidates]
        return [CandidateScore(candidate=c, logprob=lp, first_token_logprob=lp, n_tokens=1)
                for c, lp in zip(candidates, lps, strict=True)]

    def generate(self, messages: Sequence[Message | dict[str, Any]], **kw: Any) -> Completion:
        self.reads += 1
        return Completion(text=self._answer(messages), prompt_tokens=10, completion_tokens=1,
                          latency_s=0.01, finish_reason="stop", model=self.spec)

    def close(self) -> None:
        pass
