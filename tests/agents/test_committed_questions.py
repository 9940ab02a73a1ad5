"""Every committed Part A export carries each trial's question (issue #59, part 1), and the
question is the one the model was asked: rebuilt as a task, its instruction under the trial's
variant is the first user message of the transcript (v2's CM-2 included, whose curated
instruction was then cut at ``#ops`` by YAML; today's binders would not give it)."""

from __future__ import annotations

from pathlib import Path

import pytest

from slmbench.agents.questions import as_task
from slmbench.agents.records import Trial
from slmbench.agents.tasks import load_tasks
from slmbench.agents.tasks.perturb import instruction_for
from slmbench.core.jsonl import read_jsonl_gz, validated

ROOT = Path(__file__).resolve().parents[2]
EXPORTS = sorted(p for folder in ("docs/results", "experiments")
                 for p in (ROOT / folder).glob("**/*trials*.jsonl.gz"))
TASKS = load_tasks()


def _trials(path: Path) -> list[Trial]:
    rows = read_jsonl_gz(path, "")
    return validated(Trial, path, [r.get("record", r) for r in rows], "")


def test_the_committed_exports_are_found() -> None:
    names = {str(p.relative_to(ROOT)) for p in EXPORTS}
    assert {"docs/results/reference-study/trials.jsonl.gz",
            "docs/results/reference-study-v3/trials.jsonl.gz",
            "docs/results/instances-qwen2.5-coder-1.5b/trials.jsonl.gz",
            "docs/results/agreement-qwen2.5-coder-0.5b/trials.jsonl.gz",
            "docs/results/suites-embedded/trials.jsonl.gz",
            "docs/results/harness-validity/neutral-trials.jsonl.gz",
            "experiments/reference-v3-stored/trials.jsonl.gz"} <= names


@pytest.mark.parametrize("path", EXPORTS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_trial_carries_the_question_it_was_asked(path: Path) -> None:
    trials = _trials(path)
    assert trials
    for t in trials:
        q = t.question
        assert q is not None, f"{path}: {t.model} {t.task_id} instance {t.instance}"
        assert q.world_seed == t.instance
        # a drawn instance names the binders that drew it; a curated task may predate them
        assert q.generator is not None or t.instance == 0
        asked = [m.content for m in t.messages if m.role == "user"][:1]
        assert asked == [instruction_for(as_task(q, TASKS[t.task_id]), t.variant)]
