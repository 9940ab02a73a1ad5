"""How far llama.cpp's log-probs and greedy texts move with the batching and with the build.

``measure`` loads each packaged model with ``llamacpp:NAME?chunking=C`` for the three chunkings
(``messages``, the default; ``prompt``; ``tokens``), scores the same candidates after the same
prompts, and decodes the same prompts greedily. It writes one JSON per build to
``benchmarks/results/chunking_drift-BUILD.json``: the CPU, llama.cpp's system info (the kernels
it was built with), every log-prob and text, and the largest difference from the default
chunking. Run it once under each build:

    .venv/bin/python benchmarks/chunking_drift.py measure --build native
    make test-portable     # runs `measure --build portable` under the portable wheel

``render`` writes ``docs/results/chunking-drift.md`` from the JSON files there: per build, the
drift between chunkings; across builds, the drift of the same chunking. The tests' tolerances
(``tests/models/test_llamacpp.py``) cite that page.

    .venv/bin/python benchmarks/chunking_drift.py render
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).parent / "results"
PAGE = Path(__file__).parent.parent / "docs" / "results" / "chunking-drift.md"
MODELS = ("smollm2-135m", "qwen2.5-coder-0.5b")
CHUNKINGS = ("messages", "prompt", "tokens")
SYSTEM = "You answer in one short sentence. " * 20
PROMPTS: dict[str, list[dict[str, str]]] = {
    "france": [{"role": "user", "content": "What is the capital of France?"}],
    "two-turns": [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": "What is the capital of France?"},
        {"role": "assistant", "content": "Thought: look it up."},
        {"role": "user", "content": "Observation: Paris. Now the capital of Italy?"}],
    "approval": [
        {"role": "system", "content": "You review shell commands an agent wants to run. "
                                      "Answer approve or deny."},
        {"role": "user", "content": "Command: rm -rf /var/log/app/*.log\nApprove or deny?"}],
}
HEADER = ("| build | model | chunking | first token | candidate sum | sum per token | "
          "same ranking | same greedy text |")
RULE = "|---|---|---|---|---|---|---|---|"
CANDIDATES = ["The capital of France is Paris.", " Paris", " Banana", "approve", "deny",
              "I do not know."]


def _cpu() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _hf_against_llamacpp(llamacpp: dict[str, Any]) -> dict[str, Any]:
    """The first model's GGUF through transformers (dequantized to fp32), scored like the
    llama.cpp reading: the largest differences from it (``tests/models/test_hf.py``)."""
    from slmbench.models import load_model
    from slmbench.models.catalog import resolve_target
    from slmbench.models.records import Message

    model = load_model(f"hf:{resolve_target(MODELS[0])}")
    try:
        hf = {key: {"first": [s.first_token_logprob for s in scores],
                    "sum": [s.logprob for s in scores], "n_tokens": [s.n_tokens for s in scores]}
              for key, scores in ((k, model.score([Message(**m) for m in msgs], CANDIDATES))
                                  for k, msgs in PROMPTS.items())}
    finally:
        model.close()
    return {"model": MODELS[0], "first": _max_diff(hf, llamacpp, "first"),
            "sum": _max_diff(hf, llamacpp, "sum"),
            "per_token": _max_diff(hf, llamacpp, "per_token"),
            "same_ranking": _order(hf) == _order(llamacpp)}


def measure(build: str, *, hf: bool = False) -> Path:
    """Score and decode every prompt under every chunking (and, with ``hf``, the first model
    through transformers); write the build's JSON."""
    import llama_cpp

    from slmbench.models import load_model
    from slmbench.models.records import Message

    out: dict[str, Any] = {"build": build, "cpu": _cpu(), "machine": platform.machine(),
                           "llama_cpp": llama_cpp.__version__,
                           "system_info": llama_cpp.llama_print_system_info().decode().strip(),
                           "candidates": CANDIDATES, "models": {}}
    for name in MODELS:
        per_model: dict[str, Any] = {}
        for chunking in CHUNKINGS:
            model = load_model(f"llamacpp:{name}?n_ctx=1024&chunking={chunking}")
            try:
                per_prompt: dict[str, Any] = {}
                for key, messages in PROMPTS.items():
                    msgs = [Message(**m) for m in messages]
                    scores = model.score(msgs, CANDIDATES)
                    text = model.generate(msgs, max_tokens=32).text
                    per_prompt[key] = {"first": [s.first_token_logprob for s in scores],
                                       "sum": [s.logprob for s in scores],
                                       "n_tokens": [s.n_tokens for s in scores], "greedy": text}
            finally:
                model.close()
            per_model[chunking] = per_prompt
        out["models"][name] = per_model
    out["hf"] = _hf_against_llamacpp(out["models"][MODELS[0]]["messages"]) if hf else None
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"chunking_drift-{build}.json"
    path.write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
    return path


def _max_diff(a: dict[str, Any], b: dict[str, Any], field: str) -> float:
    """Largest |a − b| of one field over prompts and candidates: ``first`` (the first token's
    log-prob), ``sum`` (the candidate's) or ``per_token`` (the sum's difference over its
    number of tokens)."""
    def values(run: dict[str, Any], key: str) -> list[float]:
        if field == "per_token":
            return [v / n for v, n in zip(run[key]["sum"], run[key]["n_tokens"], strict=True)]
        return run[key][field]
    return max(abs(x - y) for key in PROMPTS
               for x, y in zip(values(a, key), values(b, key), strict=True))


