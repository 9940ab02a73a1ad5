"""``docs/results/harness-validity.md``: the ReAct wording before and after issue #15, paired.

Generated from two run directories of the same grid (``benchmarks/harness_validity.py``):
``legacy`` (the old prompt, which told the model to start with 'Final Answer:' after
every tool result) and ``neutral`` (the prompt the harness uses now). The page shows
the success of each with its task-level interval, their difference paired by task (exact sign
test across tasks, paired interval, minimum detectable difference;
:mod:`slmbench.agents.comparison`), format failures under the
tolerant parser against the strict grammar, which parser rules read the actions,
the forensics causes, and every trial side by side. Every number is computed here
from the stored trials.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from slmbench.agents.comparison import PairedComparison, compare_trials, pair_trials
from slmbench.agents.forensics import CAUSES, FailureBreakdown, breakdown, diagnose
from slmbench.agents.loading import load_trials, shipped_tasks
from slmbench.agents.records import NOT_THE_MODELS, Trial
from slmbench.agents.store import RunStore
from slmbench.core import stats
from slmbench.core.jsonl import write_jsonl_gz
from slmbench.core.stats import ClusteredEstimate, Estimate
from slmbench.report.study_facts import pct, pval, short, table

__all__ = ["COMMAND", "render_harness_page", "write_harness_page"]

COMMAND = ".venv/bin/python benchmarks/harness_validity.py page"
ALPHA = 0.05
RUN_COMMANDS = ("flock /tmp/slmbench-model.lock .venv/bin/python benchmarks/harness_validity.py "
                "run legacy", "flock /tmp/slmbench-model.lock .venv/bin/python "
                "benchmarks/harness_validity.py run neutral")


def _verdict(c: PairedComparison) -> str:
    t = c.by_task
    if t is None:
        return "cannot tell: no shared trials"
    mdd = ("no minimum detectable difference (no spread in the per-task differences)"
           if t.mdd is None else f"minimum detectable difference {100 * t.mdd:.1f} points")
    if t.sign_test.p_value < ALPHA:
        better = "more" if t.mean_difference > 0 else "less"
        return (f"the new prompt succeeds {better} often ({t.a_ahead} : {t.b_ahead} tasks, "
                f"sign test p {pval(t.sign_test.p_value)})")
    return (f"cannot tell ({t.a_ahead} : {t.b_ahead} of {t.tasks} tasks, sign test p "
            f"{pval(t.sign_test.p_value)}; {mdd})")


def _designed(e: Estimate) -> str:
    """``pct`` with the design of a task-level rate beside it."""
    if isinstance(e, ClusteredEstimate):
        return f"{pct(e)} ({e.design()})"
    return pct(e)


def _by_task(trials: Sequence[Trial]) -> list[list[Trial]]:
    out: dict[str, list[Trial]] = {}
    for t in trials:
        out.setdefault(t.task_id, []).append(t)
    return [out[k] for k in sorted(out)]


def _formats(trials: Sequence[Trial]) -> Counter[str]:
    return Counter(s.action.format or s.action.kind for t in trials for s in t.steps
                   if s.action.kind != "invalid")


def _side_by_side(pairs: Sequence[tuple[Trial, Trial]], tools: dict[str, list[str]]
                  ) -> list[list[str]]:
    rows = []
    for old, new in pairs:
        f_old, f_new = diagnose(old, tools.get(old.task_id)), diagnose(
            new, tools.get(new.task_id))
        rows.append([old.task_id, old.variant, str(old.repeat), old.outcome.value,
                     f_old.cause or "–",
                     str(len(old.steps)), new.outcome.value, f_new.cause or "–",
                     str(len(new.steps))])
    return rows


def _breakdown_rows(label: str, b: FailureBreakdown, trials: Sequence[Trial]) -> list[str]:
    counted = [t for t in trials if t.outcome not in NOT_THE_MODELS]
    share = stats.task_level_rate(
        [(len(ts), sum(any(s.action.kind != "invalid" and not s.action.strict for s in t.steps)
                       for t in ts)) for ts in _by_task(counted)]) if counted else None
    return [label, str(b.trials), pct(b.format_failure), pct(b.strict_format_failure),
            pct(share), f"{b.tolerant_steps}/{b.steps}"]


def render_harness_page(legacy: Sequence[Trial], neutral: Sequence[Trial], *,
                        fingerprints: tuple[str | None, str | None] = (None, None),
                        runs: tuple[str, str] = ("legacy", "neutral"),
                        planned: tuple[int | None, int | None] = (None, None)) -> str:
    """The Markdown page for the two runs' trials (see the module docstring)."""
    tasks = shipped_tasks()
    tools = {i: list(t.tools) for i, t in tasks.items()}
    cmp = compare_trials(neutral, legacy, label_a="neutral", label_b="legacy")
    pairs, _ = pair_trials(legacy, neutral)
    models = sorted({t.model for t in [*legacy, *neutral]})
    b_old = breakdown("legacy", legacy, tools)
    b_new = breakdown("neutral", neutral, tools)
    lines = [
        "# Harness validity: the ReAct prompt before and after issue #15", "",
        f"Generated by `{COMMAND}` from the trials stored in `{runs[0]}` and `{runs[1]}`; "
        "do not edit by hand. The runs were made with:", "",
        *(f"    {c}" for c in RUN_COMMANDS), "",
        EXPORTS_LINE, "",
        f"Model: {', '.join(short(m) for m in models)}. The grid is what `slmbench demo` runs: "
        "the quick suite with its variants, greedy (T=0), one repeat; both runs plan the same "
        "trials (same tasks, variants and seeds), so they pair trial by trial. Harness "
        f"fingerprints: legacy `{fingerprints[0]}`, neutral `{fingerprints[1]}`. Stored: "
        f"legacy {len(legacy)} of {planned[0] or '?'} planned trials, neutral {len(neutral)} "
        f"of {planned[1] or '?'}"
        + ("" if (len(legacy), len(neutral)) == planned else
           " (**incomplete**: finish the runs and regenerate the page)") + ".", "",
        "- **legacy**: after every tool result (errors and injected faults included) the "
        "model was told \"Using this result, answer my question: ... Start your reply with "
        "'Final Answer:'. (If the result is not enough, call another tool instead.)\", and "
        "the protocol said \"Your first reply is always a tool call\".",
        "- **neutral**: the result and the question again (\"My question was: ...\"), "
        "nothing that steers toward answering, retrying or refusing; refusal is a legal "
        "first reply; tool examples in the canonical shape.", "",
        "Both runs use today's parser and code tool (REPL semantics); only the wording "
        "differs.", "",
        "## Success, paired", "",
    ]
    t = cmp.by_task
    lines += table(
        ["pairs", "tasks", "legacy success % [95% CI]", "neutral success % [95% CI]",
         "neutral − legacy [95% CI]", "sign test p", "tasks legacy / neutral ahead",
         "MDD (points)"],
        [[str(cmp.pairs), str(t.tasks) if t else "–", _designed(cmp.success_b),
          _designed(cmp.success_a), pct(cmp.difference),
          pval(t.sign_test.p_value if t else None),
          f"{t.b_ahead} / {t.a_ahead}" if t else "–",
          "–" if t is None or t.mdd is None else f"{100 * t.mdd:.1f}"]])
    lines += ["Intervals are task-level (the task is the unit: docs/statistics.md); the "
              "comparison pairs each task's trials, averages their differences per task and "
              "tests across tasks, so each task weighs the same in the difference, while a "
              "success rate weighs each trial (they agree when every task has as many trials).",
              ""]
    lines += [f"Verdict: {_verdict(cmp)}. Interval: {cmp.difference.method}; "
              f"{cmp.excluded} pair(s) dropped for a backend or environment error, "
              f"{cmp.unpaired} trial(s) unpaired.", ""]
    lines += ["## Format failures: tolerant parser vs strict grammar", "",
              "*Tolerant* is what the runs scored (the parser reads every unambiguous shape). "
              "*Strict* replays the same responses counting every reading outside the taught "
              "grammar (`{\"name\", \"arguments\"}` JSON or `Final Answer:`) as unreadable, "
              "two in a row ending the trial: a counterfactual, since a strict parser would "
              "have told the model its reply was unreadable. The next column is the share of "
              "trials in which a strict parser would have rejected at least one reply. 95% "
              "intervals, task-level.", ""]
    lines += table(["prompt", "trials", "format failure % (tolerant)",
                    "format failure % (strict replay)",
                    "trials with a reply only a tolerant rule reads %",
                    "steps read only by a tolerant rule"],
                   [_breakdown_rows("legacy", b_old, legacy),
                    _breakdown_rows("neutral", b_new, neutral)])
    fmts = sorted(set(_formats(legacy)) | set(_formats(neutral)))
    lines += ["Which parser rule read each action (steps):", ""]
    lines += table(["rule", "legacy", "neutral"],
                   [[f, str(_formats(legacy)[f]), str(_formats(neutral)[f])] for f in fmts])
    causes = [c for c in CAUSES if c in b_old.causes or c in b_new.causes]
    lines += ["## Forensics: why trials failed", "",
              "The cause of each failed trial (docs/reliability.md#forensics).", ""]
    lines += table(["cause", "legacy", "neutral"],
                   [[c, str(b_old.causes.get(c, 0)), str(b_new.causes.get(c, 0))]
                    for c in causes])
    labels = sorted(set(b_old.step_labels) | set(b_new.step_labels))
    if labels:
        lines += ["Step labels (every step, failed trials or not):", ""]
        lines += table(["label", "legacy", "neutral"],
                       [[x, str(b_old.step_labels.get(x, 0)), str(b_new.step_labels.get(x, 0))]
                        for x in labels])
    lines += ["## Every trial", ""]
    lines += table(["task", "variant", "repeat", "legacy outcome", "legacy cause", "legacy steps",
                    "neutral outcome", "neutral cause", "neutral steps"],
                   _side_by_side(pairs, tools))
    return "\n".join(lines).rstrip() + "\n"


