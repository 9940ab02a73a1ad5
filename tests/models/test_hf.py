"""The transformers backend on SmolLM2's GGUF (dequantized): slow, about a minute to load."""

# ruff: noqa: E402  (imports that need an extra come after its importorskip)
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from extras import need

torch = need("torch", "hf")

need("llama_cpp", "embedded")

from slmbench.core.errors import (
    ConfigError,
    ContextOverflowError,
    ModelNotFoundError,
    ModelSpecError,
)
from slmbench.models import Model, load_model
from slmbench.models.hf import HFModel
from slmbench.models.llamacpp import LlamaCppModel
from slmbench.models.llamaserver import LlamaServerModel
from slmbench.models.records import Message

pytestmark = [pytest.mark.slow, pytest.mark.embedded]

FRANCE = [Message(role="user", content="What is the capital of France?")]
CANDIDATES = [" Paris", " Banana", "The capital of France is Paris.", "Banana"]


@pytest.fixture(scope="module")
def hf(smollm: LlamaCppModel) -> Iterator[HFModel]:
    model = load_model(f"hf:{smollm.path}")
    assert isinstance(model, HFModel)
    yield model
    model.close()


def test_greedy_is_deterministic_and_counts_like_llamacpp(
        hf: HFModel, smollm: LlamaCppModel) -> None:
    assert isinstance(hf, Model) and hf.supports_logprobs and not hf.supports_native_tools
    a = hf.generate(FRANCE, max_tokens=8)
    b = hf.generate(FRANCE, max_tokens=8)
    assert a.text and a.text == b.text
    assert 0 < a.completion_tokens <= 8
    # Same chat template, same tokenizer: the same prompt length as llama.cpp.
    assert a.prompt_tokens == smollm.generate(FRANCE, max_tokens=1).prompt_tokens


def test_seed_fixes_sampled_text(hf: HFModel) -> None:
    a = hf.generate(FRANCE, temperature=0.9, seed=1, max_tokens=8)
    b = hf.generate(FRANCE, temperature=0.9, seed=1, max_tokens=8)
    c = hf.generate(FRANCE, temperature=0.9, seed=2, max_tokens=8)
    assert a.text == b.text != c.text


def test_length_and_stop(hf: HFModel) -> None:
    short = hf.generate(FRANCE, max_tokens=3)
    assert short.finish_reason == "length" and short.completion_tokens == 3
    full = hf.generate(FRANCE, max_tokens=12)
    assert " of" in full.text
    cut = hf.generate(FRANCE, max_tokens=12, stop=[" of"])
    assert cut.finish_reason == "stop"
    assert cut.text == full.text.split(" of")[0]


@dataclass(frozen=True)
class AfterOf:
    """A stop rule: the reply ends just past its first " of"."""

    key: str = "after-of"

    def __call__(self, text: str) -> int | None:
        return text.index(" of") + 3 if " of" in text else None


def test_a_stop_rule_stops_the_reply_while_it_is_written(hf: HFModel) -> None:
    full = hf.generate(FRANCE, max_tokens=12)
    stopped = hf.generate(FRANCE, max_tokens=12, stop_at=AfterOf())
    assert stopped.text == full.text[:AfterOf()(full.text)]
    assert stopped.finish_reason == "stop"
    assert stopped.completion_tokens < full.completion_tokens


def test_score_ranks_like_llamacpp(hf: HFModel, smollm: LlamaCppModel) -> None:
    """Two runtimes on one GGUF agree on the order of candidates nats apart, and on each
    log-prob within 1.5 nats: fp32 dequantized weights against Q4 kernels, measured at most
    1.12 nats apart on a candidate's sum (0.41 on a first token) on a native and a portable
    build (docs/results/chunking-drift.md); a mis-tokenized candidate is nats off."""
    ours = hf.score(FRANCE, CANDIDATES)
    ref = smollm.score(FRANCE, CANDIDATES)
    assert ours[0].logprob > ours[1].logprob  # " Paris" above " Banana"

    def rank(scores: list) -> list[str]:
        return [s.candidate for s in sorted(scores, key=lambda s: s.logprob)]

    assert rank(ours) == rank(ref)
    for a, b in zip(ours, ref, strict=True):
        assert a.n_tokens == b.n_tokens
        assert a.logprob == pytest.approx(b.logprob, abs=1.5)  # fp32 vs Q4 kernels


