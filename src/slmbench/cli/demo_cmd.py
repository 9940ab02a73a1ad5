"""``slmbench demo --model SPEC``: a smoke job proving a model loads, answers and scores.

It runs three short fixed prompts with greedy decoding, asks the model for the
log-probabilities of one yes/no candidate pair, and writes everything it
measured to ``runs/demo-<timestamp>/report.json``. A stand-in until the quick
suite exists: it grades nothing.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

import typer
from pydantic import BaseModel, ConfigDict
from rich.console import Console
from rich.table import Table

from slmbench import __version__
from slmbench.errors import LogprobsUnsupportedError
from slmbench.models.base import CandidateScore, Model, ModelSpec, load_model, parse_spec
from slmbench.models.registry import (
    PypiSource,
    file_sha256,
    load_registry,
    read_record,
    resolve_gguf,
)

PROMPTS: tuple[str, ...] = (
    "What is 17 + 25? Reply with the number only.",
    "Name the capital of Japan in one word.",
    "Write a Python expression for the length of the list [1, 2, 3]. Reply with code only.",
)
SCORE_PROMPT = "Is 7 an odd number? Answer yes or no."
CANDIDATES: tuple[str, str] = ("yes", "no")
MAX_TOKENS = 32
SEED = 0


class DemoReply(BaseModel):
    model_config = ConfigDict(frozen=True)

    prompt: str
    reply: str
    finish_reason: str
    prompt_tokens: int
    completion_tokens: int
    latency_s: float
    tokens_per_s: float | None


class DemoScoring(BaseModel):
    """Log-probabilities of ``CANDIDATES`` as the reply to ``prompt``, or why there are none."""

    model_config = ConfigDict(frozen=True)

    prompt: str
    candidates: list[CandidateScore]
    preferred: str | None
    unsupported: str | None = None


class ModelFile(BaseModel):
    """The GGUF a llamacpp spec loaded, and whether its hash is the registry's."""

    model_config = ConfigDict(frozen=True)

    path: str
    sha256: str
    registry_name: str | None
    matches_registry: bool | None


class DemoReport(BaseModel):
    model_config = ConfigDict(frozen=True)

    kind: Literal["demo-smoke"] = "demo-smoke"
    slmbench_version: str
    created_at: datetime
    model: str
    backend: str
    model_file: ModelFile | None
    load_s: float
    temperature: float
    seed: int
    max_tokens: int
    replies: list[DemoReply]
    tokens_per_s: float | None
    scoring: DemoScoring


def _rate(tokens: int, seconds: float) -> float | None:
    return round(tokens / seconds, 2) if seconds > 0 and tokens > 0 else None


def _model_file(spec: ModelSpec) -> ModelFile | None:
    """Hash the GGUF behind a llamacpp spec and compare it with the registry."""
    if spec.backend != "llamacpp":
        return None
    registry = load_registry()
    is_path = spec.target.endswith(".gguf") or "/" in spec.target
    path = Path(spec.target).expanduser() if is_path else resolve_gguf(spec.target)
    digest = file_sha256(path)
    gguf_entries = [m for m in registry.models if isinstance(m.source, PypiSource)]
    if is_path:
        entry = next((m for m in gguf_entries if m.source.sha256 == digest), None)
    else:
        entry = next((m for m in gguf_entries if m.name == spec.target), None)
    expected = None
    if entry is not None:
        record = read_record(entry.name)
        expected = entry.source.sha256 or (record.sha256 if record else None)
    return ModelFile(
        path=str(path),
        sha256=digest,
        registry_name=entry.name if entry else None,
        matches_registry=None if expected is None else digest == expected,
    )


def _score(model: Model) -> DemoScoring:
    messages = [{"role": "user", "content": SCORE_PROMPT}]
    try:
        scores = model.score(messages, list(CANDIDATES))
    except LogprobsUnsupportedError as exc:
        return DemoScoring(prompt=SCORE_PROMPT, candidates=[], preferred=None,
                           unsupported=str(exc))
    best = max(scores, key=lambda s: s.logprob)
    return DemoScoring(prompt=SCORE_PROMPT, candidates=scores, preferred=best.candidate)


def _run_dir(out: Path, now: datetime) -> Path:
    stem = f"demo-{now.strftime('%Y%m%d-%H%M%S')}"
    for n in range(1, 1000):
        path = out / (stem if n == 1 else f"{stem}-{n}")
        try:
            path.mkdir(parents=True, exist_ok=False)
        except FileExistsError:
            continue
        return path
    raise FileExistsError(f"too many demo runs named {stem} in {out}")


def run_demo(spec: str, out: Path) -> tuple[DemoReport, Path]:
    """Load ``spec``, run the smoke prompts, write the report; return it and its path."""
    parsed = parse_spec(spec)
    start = time.perf_counter()
    model = load_model(parsed)
    load_s = time.perf_counter() - start
    try:
        model_file = _model_file(parsed)
        replies = []
        for prompt in PROMPTS:
            c = model.generate([{"role": "user", "content": prompt}], temperature=0.0,
                               seed=SEED, max_tokens=MAX_TOKENS)
            replies.append(DemoReply(
                prompt=prompt, reply=c.text, finish_reason=c.finish_reason,
                prompt_tokens=c.prompt_tokens, completion_tokens=c.completion_tokens,
                latency_s=round(c.latency_s, 4), tokens_per_s=_rate(c.completion_tokens,
                                                                    c.latency_s),
            ))
        scoring = _score(model)
    finally:
        model.close()
    now = datetime.now(UTC)
    report = DemoReport(
        slmbench_version=__version__, created_at=now, model=spec, backend=parsed.backend,
        model_file=model_file, load_s=round(load_s, 3), temperature=0.0, seed=SEED,
        max_tokens=MAX_TOKENS, replies=replies,
        tokens_per_s=_rate(sum(r.completion_tokens for r in replies),
                           sum(r.latency_s for r in replies)),
        scoring=scoring,
    )
    path = _run_dir(out, now.astimezone()) / "report.json"
    path.write_text(report.model_dump_json(indent=2) + "\n", encoding="utf-8")
    return report, path


def _show(report: DemoReport, console: Console) -> None:
    table = Table(title=f"demo: {report.model}")
    for col in ("prompt", "reply", "tokens", "tok/s"):
        table.add_column(col)
    for r in report.replies:
        rate = f"{r.tokens_per_s:.1f}" if r.tokens_per_s is not None else "-"
        table.add_row(r.prompt, r.reply.strip(), str(r.completion_tokens), rate)
    console.print(table)
    s = report.scoring
    if s.unsupported:
        console.print(f"log-probs: not available ({s.unsupported})", highlight=False)
    else:
        parts = ", ".join(f"{c.candidate}={c.logprob:.3f}" for c in s.candidates)
        console.print(f"log-probs for {s.prompt!r}: {parts} -> {s.preferred}", highlight=False)
    if report.model_file is not None:
        f = report.model_file
        match = {True: "matches the registry", False: "DOES NOT match the registry",
                 None: "not in the registry"}[f.matches_registry]
        console.print(f"model file sha256 {f.sha256} ({match})", highlight=False)


def demo(
    model: str = typer.Option(..., "--model", help="model spec, e.g. llamacpp:qwen2.5-coder-0.5b"),
    out: Path = typer.Option(Path("runs"), "--out", help="folder for demo-<timestamp>/"),
) -> None:
    """Smoke-test a model: 3 greedy prompts and one log-prob pair, written to report.json."""
    report, path = run_demo(model, out)
    _show(report, Console(stderr=True))
    print(path)


def register(app: typer.Typer) -> None:
    app.command("demo")(demo)
