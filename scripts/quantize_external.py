"""Quantize the HF-format model with third-party GPTQ / AWQ implementations, on the CPU.

Runs in an isolated venv (never the project's: these tools pin their own torch and
transformers), made by ``make quant-venv`` (auto-round) or ``make llmc-venv``
(llmcompressor). It imports nothing from slmbench. For each method it writes two folders
under ``--out``:

* ``<method>-export/``: the tool's real export (``auto_awq`` / ``auto_gptq`` format, or
  llmcompressor's compressed-tensors), the file a GPU user would serve;
* ``<method>-qdq/``: the same quantized weights stored dequantized as a plain transformers
  model (no ``quantization_config``), which ``slmbench quantize --quantized hf:DIR`` reads
  through the project's read loop on the CPU.

Methods: ``awq`` (auto-round's AWQ: activation-aware channel scaling, then RTN, 4-bit,
group 128), ``signround`` (auto-round's SignRound, exported in the GPTQ format), ``gptq``
(llmcompressor's GPTQModifier: the GPTQ algorithm proper). Calibration text is the fit
split of the local micro-task datasets (never the eval split), so nothing is downloaded.

    make quant-venvs
    flock /tmp/slmbench-model.lock ~/.cache/slmbench/venv-autoround/bin/python \\
        scripts/quantize_external.py --method awq --out runs/quant-ext \\
        --gguf ~/.cache/slmbench/models/qwen2.5-coder-0.5b.gguf
    flock /tmp/slmbench-model.lock ~/.cache/slmbench/venv-llmcompressor/bin/python \\
        scripts/quantize_external.py --method gptq --out runs/quant-ext \\
        --gguf ~/.cache/slmbench/models/qwen2.5-coder-0.5b.gguf
    flock /tmp/slmbench-model.lock slmbench quantize --precision fp32 \\
        -m ~/.cache/slmbench/models/qwen2.5-coder-0.5b.gguf \\
        --gguf hf:runs/quant-ext/awq-qdq --gguf hf:runs/quant-ext/gptq-qdq \\
        -t approval -t memory -t tools -t ranking --limit 20 --out runs/quant-ext/eval

On a GPU, the same script runs unchanged (the tools pick the GPU up); gptqmodel 7.7.0, the
other GPTQ implementation, needs ``torch>=2.14.1`` (the project pins 2.13.0), so a GPU user
runs it in its own venv: ``pip install gptqmodel==7.7.0`` and its own quantize call.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

FIELDS = {"approval": "command", "tools": "request", "memory": "turn", "ranking": "query"}


def calibration(datasets: Path, n: int, seqlen: int) -> list[str]:
    """``n`` calibration texts of at least ``seqlen`` tokens (about 4 characters each), packed
    from the fit-split texts of the four micro-tasks taken round-robin (a tool may drop a
    sample shorter than its sequence length)."""
    per: list[list[str]] = []
    for task, field in FIELDS.items():
        path = datasets / f"{task}.jsonl"
        if path.is_file():
            rows = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x]
            per.append([str(r[field]) for r in rows if r.get("split") == "fit" and r.get(field)])
    pool = [p[k] for k in range(max(map(len, per), default=0)) for p in per if k < len(p)]
    if not pool:
        raise SystemExit(f"no calibration text in {datasets} (run: slmbench data prepare)")
    out: list[str] = []
    chunk: list[str] = []
    k = 0
    while len(out) < n:
        chunk.append(pool[k % len(pool)])
        k += 1
        if sum(len(x) + 1 for x in chunk) >= 5 * seqlen:
            out.append("\n".join(chunk))
            chunk = []
    return out


def load(gguf: Path):  # type: ignore[no-untyped-def]
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
    model = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name,
                                                 dtype=torch.float32)
    # transformers dequantized the GGUF to fp32 in memory but keeps its gguf
    # quantization_config: llmcompressor's oneshot refuses such a model and auto-round's
    # save fails on it ("quantized with gguf and is not serializable"); the weights are fp32
    if getattr(model.config, "quantization_config", None) is not None:
        del model.config.quantization_config
    for attr, value in (("hf_quantizer", None), ("is_quantized", False)):
        if hasattr(model, attr):
            setattr(model, attr, value)
    return model, tok


def strip_quant_config(folder: Path) -> None:
    """A qdq folder is a plain model: drop the quantization_config a tool may have written."""
    cfg = folder / "config.json"
    data = json.loads(cfg.read_text(encoding="utf-8"))
    if data.pop("quantization_config", None) is not None:
        cfg.write_text(json.dumps(data, indent=2), encoding="utf-8")
    for extra in ("quantization_config.json",):
        (folder / extra).unlink(missing_ok=True)


def auto_round(method: str, model, tok, texts: list[str], out: Path, seqlen: int,  # type: ignore[no-untyped-def]
               iters: int, n_grid: int = 20) -> dict:
    from auto_round import AutoRound, AWQConfig

    kwargs = dict(scheme="W4A16", dataset=texts, nsamples=len(texts), seqlen=seqlen,
                  device_map="cpu", batch_size=4)
    if method == "awq":
        # AWQ as published: activation-aware scales, then plain RTN (not auto-round's
        # optimised RTN, a slow per-layer search on the CPU)
        awq = AWQConfig(n_grid=n_grid, disable_opt_rtn=True, seqlen=seqlen,
                        nsamples=len(texts), batch_size=4)
        ar = AutoRound(model, tok, alg_configs=awq, **kwargs)
        fmt = "auto_awq"
    else:
        ar = AutoRound(model, tok, iters=iters, **kwargs)
        fmt = "auto_gptq"
    export, qdq = out / f"{method}-export", out / f"{method}-qdq"
    ar.quantize_and_save(str(export), format=f"{fmt},fake")
    fake = next((p for p in export.parent.glob(f"{export.name}*") if "fake" in p.name), None)
    if fake is None:  # one folder per format; the fake one may be a sub-folder
        fake = next((p for p in export.rglob("config.json") if "fake" in str(p)), None)
        fake = fake.parent if fake is not None else None
    if fake is None:
        raise SystemExit(f"auto-round wrote no fake (qdq) folder under {out}: "
                         f"{sorted(p.name for p in out.iterdir())}")
    fake.rename(qdq)
    tok.save_pretrained(qdq)
    strip_quant_config(qdq)
    return {"format": fmt, "export": str(export), "qdq": str(qdq)}


def llmcompressor_gptq(model, tok, texts: list[str], out: Path, seqlen: int) -> dict:  # type: ignore[no-untyped-def]
    from datasets import Dataset
    from llmcompressor import oneshot
    from llmcompressor.modifiers.quantization import GPTQModifier

    data = Dataset.from_dict({"text": texts})
    # oneshot re-reads the model's config from its path; a GGUF folder has no config.json
    source = out / "source-config"
    model.config.save_pretrained(source)
    model.config._name_or_path = str(source)
    recipe = GPTQModifier(targets="Linear", scheme="W4A16", ignore=["lm_head"])
    oneshot(model=model, tokenizer=tok, dataset=data, recipe=recipe, max_seq_length=seqlen,
            num_calibration_samples=len(texts))
    export = out / "gptq-export"
    model.save_pretrained(export, save_compressed=True)
    tok.save_pretrained(export)
    return {"format": "compressed-tensors", "export": str(export),
            "qdq": str(gptq_qdq(export, out / "gptq-qdq"))}


def gptq_qdq(export: Path, qdq: Path) -> Path:
    """The compressed-tensors ``export`` read back decompressed (each packed 4-bit weight times
    its scale, by compressed-tensors itself), saved as a plain transformers model in ``qdq``.
    Saving compressed packs the in-memory weights, so the qdq copy is made from the file a user
    would serve, not from the model object."""
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from transformers.utils.quantization_config import CompressedTensorsConfig

    model = AutoModelForCausalLM.from_pretrained(
        export, quantization_config=CompressedTensorsConfig(run_compressed=False),
        dtype="float32")
    state = {k: v for k, v in model.state_dict().items()
             if not k.endswith(("weight_scale", "weight_zero_point", "weight_g_idx",
                                "weight_shape"))}
    model.config.__dict__.pop("quantization_config", None)
    model.save_pretrained(qdq, state_dict=state)
    AutoTokenizer.from_pretrained(export).save_pretrained(qdq)
    strip_quant_config(qdq)
    return qdq


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gguf", type=Path, required=True)
    ap.add_argument("--method", choices=("awq", "signround", "gptq"), required=True)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--datasets", type=Path,
                    default=Path("~/.cache/slmbench/datasets").expanduser())
    ap.add_argument("--nsamples", type=int, default=32)
    ap.add_argument("--seqlen", type=int, default=128)
    ap.add_argument("--iters", type=int, default=50, help="SignRound iterations")
    ap.add_argument("--awq-grid", type=int, default=20,
                    help="AWQ scale grid points (each costs a block forward per sample)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--qdq-only", action="store_true",
                    help="gptq: only rebuild gptq-qdq/ from an existing gptq-export/")
    args = ap.parse_args()
    import faulthandler
    import sys

    import torch

    faulthandler.dump_traceback_later(180, repeat=True, file=sys.stderr)  # where a slow step is

    torch.set_num_threads(args.threads)
    if args.qdq_only:
        print(gptq_qdq(args.out / "gptq-export", args.out / "gptq-qdq"))
        return
    args.out.mkdir(parents=True, exist_ok=True)
    texts = calibration(args.datasets, args.nsamples, args.seqlen)
    start = time.perf_counter()
    model, tok = load(args.gguf.expanduser())
    loaded = time.perf_counter() - start
    if args.method == "gptq":
        got = llmcompressor_gptq(model, tok, texts, args.out, args.seqlen)
    else:
        got = auto_round(args.method, model, tok, texts, args.out, args.seqlen, args.iters,
                         args.awq_grid)
    from importlib.metadata import version

    tools = ("llmcompressor", "compressed-tensors") if args.method == "gptq" else ("auto-round",)
    got.update(method=args.method, source=str(args.gguf), calibration_texts=len(texts),
               awq_grid=args.awq_grid if args.method == "awq" else None,
               calibration_from="fit split of approval, tools, memory, ranking (packed)",
               seqlen=args.seqlen, load_seconds=round(loaded, 1),
               quantize_seconds=round(time.perf_counter() - start - loaded, 1),
               versions={n: version(n) for n in (*tools, "torch", "transformers")})
    (args.out / f"{args.method}.json").write_text(json.dumps(got, indent=1), encoding="utf-8")
    print(json.dumps(got, indent=1))


if __name__ == "__main__":
    main()