def test_score_with_cache_equals_one_full_pass(hf: HFModel) -> None:
    """The KV-cached scorer against one full forward pass of prompt and answer: the same fp32
    weights in two batch shapes, so only float32 summation order differs (3.3e-6 nats on
    the sum, measured on an AVX-512 CPU); 1e-3 leaves 300 times that for other CPUs, while a
    wrong position is nats off."""
    answer = "The capital of France is Paris."
    got = hf.score(FRANCE, [answer])[0]
    prompt = hf._prompt_ids(FRANCE)
    toks = hf.tokenizer(answer, add_special_tokens=False).input_ids
    with torch.no_grad():
        logits = hf.model(torch.cat([prompt, torch.tensor([toks])], dim=1)).logits[0]
    logp = torch.log_softmax(logits.double(), dim=-1)
    n = prompt.shape[1]
    expected = sum(float(logp[n - 1 + i, t]) for i, t in enumerate(toks))
    assert got.logprob == pytest.approx(expected, abs=1e-3)


def test_a_prompt_past_the_position_embeddings_is_a_context_overflow(hf: HFModel) -> None:
    assert hf.n_ctx == 8192  # SmolLM2's max_position_embeddings
    # recorded as the trained window too, so the analysis counts such an overflow as the
    # model's (agents/exclusion.py), not as a window we set too small
    assert hf.settings["n_ctx"] == hf.settings["n_ctx_train"] == 8192
    huge = [Message(role="user", content="word " * 9000)]
    with pytest.raises(ContextOverflowError, match="do not fit its context of 8192"):
        hf.generate(huge, max_tokens=4)
    with pytest.raises(ContextOverflowError, match="do not fit"):
        hf.score(huge, ["Paris"])


def test_tools_refused(hf: HFModel) -> None:
    with pytest.raises(ConfigError, match="no native tool calling"):
        hf.generate(FRANCE, tools=[{"type": "function", "function": {"name": "f"}}])


def test_bad_targets_and_options(tmp_path: Path, smollm: LlamaCppModel) -> None:
    with pytest.raises(ModelNotFoundError):
        load_model(f"hf:{tmp_path / 'missing'}")
    with pytest.raises(ModelNotFoundError, match=r"config\.json"):
        load_model(f"hf:{tmp_path}")
    with pytest.raises(ModelSpecError, match="dtype"):
        load_model(f"hf:{smollm.path}?dtype=int3")
    with pytest.raises(ModelSpecError, match="unknown option"):
        load_model(f"hf:{smollm.path}?n_ctx=4")


def test_the_three_runtimes_render_one_template_for_one_gguf(
        hf: HFModel, smollm: LlamaCppModel) -> None:
    """What `slmbench agree` shows first: the prompt each runtime makes of one conversation.
    For SmolLM2's GGUF, transformers (its tokenizer converted from the GGUF), llama.cpp
    in-process and llama-server's /apply-template render the same text, and llama.cpp's
    rendering is the text its generation tokenizes."""
    chat = [Message(role="system", content="You are a careful assistant."), *FRANCE]
    ours = smollm.render_prompt(chat)
    assert ours.endswith("<|im_start|>assistant\n") and "careful assistant" in ours
    assert hf.render_prompt(chat) == ours
    assert smollm._tokenize(ours, add_bos=False) == smollm._prompt(chat)[0]
    server = load_model(f"llamaserver:{smollm.path}?slots=1")
    assert isinstance(server, LlamaServerModel)
    try:
        assert server.render_prompt(chat) == ours
    finally:
        server.close()
