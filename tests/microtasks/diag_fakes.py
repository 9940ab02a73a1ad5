"""Synthetic items and log-prob score sets for the diagnostics, regime and cascade tests."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import numpy as np

from slmbench.microtasks.datasets.records import ApprovalItem, Provenance, RankItem
from slmbench.microtasks.diagnostics.thresholds import ScoredItem, ranking_under
from slmbench.models.records import CandidateScore, Completion, Message, as_messages

PROV = (Provenance(package="synthetic", version="0", licence="CC0", archive_sha256="0" * 64,
                   source_path="tests", record_id="x"),)


def approval_items(labels: Sequence[str], split: str, prefix: str = "a") -> list[ApprovalItem]:
    """Approval items whose commands the rule baseline always approves ("ls -la"); no word of
    an eval command is in a fit command but "ls -la", so the learned baseline cannot tell."""
    return [ApprovalItem(id=f"{prefix}-{split}-{k}", split=split, command=f"ls -la {split}{k}",
                         label=lab, rule="synthetic", origin="synthetic", provenance=PROV)
            for k, lab in enumerate(labels)]


def approval_scores(items: Sequence[ApprovalItem], margins: Sequence[float], *,
                    format_failures: int = 0) -> list[ScoredItem]:
    """ScoredItems with ``log P(deny) - log P(approve) = margin``; greedy generation follows the
    log-prob decision except for the first ``format_failures`` items (no option named)."""
    out = []
    for k, (item, s) in enumerate(zip(items, margins, strict=True)):
        scored = ScoredItem(item_id=item.id, split=item.split, options=["approve", "deny"],
                            gold=item.label, logprobs={"deny": float(s) - 1.0, "approve": -1.0})
        gen = [] if k < format_failures else ranking_under(scored, {})
        out.append(scored.model_copy(update={"generation_ranking": gen}))
    return out


def balanced_labels(n: int) -> list[str]:
    return ["deny" if k % 2 else "approve" for k in range(n)]


def margins_for(labels: Sequence[str], *, deny: tuple[float, float],
                approve: tuple[float, float], seed: int) -> list[float]:
    """Uniform margins per class: deny items in ``deny``, approve items in ``approve``."""
    rng = np.random.default_rng(seed)
    return [float(rng.uniform(*(deny if lab == "deny" else approve))) for lab in labels]


def rank_items(golds: Sequence[int], split: str, n_turns: int = 4) -> list[RankItem]:
    return [RankItem(id=f"r-{split}-{k}", split=split, query=f"where is thing {k}?",
                     turns=tuple(f"turn {j} of item {k}" for j in range(n_turns)), gold=g,
                     provenance=PROV) for k, g in enumerate(golds)]


def rank_scores(items: Sequence[RankItem], *, gold_lp: float, other_lp: float,
                position_boost: dict[str, float]) -> list[ScoredItem]:
    """Gold option gets ``gold_lp``, others ``other_lp``; plus a fixed boost per position."""
    out = []
    for item in items:
        options = [str(k + 1) for k in range(len(item.turns))]
        gold = str(item.gold + 1)
        lps = {o: (gold_lp if o == gold else other_lp) + position_boost.get(o, 0.0)
               for o in options}
        out.append(ScoredItem(item_id=item.id, split=item.split, options=options, gold=gold,
                              logprobs=lps))
    return out


class NeedleModel:
    """Scores turn number k by whether turn [k] in the prompt holds the word NEEDLE."""

    spec = "fake:needle"
    supports_logprobs = True
    supports_native_tools = False

    def __init__(self) -> None:
        self.calls = 0  # score calls
        self.generations = 0

    def generate(self, messages: Sequence[Message | dict[str, Any]], **_: Any) -> Completion:
        """The read loop's greedy reply: the number of the turn holding NEEDLE (else 1)."""
        self.generations += 1
        text = as_messages(messages)[-1].content
        found = [n for n, turn in re.findall(r"\[(\d+)\] (.*)", text) if "NEEDLE" in turn]
        return Completion(text=(found or ["1"])[0], prompt_tokens=1, completion_tokens=1,
                          latency_s=0.0, finish_reason="stop", model=self.spec)

    def score(self, messages: Sequence[Message | dict[str, Any]], candidates: Sequence[str]
              ) -> list[CandidateScore]:
        self.calls += 1
        text = as_messages(messages)[-1].content
        blocks = dict(re.findall(r"\[(\d+)\] (.*)", text))
        return [CandidateScore(candidate=c, logprob=-0.1 if "NEEDLE" in blocks.get(c, "")
                               else -3.0, first_token_logprob=-1.0, n_tokens=1)
                for c in candidates]

    def close(self) -> None:
        pass
