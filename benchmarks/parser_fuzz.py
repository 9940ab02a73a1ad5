"""Fuzz the action parser with 10^5 inputs and time it, adversarial lengths included.

Inputs come from one seeded generator (no test framework), in four kinds:

* *soup*: fragments of every syntax the parser reads (braces, quotes, fences, tags,
  ``Action:`` lines, calls, ``<think>``) mixed with noise, 0-400 characters;
* *mutated*: a valid action in one of the accepted shapes, then truncated, with
  characters dropped, duplicated or swapped, and prose around it;
* *long*: soup 1,000-20,000 characters long;
* *adversarial*: the families that were quadratic or worse before issue #21 (runs of
  unclosed ``{`` and ``name(``, unclosed tags, whitespace runs after fences and tags,
  deep nesting, brackets inside quotes inside brackets) at 1,000 to 64,000 characters.

For every input it records the wall time of ``parse_action`` and its result. The file
says how many calls raised (the contract is none), how many times the catch-all turned
an exception into "unreadable" (each by exception type: a ``RecursionError`` would be
counted there), how many were refused as nested too deep or too tangled, inputs per
second, the slowest input, and per adversarial family the time per character at each
length (flat when parsing is linear; the least of three timings, as the machine is shared).

    .venv/bin/python benchmarks/parser_fuzz.py            # 10^5 inputs, about 2 minutes
    .venv/bin/python benchmarks/parser_fuzz.py --inputs 2000 --out /tmp/fuzz.json
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from slmbench.agents.harness import PARSER_VERSION
from slmbench.agents.loop.parse import MAX_DEPTH, WORK_PER_CHAR, parse_action

RESULTS = Path(__file__).parent / "results" / "parser_fuzz.json"
NAMES = ["fact_lookup", "web_search", "code_interpreter"]

FRAGMENTS = [
    "{", "}", "[", "]", "(", ")", '"', "'", "\\", "```", "```json\n", "<think>", "</think>",
    "<tool_call>", "</tool_call>", "<tool>", "</tool>", "<args>", "</args>", "<function=x>",
    "</function>", "Action:", "Action Input:", "Final Answer:", "Observation:", "Thought:",
    '"name":', '"arguments":', "fact_lookup", "final_answer(", "(key=", "\n", ":", ",", " ",
    "null", "true", "1e309", "NaN", "**", '"call":', '"code":', '"key":', "'''", "  \t",
]
SHAPES = [
    '{"name": "fact_lookup", "arguments": {"key": "ceo"}}',
    '```json\n{"tool": "web_search", "args": {"query": "q"}}\n```',
    'Action: fact_lookup\nAction Input: {"key": "ceo"}',
    "<tool_call>{\"name\": \"fact_lookup\", \"arguments\": {\"key\": \"ceo\"}}</tool_call>",
    "fact_lookup(key='ceo')",
    "final_answer(answer='Dana Reyes')",
    "Final Answer: Dana Reyes",
    "{'name': 'code_interpreter', 'arguments': {'code': '''print(1)'''}}",
]
FAMILIES: dict[str, Callable[[int], str]] = {
    "unclosed braces": lambda n: "{" * n,
    "unclosed calls": lambda n: "fact_lookup(" * (n // 12),
    "any-name calls": lambda n: "f(" * (n // 2),
    "balanced nesting": lambda n: "{" * (n // 2) + "}" * (n // 2),
    "open args tags": lambda n: "<tool>x</tool><args>" * (n // 20),
    "open tool_call tags": lambda n: "<tool_call>{" * (n // 12),
    "Action lines": lambda n: "Action: x\nAction Input: ```\n" * (n // 28),
    "fence then spaces": lambda n: "```" + " " * n,
    "tag then spaces": lambda n: "<tool_call>x" + " " * n + "y",
    "brackets in quotes in brackets": lambda n: '{"' + "{\\'" * (n // 3),
}
LENGTHS = (1_000, 4_000, 16_000, 64_000)


def soup(rng: random.Random, size: int) -> str:
    parts: list[str] = []
    length = 0
    while length < size:
        part = rng.choice(FRAGMENTS) if rng.random() < 0.7 else "".join(
            rng.choice("abc xyz_019.=") for _ in range(rng.randint(1, 8)))
        parts.append(part)
        length += len(part)
    return "".join(parts)[:size]


def mutated(rng: random.Random) -> str:
    text = list(rng.choice(SHAPES))
    for _ in range(rng.randint(0, 4)):
        i = rng.randrange(len(text))
        op = rng.choice(("drop", "dup", "swap", "cut"))
        if op == "drop":
            del text[i]
        elif op == "dup":
            text.insert(i, text[i])
        elif op == "swap" and i + 1 < len(text):
            text[i], text[i + 1] = text[i + 1], text[i]
        elif op == "cut":
            del text[i:]
        if not text:
            break
    return soup(rng, rng.randint(0, 60)) + "".join(text) + soup(rng, rng.randint(0, 60))


def inputs(rng: random.Random, count: int) -> Iterator[tuple[str, str]]:
    """(kind, text) pairs: the adversarial families at every length first, then the rest."""
    for family, make in FAMILIES.items():
        for n in LENGTHS:
            yield f"adversarial:{family}:{n}", make(n)
    for _ in range(count - len(FAMILIES) * len(LENGTHS)):
        r = rng.random()
        if r < 0.01:
            yield "long", soup(rng, rng.randint(1_000, 20_000))
        elif r < 0.5:
            yield "mutated", mutated(rng)
        else:
            yield "soup", soup(rng, rng.randint(0, 400))


def _timed(text: str) -> float:
    started = time.perf_counter()
    parse_action(text, tool_names=NAMES)
    return time.perf_counter() - started


def run(count: int, seed: int) -> dict[str, Any]:
    rng = random.Random(seed)
    kinds: Counter[str] = Counter()
    outcomes: Counter[str] = Counter()
    swallowed: Counter[str] = Counter()
    raised: Counter[str] = Counter()
    refused = Counter[str]()
    family_times: dict[str, dict[int, float]] = {}
    total_s, total_chars, slowest = 0.0, 0, (0.0, "", 0)
    for kind, text in inputs(rng, count):
        started = time.perf_counter()
        try:
            action = parse_action(text, tool_names=NAMES)
        except Exception as exc:  # the contract is that it never raises: count it
            raised[type(exc).__name__] += 1
            continue
        finally:
            spent = time.perf_counter() - started
        total_s += spent
        total_chars += len(text)
        slowest = max(slowest, (spent, kind, len(text)))
        kinds[kind.split(":")[0]] += 1
        outcomes[action.kind] += 1
        error = action.error or ""
        if error.startswith("unreadable response ("):
            swallowed[error.split("(")[1].split(")")[0]] += 1
        for word, label in (("nested more than", "too_deep"), ("too tangled", "too_tangled")):
            if word in error:
                refused[label] += 1
        if kind.startswith("adversarial:"):  # the least of 3 timings: the machine is shared
            _, family, n = kind.split(":")
            least = min([spent, *(_timed(text) for _ in range(2))])
            family_times.setdefault(family, {})[int(n)] = least / len(text) * 1e6
    inputs_done = sum(kinds.values())
    return {
        "inputs": inputs_done + sum(raised.values()),
        "by_kind": dict(kinds),
        "outcomes": dict(outcomes),
        "raised": dict(raised),
        "raised_total": sum(raised.values()),
        "swallowed_by_catch_all": dict(swallowed),
        "swallowed_total": sum(swallowed.values()),
        "refused": dict(refused),
        "characters": total_chars,
        "parse_seconds": round(total_s, 3),
        "inputs_per_second": round(inputs_done / total_s, 1),
        "max_input_seconds": round(slowest[0], 4),
        "max_input": {"kind": slowest[1], "characters": slowest[2]},
        "adversarial_us_per_char": {
            family: {str(n): round(us, 3) for n, us in sorted(times.items())}
            for family, times in family_times.items()},
    }


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--inputs", type=int, default=100_000)
    ap.add_argument("--seed", type=int, default=21)
    ap.add_argument("--out", type=Path, default=RESULTS)
    args = ap.parse_args(argv)
    load_before = os.getloadavg()[0]
    figures = run(args.inputs, args.seed)
    results = {
        "generated_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "command": "python benchmarks/parser_fuzz.py " + " ".join(argv or sys.argv[1:]),
        "python": sys.version.split()[0], "machine": platform.platform(),
        "cpus": os.cpu_count() or 0,
        "load_average_1min": [load_before, os.getloadavg()[0]],
        "seed": args.seed, "parser_version": PARSER_VERSION, "max_depth": MAX_DEPTH,
        "work_per_char": WORK_PER_CHAR, "tool_names": NAMES, **figures,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    print(json.dumps({k: results[k] for k in (
        "inputs", "raised_total", "swallowed_total", "refused", "inputs_per_second",
        "max_input_seconds", "max_input")}, indent=2))


if __name__ == "__main__":
    main()
