"""Hugging Face transformers models (the ``hf:`` backend; ``pip install 'slmbench[hf]'``).

Target: a local model directory (``config.json`` + weights), a ``.gguf`` file
(transformers dequantizes it; llama, qwen2 and gemma3 architectures load), a registry
name pulled with ``slmbench pull``, or a hub id (``hf:Qwen/Qwen3-0.6B``) found in the local
Hugging Face cache (``huggingface_hub.snapshot_download(..., local_files_only=True)``: no
network). A hub download is the user's choice: ``?download=1``. Options:

* ``dtype`` - ``auto`` (default: the checkpoint's own, e.g. BF16 for Qwen3; fp32 for a
  dequantized GGUF), ``fp32``, ``fp16`` or ``bf16``;
* ``device`` - ``auto`` (default: CUDA when torch sees a GPU, else the CPU), ``cpu`` or
  ``cuda``;
* ``gguf_file`` - the GGUF file inside a target directory;
* ``threads`` - torch CPU threads (default 2; this sets torch's global pool);
* ``think`` / ``think_tokens`` - ``off`` renders the chat template with
  ``enable_thinking=False`` (Qwen3's switch), ``on`` with True and a larger token cap;
* ``download`` - ``1`` lets a hub id be downloaded when it is not in the cache.

The prompt is the tokenizer's own chat template. Temperature 0 decodes
greedily; otherwise ``torch.manual_seed(seed)`` fixes the sample with the pinned settings
(``models.base.PINNED``: top-k 40, top-p 0.95, min-p 0.05, no repetition penalty), as the
llamacpp backend. ``score`` reads real log-probabilities
from the logits: the prompt is run once and its KV cache reused per candidate.
No native tool calling: use the text (ReAct) scaffold.
"""

from __future__ import annotations

import copy
import inspect
import re
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer, StoppingCriteria, StoppingCriteriaList

from slmbench.core.errors import ConfigError, ModelNotFoundError, ModelSpecError
from slmbench.models import base
from slmbench.models.catalog import hf_cache, resolve_gguf
from slmbench.models.records import CandidateScore, Completion, Message, as_messages
from slmbench.models.spec import ModelSpec
from slmbench.models.thinking import THINK_OPTIONS, Thinking

DTYPES: dict[str, torch.dtype | str] = {"auto": "auto", "fp32": torch.float32,
                                        "fp16": torch.float16, "bf16": torch.bfloat16}
DEVICES = ("auto", "cpu", "cuda")
OPTIONS = ("dtype", "device", "gguf_file", "threads", "download", *THINK_OPTIONS)
HUB_ID = re.compile(r"^[\w.-]+/[\w.-]+$")


def hub_snapshot(repo_id: str, *, download: bool = False) -> Path:
    """The local snapshot of hub repository ``repo_id`` (downloaded only if ``download``)."""
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import LocalEntryNotFoundError

    try:
        return Path(snapshot_download(repo_id, cache_dir=hf_cache(),
                                      local_files_only=not download))
    except LocalEntryNotFoundError as exc:
        raise ModelNotFoundError(
            f"{repo_id} is not in the local Hugging Face cache (HF_HUB_CACHE / HF_HOME)",
            f"download it once (`hf download {repo_id}`), or add ?download=1 to the spec"
        ) from exc


def resolve(target: str, gguf_file: str | None, *,
            download: bool = False) -> tuple[Path, str | None]:
    """The directory to load from and the GGUF file inside it, if any."""
    path = Path(target).expanduser()
    if "/" not in target and not path.exists() and not target.endswith(".gguf"):
        path = resolve_gguf(target)  # a registry name
    elif not path.exists() and HUB_ID.match(target):
        path = hub_snapshot(target, download=download)
    if path.is_file():
        return path.parent, path.name
    if not path.is_dir():
        raise ModelNotFoundError(f"no model directory or file at {path}",
                                 "give a local model directory or a .gguf file")
    if gguf_file and not (path / gguf_file).is_file():
        raise ModelNotFoundError(f"{path} has no {gguf_file}", "check the gguf_file option")
    if not gguf_file and not (path / "config.json").is_file():
        raise ModelNotFoundError(f"{path} has no config.json",
                                 "give a transformers model directory, or ?gguf_file=NAME.gguf")
    return path, gguf_file


