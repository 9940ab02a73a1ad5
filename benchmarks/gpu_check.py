"""Confirm the CUDA paths on a machine with a GPU; write benchmarks/results/gpu_check-<host>.json.

Run through ``benchmarks/gpu_check.sh``. Each check is recorded with what it found, and a check
that cannot run says why (no CUDA torch, no CUDA llama-cpp-python, no model given): nothing is
reported as passing that did not run. The checks:

* ``torch_cuda``: torch sees a CUDA device (name, count, torch and CUDA versions);
* ``hf``: an ``hf:`` spec (``--hf``, default ``hf:Qwen/Qwen3-0.6B?device=cuda&think=off``, from
  the local HF cache) loads on the GPU, decodes the same text greedily twice, and scores two
  candidates (the gap between them is recorded);
* ``llamacpp``: a ``llamacpp:`` spec (``--gguf``, a registry name or a file) loads with
  ``n_gpu_layers=-1`` and decodes the same text greedily twice.

Times are wall seconds on the machine that ran it, for the reader; no number here is asserted.
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from pathlib import Path
from typing import Any

from slmbench.models import Message, load_model

PROMPT = [Message(role="user", content="Name the capital of France in one word.")]


def _torch() -> dict[str, Any]:
    try:
        import torch
    except ImportError as exc:
        return {"ran": False, "why": f"torch is not installed: {exc}"}
    if not torch.cuda.is_available():
        return {"ran": True, "ok": False, "torch": torch.__version__,
                "why": "torch.cuda.is_available() is False (a CPU build, or no driver)"}
    return {"ran": True, "ok": True, "torch": torch.__version__, "cuda": torch.version.cuda,
            "devices": [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())]}


def _decode_twice(spec: str, *, score: bool) -> dict[str, Any]:
    start = time.perf_counter()
    try:
        model = load_model(spec)
    except Exception as exc:  # recorded, not raised: the file says what failed
        return {"ran": False, "spec": spec, "why": f"{type(exc).__name__}: {exc}"}
    loaded = time.perf_counter() - start
    try:
        a = model.generate(PROMPT, max_tokens=16)
        b = model.generate(PROMPT, max_tokens=16)
        out: dict[str, Any] = {
            "ran": True, "spec": spec, "ok": a.text == b.text, "text": a.text,
            "load_s": round(loaded, 2), "decode_s": round(a.latency_s, 3),
            "completion_tokens": a.completion_tokens,
            "settings": getattr(model, "settings", {})}
        if score:
            scores = model.score(PROMPT, [" Paris", " Banana"])
            out["logprob_gap"] = round(scores[0].logprob - scores[1].logprob, 3)
        return out
    finally:
        model.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hf", default="hf:Qwen/Qwen3-0.6B?device=cuda&think=off")
    parser.add_argument("--gguf", default="qwen2.5-coder-0.5b",
                        help="registry name or .gguf path for the llamacpp check")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    torch_check = _torch()
    result = {
        "host": platform.node(), "python": platform.python_version(),
        "torch_cuda": torch_check,
        "hf": (_decode_twice(args.hf, score=True) if torch_check.get("ok")
               else {"ran": False, "why": "torch sees no CUDA device"}),
        "llamacpp": _decode_twice(f"llamacpp:{args.gguf}?n_gpu_layers=-1", score=False),
    }
    out = args.out or Path(__file__).parent / "results" / f"gpu_check-{platform.node()}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2, default=str) + "\n", encoding="utf-8")
    print(json.dumps({k: v.get("ok", v.get("why")) if isinstance(v, dict) else v
                      for k, v in result.items()}, indent=2))
    print(f"written: {out}")


if __name__ == "__main__":
    main()