EXPORTS_LINE = ("Every stored trial of both runs is exported beside this page "
                "(`{folder}/legacy-trials.jsonl.gz`, `{folder}/neutral-trials.jsonl.gz`: one "
                "stored trial per line, key, outcome and full record), so its numbers can be "
                "checked without a model.")


def write_harness_page(legacy_run: str | Path, neutral_run: str | Path,
                       out: str | Path) -> Path:
    """Render the page from two run directories and write it to ``out``."""
    legacy, neutral = load_trials(legacy_run), load_trials(neutral_run)
    prints, planned = [], []
    for run in (legacy_run, neutral_run):
        with RunStore(run) as store:
            prints.append(store.get_meta("harness_fingerprint"))
            planned.append(sum((store.get_meta("planned", {}) or {}).values()) or None)
    text = render_harness_page(legacy, neutral,
                               fingerprints=(prints[0], prints[1]),
                               planned=(planned[0], planned[1]),
                               runs=(str(legacy_run), str(neutral_run)))
    out = Path(out)
    exports = out.with_suffix("")  # docs/results/harness-validity/ beside the page
    exports.mkdir(parents=True, exist_ok=True)
    for arm, run in (("legacy", legacy_run), ("neutral", neutral_run)):
        with RunStore(run) as store:
            write_jsonl_gz(exports / f"{arm}-trials.jsonl.gz",
                           [stored.model_dump_json() for stored in store.trials()])
    out.write_text(text.replace(EXPORTS_LINE, EXPORTS_LINE.format(folder=exports.name)),
                   encoding="utf-8")
    return out