class HFModel(base.Backend):
    """A causal LM loaded by transformers (on the GPU or the CPU)."""

    supports_logprobs = True

    def __init__(self, directory: Path, *, gguf_file: str | None = None, dtype: str = "auto",
                 device: str = "auto", threads: int = 2, spec: str | None = None,
                 thinking: Thinking | None = None) -> None:
        if dtype not in DTYPES:
            raise ModelSpecError(f"dtype {dtype!r} is not one of {', '.join(DTYPES)}",
                                 "write ?dtype=auto, fp32, fp16 or bf16")
        if device not in DEVICES:
            raise ModelSpecError(f"device {device!r} is not one of {', '.join(DEVICES)}",
                                 "write ?device=auto, cpu or cuda")
        if device == "cuda" and not torch.cuda.is_available():
            raise ConfigError("?device=cuda, but torch sees no CUDA device",
                              "install a CUDA build of torch, or use ?device=cpu")
        self.device = ("cuda" if torch.cuda.is_available() else "cpu") if device == "auto" \
            else device
        super().__init__(spec or f"hf:{directory / (gguf_file or '')}", thinking)
        torch.set_num_threads(threads)
        # a GGUF is dequantized: it has no checkpoint dtype for "auto" to keep, so fp32
        torch_dtype = torch.float32 if gguf_file and dtype == "auto" else DTYPES[dtype]
        kwargs: dict[str, Any] = {"local_files_only": True}
        if gguf_file:
            kwargs["gguf_file"] = gguf_file
        try:
            self.tokenizer = AutoTokenizer.from_pretrained(directory, **kwargs)
            self.model = AutoModelForCausalLM.from_pretrained(
                directory, dtype=torch_dtype, **kwargs).to(self.device).eval()
        except (OSError, ValueError) as exc:
            raise ConfigError(f"transformers could not load {directory}: "
                              f"{str(exc).splitlines()[0]}",
                              "check the files; GGUF loads for llama, qwen2, gemma3") from exc
        if not self.tokenizer.chat_template:
            raise ModelSpecError(f"{self.spec} has no chat template in its tokenizer",
                                 "use an instruction-tuned model")
        # transformers renamed the KV-cache argument from past_key_values to cache in 5.x.
        params = inspect.signature(self.model.forward).parameters
        self._cache_arg = "cache" if "cache" in params else "past_key_values"
        self._lock = threading.Lock()

    @classmethod
    def from_spec(cls, spec: ModelSpec) -> HFModel:
        spec.check_options(OPTIONS)
        threads = spec.int_option("threads", 2)
        download = spec.option("download", "0")
        if download not in ("0", "1"):
            raise ModelSpecError(f"option download={download!r} in {spec.raw!r} is not 0 or 1",
                                 "write ?download=1 to allow a hub download")
        directory, gguf_file = resolve(spec.target, spec.option("gguf_file"),
                                       download=download == "1")
        return cls(directory, gguf_file=gguf_file, dtype=spec.option("dtype", "auto") or "",
                   device=spec.option("device", "auto") or "", threads=threads, spec=spec.raw,
                   thinking=Thinking.from_spec(spec))

    @classmethod
    def preflight(cls, spec: ModelSpec, wait_ready_s: float | None = None, *,
                  on_wait: Callable[[str], None] | None = None) -> None:
        """Raise what loading would, without loading: a bad option, or a model that is not
        here (no directory, GGUF or config.json; a hub id not in the cache). With
        ``?download=1`` a hub id is left for loading to fetch."""
        spec.check_options(OPTIONS)
        spec.int_option("threads", 2)
        Thinking.from_spec(spec)
        for key, known in (("dtype", tuple(DTYPES)), ("device", DEVICES),
                           ("download", ("0", "1"))):
            if (value := spec.option(key, known[0])) not in known:
                raise ModelSpecError(f"option {key}={value!r} in {spec.raw!r} is not one of "
                                     f"{', '.join(known)}", f"write ?{key}={known[0]}")
        if not (spec.option("download") == "1" and HUB_ID.match(spec.target)):
            resolve(spec.target, spec.option("gguf_file"))

    @property
    def settings(self) -> dict[str, Any]:
        """What every generation uses (recorded in each trial)."""
        return {"backend": "hf", "device": self.device, "dtype": str(self.model.dtype),
                # the window is the model's own: an overflow here is the model's failure
                "n_ctx": self.n_ctx, "n_ctx_train": self.n_ctx, **base.PINNED.settings(),
                **self.thinking.settings(),
                "stops": "the model's end-of-turn tokens, then the caller's",
                "not_honoured": []}

    def render_prompt(self, messages: Sequence[Message], *, scoring: bool = False) -> str:
        """The prompt text a generation of ``messages`` sends: the tokenizer's chat template
        applied (a scored prompt without thinking, see score)."""
        dicts = [{"role": m.role, "content": m.content} for m in messages]
        return str(self.tokenizer.apply_chat_template(
            dicts, add_generation_prompt=True, tokenize=False,
            **self.thinking.template_kwargs(scoring=scoring)))

    def _prompt_ids(self, messages: Sequence[Message], *,
                    scoring: bool = False) -> torch.Tensor:
        """The prompt's token ids; a scored prompt is rendered without thinking (see score)."""
        text = self.render_prompt(messages, scoring=scoring)
        ids: torch.Tensor = self.tokenizer(text, add_special_tokens=False,
                                           return_tensors="pt").input_ids
        return ids.to(self.device)

    @property
    def n_ctx(self) -> int | None:
        """The longest sequence the model's position embeddings cover (None: unbounded)."""
        n = getattr(self.model.config, "max_position_embeddings", None)
        return int(n) if n else None

    def _check_fits(self, n: int) -> None:
        base.check_fits(self.spec, n, self.n_ctx, "shorten the prompt")

    def _eos_ids(self) -> set[int]:
        eos = self.model.generation_config.eos_token_id
        ids = eos if isinstance(eos, list) else [eos]
        return {int(i) for i in ids if i is not None}

    def _generate(self, request: base.Request) -> Completion:
        stops = request.stop
        sampling: dict[str, Any] = (
            {"do_sample": True, "temperature": request.temperature, "top_k": base.PINNED.top_k,
             "top_p": base.PINNED.top_p, "min_p": base.PINNED.min_p}
            if request.temperature > 0 else {"do_sample": False, "temperature": None,
                                             "top_k": None, "top_p": None, "min_p": None})
        with self._lock:
            start = time.perf_counter()
            ids = self._prompt_ids(request.messages)
            self._check_fits(ids.shape[1] + 1)
            max_new = min(request.max_tokens, (self.n_ctx or 1 << 30) - ids.shape[1])
            torch.manual_seed(request.seed)
            with torch.no_grad():
                out = self.model.generate(
                    ids, attention_mask=torch.ones_like(ids), max_new_tokens=max_new,
                    repetition_penalty=base.PINNED.repeat_penalty, stop_strings=stops or None,
                    tokenizer=self.tokenizer if stops else None,
                    stopping_criteria=self._stopping(request, ids.shape[1]), **sampling)
            wall = time.perf_counter() - start
        new = out[0, ids.shape[1]:].tolist()
        eos = self._eos_ids()
        ended = bool(new) and new[-1] in eos
        if ended:
            new = new[:-1]
        text = self.tokenizer.decode(new, skip_special_tokens=True)
        cut = [text.index(s) for s in stops if s in text]
        finish = "stop" if ended or cut or len(new) < max_new else "length"
        return self._completion(text[: min(cut)] if cut else text, finish=finish, wall=wall,
                                tokens=(ids.shape[1], len(new)))

    def _stopping(self, request: base.Request, n_prompt: int) -> StoppingCriteriaList | None:
        """The stopping criteria for ``request.stop_at`` (None without one)."""
        if request.stop_at is None:
            return None
        return StoppingCriteriaList([_ReplyEnds(request.stop_at, self.tokenizer, n_prompt)])

    def score(
        self,
        messages: Sequence[Message | dict[str, Any]],
        candidates: Sequence[str],
    ) -> list[CandidateScore]:
        """Sum log-prob of each candidate as the assistant's reply (one prompt pass).

        The prompt is rendered with ``enable_thinking=False`` whatever ``think`` says, so a
        thinking template (Qwen3) puts its empty think block first and the candidates are
        read where the answer starts, not where the model would open ``<think>``."""
        cand_ids = [self.tokenizer(c, add_special_tokens=False).input_ids for c in candidates]
        for cand, toks in zip(candidates, cand_ids, strict=True):
            if not toks:
                raise ConfigError(f"candidate {cand!r} has no tokens", "score non-empty candidates")
        results: list[CandidateScore] = []
        with self._lock, torch.no_grad():
            ids = self._prompt_ids(as_messages(messages), scoring=True)
            self._check_fits(ids.shape[1] + max((len(t) for t in cand_ids), default=0))
            prompt = self.model(ids, use_cache=True)
            first = torch.log_softmax(prompt.logits[0, -1].double(), dim=-1)
            for cand, toks in zip(candidates, cand_ids, strict=True):
                lps = [float(first[toks[0]])]
                if len(toks) > 1:
                    cache = copy.deepcopy(getattr(prompt, self._cache_arg))
                    step = self.model(torch.tensor([toks[:-1]], device=self.device),
                                      use_cache=True,
                                      **{self._cache_arg: cache})
                    logp = torch.log_softmax(step.logits[0].double(), dim=-1)
                    lps += [float(logp[i, t]) for i, t in enumerate(toks[1:])]
                results.append(CandidateScore(candidate=cand, logprob=sum(lps),
                                              first_token_logprob=lps[0], n_tokens=len(toks)))
        return results


class _ReplyEnds(StoppingCriteria):
    """Stop when the rule ends the reply so far (the new tokens decoded, as ``generate``
    decodes the reply)."""

    def __init__(self, rule: base.StopRule, tokenizer: Any, n_prompt: int) -> None:
        self.rule, self.tokenizer, self.n_prompt = rule, tokenizer, n_prompt

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor,
                 **kwargs: Any) -> torch.BoolTensor:
        text = self.tokenizer.decode(input_ids[0, self.n_prompt:], skip_special_tokens=True)
        done = self.rule(text) is not None
        return torch.full((input_ids.shape[0],), done, dtype=torch.bool,
                          device=input_ids.device)  # type: ignore[return-value]
