"""The throughput part of the README's "Measured here" section, from ``benchmarks/results/``.

Every figure is read from a results file; a file that is missing is said to be missing.

    .venv/bin/python benchmarks/measured_here.py            # print the section's bullets
    .venv/bin/python benchmarks/measured_here.py --write    # replace them in README.md
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from slmbench.report.study_page import with_block

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"
BEGIN = "<!-- measured-here:throughput -->"
END = "<!-- /measured-here:throughput -->"


def load(name: str) -> dict[str, Any] | None:
    path = RESULTS / name
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None


def when(d: dict[str, Any]) -> str:
    before, after = d["load_average_1min"]
    return f"{d['generated_at'][:10]}, load average {before:.1f} → {after:.1f}"


def ratios(arms: list[dict[str, Any]], rate: str) -> str:
    return ", ".join(f"{a['in_flight']}: {a[rate]:.2f}/min ({a['ratio_to_1']:.2f}×)"
                     for a in arms)


def p5(d: dict[str, Any]) -> str:
    a, b = d["part_a"], d["part_b"]
    g = d["grid"]
    under_way = ", ".join(f"{x['requests_under_way_mean']:.1f}" for x in a)
    evaluated = ", ".join(f"{x['server']['prompt_tokens_total']:,.0f}" for x in a)
    decoded = ", ".join(f"{x['server']['tokens_predicted_total']:,.0f}" for x in a)
    return (
        f"- Concurrency scaling, P5 (`benchmarks/concurrency_scaling.py` → "
        f"`concurrency_scaling.json`; {when(d)}; `{d['model']}`, a fresh server per arm). "
        f"Part A, {a[0]['trials']} trials ({len(g['tasks'])} tasks, greedy, at most "
        f"{g['max_steps']} steps), trials/min at 1, 2, 4, 8 in flight: "
        f"{ratios(a, 'trials_per_min')}. Part B, {b[0]['readings']} {d['partb']['task']} "
        f"readings (generation only: this backend gives no log-probs), readings/min: "
        f"{ratios(b, 'readings_per_min')}. Where the time went (Part A): requests under way "
        f"on average {under_way} (so the runner keeps the trials in flight); prompt tokens the "
        f"server evaluated {evaluated}, tokens it decoded {decoded}. {ceiling(d)}One run.")


def ceiling(d: dict[str, Any]) -> str:
    """The bare server's own decode rate at each concurrency, and Part A's best ratio."""
    c = d["ceiling"]
    rows = ", ".join(f"{x['in_flight']}: {x['decode_tokens_per_s']:.0f} tokens/s "
                     f"({x['ratio_to_1']:.2f}×)" for x in c["arms"])
    one, top = d["part_a"][0], c["arms"][-1]
    prompt_s = one["server"]["prompt_seconds_total"]
    decode_s = one["server"]["tokens_predicted_seconds_total"]
    best = prompt_s + decode_s / top["ratio_to_1"]
    return (f"The ceiling, the same server with no runner ({c['tokens_per_completion']} greedy "
            f"tokens per completion, that many completions at once): {rows}. So the Part A grid "
            f"could at best run {one['wall_s'] / best:.2f}× faster at {top['in_flight']} in "
            f"flight: its prompt time at 1 in flight ({prompt_s:.0f} s) does not shrink with "
            f"more in flight (Part B, nearly all prompt, gains nothing above), and its decode "
            f"time ({decode_s:.0f} s) shrinks at most by the ceiling's "
            f"{top['ratio_to_1']:.2f}×. ")


def determinism(d: dict[str, Any]) -> str:
    lo, hi = d["identical_ci95"]
    return (f"- Determinism under batching (`determinism.json`, the P5 run's greedy Part A "
            f"arms at {d['in_flight'][0]} and {d['in_flight'][1]} in flight): "
            f"{d['identical']} of {d['trials_compared']} trials had identical transcripts "
            f"({d['identical_share']:.0%}, 95% CI {lo:.0%}–{hi:.0%}). `slmbench run "
            f"--deterministic` runs one trial at a time for bit-identical runs.")


def study(d: dict[str, Any]) -> str:
    g, a, s = d["grid"], d["in_process"], d["server"]
    return (f"- Study throughput (`benchmarks/study_throughput.py` → `study_throughput.json`; "
            f"{when(d)}): the {g['suite']} suite ({a['trials']} trials, T = {g['temperature']}, "
            f"at most {g['max_steps']} steps) plus {a['readings']} Part B readings "
            f"({g['part_b']['limit']} per task, p0) took {a['wall_s']:.0f} s in-process "
            f"(`{a['model']}`) and {s['wall_s']:.0f} s on `{s['model']}`: "
            f"{d['server_speedup']:.2f}× end to end (Part A {d['part_a_speedup']:.2f}×, "
            f"having decoded {a['completion_tokens']:,} and {s['completion_tokens']:,} tokens; "
            f"Part B {d['part_b_speedup']:.2f}×, where the server only generates). One run"
            + (f"; {d['reduced']}." if d.get("reduced") else "."))


def prefix(d: dict[str, Any]) -> str:
    rows = "; ".join(
        f"`{r['model']}` took {r['reused_tokens']:,.0f} of {r['prompt_tokens_sent']:,} prompt "
        f"tokens from its cache ({r['reused_share']:.0%})"
        + (f", which at its measured prompt rate would have cost "
           f"{r['reused_would_have_cost_s']:.0f} s more" if "reused_would_have_cost_s" in r
           else "")
        for r in d["backends"])
    return (f"- Cross-trial prefix reuse (`benchmarks/prefix_reuse.py` → `prefix_reuse.json`; "
            f"{when(d)}; {len(d['grid']['tasks'])} tasks under `--toolset all`, greedy, one "
            f"trial at a time): {rows}.")


def overhead(d: dict[str, Any]) -> str:
    rows = "; ".join(f"`{m['model']}` {m['overhead_per_trial_ms']:.0f} ms a trial "
                     f"({m['overhead_share_of_trial']:.1%} of a trial)"
                     for m in d["measurements"])
    return (f"- Runner overhead, P1 (`benchmarks/runner_overhead.py` → `runner_overhead.json`; "
            f"{when(d)}): over a bare `run_trial` loop, {rows}.")


def scoring(d: dict[str, Any]) -> str:
    rows = "; ".join(
        f"`{r['model']}` {r['ratio_score_to_prefill']:.2f}× one prefill"
        if "ratio_score_to_prefill" in r else f"`{r['model']}` gives no log-probs"
        for r in d["backends"])
    return (f"- Log-prob scoring of a 2-option item, P2 (`benchmarks/logprob_scoring.py` → "
            f"`logprob_scoring.json`; {when(d)}): {rows}.")


SECTIONS: list[tuple[str, Callable[[dict[str, Any]], str]]] = [
    ("runner_overhead.json", overhead), ("concurrency_scaling.json", p5),
    ("determinism.json", determinism), ("study_throughput.json", study),
    ("prefix_reuse.json", prefix), ("logprob_scoring.json", scoring)]


def render() -> str:
    lines = []
    for name, fmt in SECTIONS:
        d = load(name)
        lines.append(fmt(d) if d is not None else f"- `{name}`: not measured yet.")
    made = ("Generated from `benchmarks/results/` by `python benchmarks/measured_here.py "
            "--write`; do not edit between the markers.")
    return "\n".join([BEGIN, made, "", *lines, END])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="replace the block in README.md")
    args = parser.parse_args(argv)
    block = render()
    if not args.write:
        print(block)
        return
    readme = ROOT / "README.md"
    text = readme.read_text(encoding="utf-8")
    replaced = with_block(text, block)
    if replaced is None:
        raise SystemExit(f"{readme} has no {BEGIN!r} … {END!r} block to replace")
    readme.write_text(replaced, encoding="utf-8")
    print(f"updated {readme}")


if __name__ == "__main__":
    main()
