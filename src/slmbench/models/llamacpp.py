"""In-process GGUF models through llama-cpp-python (the ``llamacpp:`` backend).

``llamacpp:NAME`` loads a registry model pulled with ``slmbench pull NAME``;
``llamacpp:/path/to/file.gguf`` loads any GGUF file. Options:

* ``n_ctx`` - context window in tokens (default 4096; each trial records it beside the window
  the GGUF says the model was trained for, ``n_ctx_train``: an overflow below that one is the
  setting's, not the model's, ``slmbench.agents.exclusion``);
* ``threads`` - CPU threads (default 2);
* ``chat_format`` - which chat template renders the prompt: a template name
  from the GGUF metadata (``default``, or e.g. ``tool_use``), ``plain`` (built
  in, for base models whose GGUF has no chat template: the system text, then
  ``User:`` / ``Assistant:`` turns, see ``templates/plain.jinja``) or a path to
  a Jinja2 template file. By default the GGUF's own ``tokenizer.chat_template``;
* ``n_gpu_layers`` - layers offloaded to the GPU (-1: all; needs llama-cpp-python built
  with CUDA, see the README's GPU quick start; default none);
* ``think`` / ``think_tokens`` - ``off`` renders the template with ``enable_thinking=False``
  (Qwen3's switch), ``on`` with True and a larger token cap (see ``models.thinking.Thinking``);
* ``chunking`` - how the prompt is batched through llama.cpp (``CHUNKINGS``): ``messages``
  (default: one chunk per message, then the generation prompt, then the last token alone),
  ``prompt`` (everything but the last token in one chunk, then the last token) or ``tokens``
  (one token at a time). The same tokens give log-probs that move with the batching, by up to
  about 0.1 nats on the packaged models and by an amount that depends on the CPU's kernels
  (``docs/servers.md``, "Numerics across batchings and CPUs"); the option exists to measure
  that, and a result is comparable only with one read in the same chunking.

Generation and scoring render the prompt the same way (one Jinja2 template,
tokenized once), so ``score`` measures exactly the prompt ``generate`` sees.
Temperature 0 decodes greedily; any other temperature samples with llama.cpp's
seeded sampler with the pinned settings (``models.base.PINNED``: top-k 40, top-p 0.95,
min-p 0.05, passed explicitly), so a seed fixes the text.

Prompt evaluation dominates an agent's cost on a CPU (a ReAct prompt is a few
thousand tokens; a reply a few dozen), so ``generate`` reuses the KV cache of
the previous call for the messages both prompts share. To keep results
independent of what ran before, a prompt is *always* evaluated in the same
chunks — one per message, then its last token alone — whether a chunk comes
from the cache or is computed now: llama.cpp's numerics depend on how tokens
are batched, so the chunking, not the cache, decides the result. A call
therefore returns the same text fresh or after any other call (tested).
``repeat_penalty`` is 1.0: no hidden penalty distorts the model's choices.

``supports_native_tools`` is False: llama-cpp-python 0.3.36's
``chatml-function-calling`` format is broken (plain replies are grammar-forced
into ``functions.X:`` and tool results are dropped from the prompt), so agents
use the text (ReAct) scaffold with this backend.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

import numpy as np
from scipy.special import log_softmax

from slmbench.core.errors import ConfigError, ModelSpecError
from slmbench.models import base
from slmbench.models.catalog import resolve_target
from slmbench.models.records import CandidateScore, Completion, Message, as_messages
from slmbench.models.spec import ModelSpec, gpu_layers
from slmbench.models.thinking import THINK_OPTIONS, Thinking

OPTIONS = ("n_ctx", "threads", "chat_format", "n_gpu_layers", "chunking", *THINK_OPTIONS)
CHUNKINGS = ("messages", "prompt", "tokens")
CHUNKING_SETTINGS = {"messages": "each message, then the generation prompt",
                     "prompt": "the prompt in one chunk", "tokens": "one token at a time"}


if TYPE_CHECKING:
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter


def _llama_cpp() -> ModuleType:
    """llama-cpp-python, imported on first use: resolving a spec (a missing GGUF, an unpulled
    registry name) needs no extra, and its errors come before a missing-extra error."""
    try:
        import llama_cpp
        import llama_cpp.llama_chat_format
    except ImportError as exc:
        raise ModelSpecError(f"the llamacpp backend cannot load: {exc}",
                             "pip install 'slmbench[embedded]'") from exc
    return llama_cpp


def template_messages(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """Messages as the plain dicts a Hugging Face style chat template expects."""
    out: list[dict[str, Any]] = []
    for m in messages:
        d: dict[str, Any] = {"role": m.role, "content": m.content}
        if m.name:
            d["name"] = m.name
        if m.tool_call_id:
            d["tool_call_id"] = m.tool_call_id
        out.append(d)
    return out


def _check_chunking(chunking: str) -> str:
    """``chunking`` when it is one of ``CHUNKINGS``, else ModelSpecError naming them."""
    if chunking not in CHUNKINGS:
        raise ModelSpecError(f"chunking {chunking!r} is not one of {', '.join(CHUNKINGS)}",
                             "write ?chunking=messages (the default), prompt or tokens")
    return chunking


class LlamaCppModel(base.Backend):
    """A GGUF model run in-process by llama.cpp. One instance is one loaded model."""

    supports_logprobs = True

    def __init__(self, path: Path, *, spec: str | None = None, n_ctx: int = 4096,
                 threads: int = 2, chat_format: str | None = None,
                 n_gpu_layers: int | None = None, thinking: Thinking | None = None,
                 chunking: str = "messages") -> None:
        super().__init__(spec or f"llamacpp:{path}", thinking)
        self.path = path
        self.chunking = _check_chunking(chunking)
        gpu: dict[str, Any] = {} if n_gpu_layers is None else {"n_gpu_layers": n_gpu_layers}
        self.n_gpu_layers = n_gpu_layers
        try:
            self._llm = _llama_cpp().Llama(str(path), n_ctx=n_ctx, n_threads=threads,
                                           n_threads_batch=threads, logits_all=False,
                                           verbose=False, **gpu)
        except ValueError as exc:
            raise ConfigError(f"llama.cpp could not load {path}: {exc}",
                              "is it a complete GGUF file? re-download it") from exc
        self._formatter = self._make_formatter(chat_format)
        self._prefix_formatter = self._make_formatter(chat_format, add_generation_prompt=False)
        self._chunk_ends: list[int] = []  # prompt chunks now in the KV cache (token offsets)
        self.last_reused_tokens = 0  # prompt tokens the last generate took from the cache
        self._n_vocab = self._llm.n_vocab()
        self._logits_ith = _llama_cpp().llama_get_logits_ith  # looked up once, not per token
        self._lock = threading.Lock()

    @classmethod
    def from_spec(cls, spec: ModelSpec) -> LlamaCppModel:
        spec.check_options(OPTIONS)
        return cls(
            resolve_target(spec.target),
            spec=spec.raw,
            n_ctx=spec.int_option("n_ctx", 4096),
            threads=spec.int_option("threads", 2),
            chat_format=spec.option("chat_format"),
            n_gpu_layers=gpu_layers(spec),
            thinking=Thinking.from_spec(spec),
            chunking=spec.option("chunking", "messages") or "messages",
        )

    @classmethod
    def preflight(cls, spec: ModelSpec, wait_ready_s: float | None = None, *,
                  on_wait: Callable[[str], None] | None = None) -> None:
        """Raise what loading would, without loading: a bad option, a GGUF that is not there
        (a missing file, an unknown or unpulled registry name), then a missing extra."""
        spec.check_options(OPTIONS)
        resolve_target(spec.target)
        for key, default in (("n_ctx", 4096), ("threads", 2)):
            spec.int_option(key, default)
        gpu_layers(spec)
        Thinking.from_spec(spec)
        _check_chunking(spec.option("chunking", "messages") or "messages")
        _llama_cpp()

    @property
    def settings(self) -> dict[str, Any]:
        """What every generation uses (recorded in each trial)."""
        return {"backend": "llamacpp", "n_ctx": self._llm.n_ctx(),
                "n_ctx_train": base.trained_context(self._llm.metadata), **base.PINNED.settings(),
                **self.thinking.settings(), "n_gpu_layers": self.n_gpu_layers or 0,
                "stops": "the template's, then the caller's", "not_honoured": [],
                "prompt_chunks": CHUNKING_SETTINGS[self.chunking]}

    def _make_formatter(self, chat_format: str | None, *,
                        add_generation_prompt: bool = True) -> Jinja2ChatFormatter:
        meta = self._llm.metadata
        templates = {k.removeprefix("tokenizer.chat_template.") : v for k, v in meta.items()
                     if k.startswith("tokenizer.chat_template.")}
        if "tokenizer.chat_template" in meta:
            templates["default"] = meta["tokenizer.chat_template"]
        name = (chat_format or "default").removeprefix("chat_template.")
        if name in templates:
            template = templates[name]
        elif name in base.BUILTIN_TEMPLATES:
            template = (base.TEMPLATE_DIR / f"{name}.jinja").read_text(encoding="utf-8")
        elif chat_format and Path(chat_format).expanduser().is_file():
            template = Path(chat_format).expanduser().read_text(encoding="utf-8")
        elif chat_format:
            raise ModelSpecError(
                f"chat_format {chat_format!r} is neither a template in {self.path.name} "
                f"({', '.join(templates) or 'it has none'}), a built-in template "
                f"({', '.join(base.BUILTIN_TEMPLATES)}) nor a template file",
                "name one of these templates or give a Jinja2 template file")
        else:
            raise ModelSpecError(f"{self.path.name} has no chat template in its metadata "
                                 "(a base model?)",
                                 "give one: ?chat_format=plain for slmbench's plain "
                                 "User:/Assistant: template, or ?chat_format=/path/to/file.jinja")
        llm = self._llm
        eos_id, bos_id = llm.token_eos(), llm.token_bos()
        eos = llm._model.token_get_text(eos_id) if eos_id != -1 else ""
        bos = llm._model.token_get_text(bos_id) if bos_id != -1 else ""
        formatter_cls = _llama_cpp().llama_chat_format.Jinja2ChatFormatter
        return formatter_cls(template=template, eos_token=eos, bos_token=bos,
                             add_generation_prompt=add_generation_prompt,
                             stop_token_ids=[eos_id] if eos_id != -1 else None)

    def _prompt(self, messages: Sequence[Message], *,
                scoring: bool = False) -> tuple[list[int], list[str]]:
        """Render and tokenize the prompt; return its tokens and the template's stops.

        A scored prompt is rendered with ``enable_thinking=False`` (see ``score``)."""
        rendered = self._formatter(messages=template_messages(messages),
                                   **self.thinking.template_kwargs(scoring=scoring))
        tokens = self._tokenize(rendered.prompt, add_bos=not rendered.added_special)
        stops = rendered.stop if isinstance(rendered.stop, list) else [rendered.stop or ""]
        return tokens, [s for s in stops if s]

    def render_prompt(self, messages: Sequence[Message]) -> str:
        """The prompt text a generation of ``messages`` sends: the chat template applied, as
        :meth:`_prompt` renders it (before tokenizing)."""
        rendered = self._formatter(messages=template_messages(messages),
                                   **self.thinking.template_kwargs())
        return str(rendered.prompt)

    def _tokenize(self, text: str, *, add_bos: bool) -> list[int]:
        return self._llm.tokenize(text.encode("utf-8"), add_bos=add_bos, special=True)

    def _message_ends(self, messages: Sequence[Message], tokens: list[int], *,
                      scoring: bool = False) -> list[int]:
        """Token offsets in ``tokens`` where each message ends, the last one included.

        Found by rendering ``messages[:i]`` without the generation prompt; stops at
        the first prefix the template does not render as a token prefix of the
        whole prompt (then the rest is one chunk). The last message's end is a
        boundary too, so the next turn of a conversation (this prompt, a reply and
        a new message) finds every message of this one in the cache.
        """
        ends: list[int] = []
        for i in range(1, len(messages) + 1):
            rendered = self._prefix_formatter(
                messages=template_messages(messages[:i]),
                **self.thinking.template_kwargs(scoring=scoring))
            toks = self._tokenize(rendered.prompt, add_bos=not rendered.added_special)
            n = len(toks)
            if n >= len(tokens) - 1 or tokens[:n] != toks:
                break
            if not ends or n > ends[-1]:
                ends.append(n)
        return ends

    def _chunk_points(self, tokens: list[int], messages: Sequence[Message], *,
                      scoring: bool = False) -> list[int]:
        """Where the prompt's chunks end (token offsets), all but the last token, by
        ``chunking``: at each message's end, once, or after every token."""
        last = len(tokens) - 1
        if self.chunking == "tokens":
            return list(range(1, last + 1))
        if self.chunking == "prompt":
            return [last]
        return [*self._message_ends(messages, tokens, scoring=scoring), last]

    def _prefill(self, tokens: list[int], messages: Sequence[Message], *,
                 scoring: bool = False) -> None:
        """Evaluate all prompt tokens but the last, in the chunks ``chunking`` names (by
        default one per message, then the generation prompt's).

        Chunks an earlier call left in the KV cache are kept when the same chunk
        boundaries and tokens lead up to them; the rest are computed now.
        ``create_completion`` then evaluates the last token and samples.
        """
        llm = self._llm
        points = self._chunk_points(tokens, messages, scoring=scoring)
        cached = llm.input_ids[: llm.n_tokens].tolist()
        reuse = 0
        for old, new in zip(self._chunk_ends, points, strict=False):
            if old != new or new > len(cached) or cached[reuse:new] != tokens[reuse:new]:
                break
            reuse = new
        llm.n_tokens = reuse
        self._chunk_ends = [p for p in points if p <= reuse]
        start = reuse
        for end in points:
            if end > start:
                llm.eval(tokens[start:end])
                self._chunk_ends.append(end)
                start = end
        self.last_reused_tokens = reuse

    def _check_fits(self, n: int) -> None:
        base.check_fits(self.spec, n, self._llm.n_ctx(), "raise ?n_ctx= or shorten the prompt")

    def _generate(self, request: base.Request) -> Completion:
        msgs = request.messages
        with self._lock:
            start = time.perf_counter()
            tokens, stops = self._prompt(msgs)
            self._check_fits(len(tokens) + 1)
            self._prefill(tokens, msgs)
            out = self._llm.create_completion(
                tokens, max_tokens=min(request.max_tokens, self._llm.n_ctx() - len(tokens)),
                temperature=max(request.temperature, 0.0), seed=request.seed,
                top_k=base.PINNED.top_k, top_p=base.PINNED.top_p, min_p=base.PINNED.min_p,
                repeat_penalty=base.PINNED.repeat_penalty, stop=[*stops, *request.stop],
                stopping_criteria=self._stopping(request, tokens))
            wall = time.perf_counter() - start
        choice, usage = out["choices"][0], out["usage"]
        return self._completion(
            choice["text"], wall=wall, tokens=(usage["prompt_tokens"], usage["completion_tokens"]),
            finish="length" if choice["finish_reason"] == "length" else "stop")

    def _stopping(self, request: base.Request, prompt: list[int]) -> Any:
        """llama.cpp's stopping criteria for ``request.stop_at`` (None without one): asked
        after each token with the reply so far (an incomplete UTF-8 character left out)."""
        rule = request.stop_at
        if rule is None:
            return None
        n, llm = len(prompt), self._llm

        def ends(ids: np.ndarray, _logits: np.ndarray) -> bool:
            text = llm.detokenize(ids[n:].tolist(), prev_tokens=prompt)
            return rule(text.decode("utf-8", errors="ignore")) is not None

        return _llama_cpp().StoppingCriteriaList([ends])

    def _last_logprobs(self) -> np.ndarray:
        """Log-softmax of the logits after the last evaluated token."""
        ptr = self._logits_ith(self._llm.ctx, -1)
        logits = np.ctypeslib.as_array(ptr, shape=(self._n_vocab,)).astype(np.float64)
        return log_softmax(logits)

    def score(
        self,
        messages: Sequence[Message | dict[str, Any]],
        candidates: Sequence[str],
    ) -> list[CandidateScore]:
        """Sum log-prob of each candidate as the assistant's reply.

        The prompt is evaluated once, in generate's chunks (reusing what the cache already
        holds); each candidate then steps through its own tokens on top of the prompt's KV
        cache, which is rewound between candidates. The prompt is rendered with
        ``enable_thinking=False`` whatever ``think`` says, so a thinking template (Qwen3) puts
        its empty think block first and the candidates are read where the answer starts.
        """
        msgs = as_messages(messages)
        llm = self._llm
        results: list[CandidateScore] = []
        with self._lock:
            prompt, _ = self._prompt(msgs, scoring=True)
            cand_tokens = [llm.tokenize(c.encode("utf-8"), add_bos=False, special=False)
                           for c in candidates]
            for cand, toks in zip(candidates, cand_tokens, strict=True):
                if not toks:
                    raise ConfigError(f"candidate {cand!r} has no tokens",
                                      "score non-empty candidates")
                self._check_fits(len(prompt) + len(toks))
            # The prompt goes through the same chunks as in generate, so the two share the KV
            # cache (a reading's generate after its score evaluates one token) and the same
            # numerics; candidates are written past the prompt and rewound.
            self._prefill(prompt, msgs, scoring=True)
            llm.eval([prompt[-1]])
            first = self._last_logprobs()
            for cand, toks in zip(candidates, cand_tokens, strict=True):
                llm.n_tokens = len(prompt)  # rewind to the end of the prompt
                lps = [float(first[toks[0]])]
                for prev, tok in itertools.pairwise(toks):
                    llm.eval([prev])
                    lps.append(float(self._last_logprobs()[tok]))
                results.append(CandidateScore(candidate=cand, logprob=sum(lps),
                                              first_token_logprob=lps[0], n_tokens=len(toks)))
        return results

    def close(self) -> None:
        with self._lock:
            self._llm.close()
