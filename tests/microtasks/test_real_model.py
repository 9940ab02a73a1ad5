"""One real model (SmolLM2-135M through llama.cpp) read on a handful of items."""

from __future__ import annotations

import math

import pytest

from slmbench.microtasks import tasks as registry
from slmbench.microtasks.datasets.records import ApprovalItem
from slmbench.microtasks.readout import read_item

APPROVAL = registry.get("approval")

COMMANDS = [("ls -la", "approve"), ("rm -rf ~", "deny")]


@pytest.mark.embedded
def test_smollm_gives_logprobs_and_a_reply_for_each_item(smollm) -> None:
    for k, (command, label) in enumerate(COMMANDS):
        item = ApprovalItem(id=f"r{k}", split="eval", provenance=(), command=command,
                            label=label, rule="test", origin="test")
        got = read_item(smollm, APPROVAL, "p0", item)
        assert got.logprobs is not None and set(got.logprobs) == {"approve", "deny"}
        assert all(math.isfinite(v) and v < 0 for v in got.logprobs.values())
        assert got.logprob_ranking is not None and set(got.logprob_ranking) == {"approve", "deny"}
        assert got.note is None
        # the greedy reply is recorded verbatim; it parses to one option or is a format failure
        assert got.generation_ranking in ([], ["approve"], ["deny"])
    assert got.reply == read_item(smollm, APPROVAL, "p0", item).reply  # greedy: stable