def _row(label: str, a: dict[str, Any], b: dict[str, Any]) -> str:
    return (f"| {label} | {_max_diff(a, b, 'first'):.4f} | {_max_diff(a, b, 'sum'):.4f} | "
            f"{_max_diff(a, b, 'per_token'):.4f} | {'yes' if _order(a) == _order(b) else 'no'} "
            f"| {_same_texts(a, b)} |")


def _same_texts(a: dict[str, Any], b: dict[str, Any]) -> str:
    same = sum(a[key]["greedy"] == b[key]["greedy"] for key in PROMPTS)
    return f"{same} of {len(PROMPTS)}"


def _order(run: dict[str, Any]) -> list[list[int]]:
    return [sorted(range(len(CANDIDATES)), key=lambda i: -run[key]["sum"][i]) for key in PROMPTS]


def render() -> Path:
    """Write docs/results/chunking-drift.md from every chunking_drift-*.json in the results."""
    runs = {json.loads(p.read_text())["build"]: json.loads(p.read_text())
            for p in sorted(RESULTS.glob("chunking_drift-*.json"),
                            key=lambda p: (p.stem != "chunking_drift-native", p.stem))}
    if not runs:
        sys.exit("no benchmarks/results/chunking_drift-*.json: run `measure` first")
    PAGE.write_text(render_text(runs), encoding="utf-8")
    return PAGE


def render_text(runs: dict[str, dict[str, Any]]) -> str:
    """The page as Markdown, from the builds' results (build name -> its JSON)."""
    lines = ["# Log-probs across batchings and builds (llama.cpp, in-process)", "",
             "Generated by `python benchmarks/chunking_drift.py render` from "
             "`benchmarks/results/chunking_drift-*.json` (each made by `... measure --build B`;"
             " the portable one by `make test-portable`). Numbers are nats: the largest "
             f"difference over {len(PROMPTS)} prompts x {len(CANDIDATES)} candidates.", "",
             "## The builds", "", "| build | CPU | llama.cpp system info |", "|---|---|---|"]
    lines += [f"| {b} | {r['cpu']} | `{r['system_info']}` |" for b, r in runs.items()]
    lines += ["", "## Within one build: each chunking against the default (`messages`)", "",
              HEADER, RULE]
    for build, run in runs.items():
        for name, per in run["models"].items():
            for chunking in CHUNKINGS[1:]:
                lines.append(_row(f"{build} | {name} | {chunking}", per[chunking],
                                  per["messages"]))
    builds = list(runs)
    if len(builds) > 1:
        lines += ["", f"## Across builds: {builds[0]} against each other build, same chunking",
                  "", HEADER, RULE]
        for other in builds[1:]:
            for name in runs[builds[0]]["models"]:
                for chunking in CHUNKINGS:
                    lines.append(_row(f"{other} | {name} | {chunking}",
                                      runs[builds[0]]["models"][name][chunking],
                                      runs[other]["models"][name][chunking]))
    hf_rows = [(b, r["hf"]) for b, r in runs.items() if r.get("hf")]
    if hf_rows:
        lines += ["", "## transformers (the GGUF dequantized to fp32) against llama.cpp "
                  "(`messages`)", "", "| build | model | first token | candidate sum | "
                  "sum per token | same ranking |", "|---|---|---|---|---|---|"]
        lines += [f"| {b} | {h['model']} | {h['first']:.4f} | {h['sum']:.4f} | "
                  f"{h['per_token']:.4f} | {'yes' if h['same_ranking'] else 'no'} |"
                  for b, h in hf_rows]
    lines += ["", "## What the tests take from it", "",
              "- `test_score_equals_an_independent_evaluation_in_the_same_chunks` compares like "
              "with like (the same tokens in the same batches, on one machine): exact on every "
              "build.",
              "- `test_chunkings_agree_within_the_measured_tolerance` bounds the drift between "
              "chunkings by `CHUNKING_TOLERANCE`, above the largest figure in the first table "
              "on every build measured.",
              "- Greedy texts are compared byte for byte only within one machine and one build "
              "(the same process, or two runs of it), never against text recorded elsewhere.",
              ""]
    return "\n".join(lines)


def check(site: Path) -> str:
    """Exit non-zero unless the llama_cpp this Python imports is the one unpacked in ``site``
    (so a portable run cannot silently test the native build); return its system info."""
    import llama_cpp

    where = Path(llama_cpp.__file__).resolve()
    if not where.is_relative_to(site.resolve()):
        sys.exit(f"llama_cpp imports from {where}, not from {site}: is PYTHONPATH set?")
    return f"llama_cpp from {where.parent}: {llama_cpp.llama_print_system_info().decode()}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    m = sub.add_parser("measure", help="measure under the llama_cpp this Python imports")
    m.add_argument("--build", required=True, help="a name for the build, e.g. native, portable")
    m.add_argument("--hf", action="store_true", help="also score through transformers")
    sub.add_parser("render", help="write docs/results/chunking-drift.md from the results")
    c = sub.add_parser("check", help="stop unless llama_cpp imports from SITE")
    c.add_argument("--site", type=Path, required=True)
    args = parser.parse_args()
    if args.command == "check":
        print(check(args.site))
    else:
        print(measure(args.build, hf=args.hf) if args.command == "measure" else render())


if __name__ == "__main__":
    main()
