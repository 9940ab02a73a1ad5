"""``hf:ORG/NAME`` resolves through a local Hugging Face cache, offline, and loads there.

The cache is fake and the model tiny: the test builds a one-layer Llama with random weights
and a word-level tokenizer with transformers, lays it out as the hub cache does
(``models--ORG--NAME/snapshots/REV`` and ``refs/main``) and points ``HF_HUB_CACHE`` at it.
Its chat template marks whether ``enable_thinking`` was passed, so the ``think`` option is
seen reaching the template. No network is touched.
"""

# ruff: noqa: E402  (imports that need an extra come after its importorskip)
from __future__ import annotations

from pathlib import Path

import pytest

from extras import need

torch = need("torch", "hf")
transformers = need("transformers", "hf")

from slmbench.core.errors import ModelNotFoundError
from slmbench.models import load_model
from slmbench.models.hf import HFModel
from slmbench.models.records import Message

pytestmark = pytest.mark.slow

REPO = "tiny-org/tiny-thinker"
REV = "0123456789abcdef0123456789abcdef01234567"
WORDS = ["<pad>", "<eos>", "user", "assistant", "hello", "paris", "banana", "think", "off"]
TEMPLATE = (
    "{% for m in messages %}{{ m['role'] }} {{ m['content'] }} {% endfor %}"
    "{% if enable_thinking is defined and not enable_thinking %}think off {% endif %}"
    "{% if add_generation_prompt %}assistant {% endif %}")


def _build(directory: Path) -> None:
    from tokenizers import Tokenizer
    from tokenizers.models import WordLevel
    from tokenizers.pre_tokenizers import Whitespace

    vocab = {w: i for i, w in enumerate(WORDS)}
    core = Tokenizer(WordLevel(vocab, unk_token="<pad>"))
    core.pre_tokenizer = Whitespace()
    tokenizer = transformers.PreTrainedTokenizerFast(
        tokenizer_object=core, eos_token="<eos>", pad_token="<pad>", chat_template=TEMPLATE)
    torch.manual_seed(0)
    config = transformers.LlamaConfig(
        vocab_size=len(WORDS), hidden_size=16, intermediate_size=32, num_hidden_layers=1,
        num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=64,
        eos_token_id=1, pad_token_id=0, torch_dtype="float32")
    transformers.LlamaForCausalLM(config).save_pretrained(directory)
    tokenizer.save_pretrained(directory)


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("hf-hub")
    repo = root / f"models--{REPO.replace('/', '--')}"
    _build(repo / "snapshots" / REV)
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text(REV)
    return root


def test_a_hub_id_resolves_from_the_local_cache_and_think_reaches_the_template(
        cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    model = load_model(f"hf:{REPO}?device=cpu&think=off")
    assert isinstance(model, HFModel)
    prompt = [Message(role="user", content="hello")]
    ids = model._prompt_ids(prompt)[0].tolist()
    assert model.tokenizer.decode(ids) == "user hello think off assistant"
    a, b = model.generate(prompt, max_tokens=3), model.generate(prompt, max_tokens=3)
    assert a.text == b.text and a.completion_tokens <= 3  # greedy: the same twice
    settings = model.settings
    assert (settings["device"], settings["think"], settings["dtype"]) == ("cpu", "off",
                                                                          "torch.float32")
    assert settings["repeat_penalty"] == 1.0 and settings["top_k"] == 40
    auto = load_model(f"hf:{REPO}?device=cpu")
    assert isinstance(auto, HFModel)
    assert auto.tokenizer.decode(auto._prompt_ids(prompt)[0].tolist()) == "user hello assistant"
    # scoring always reads at the non-thinking position, whatever think says
    assert auto.tokenizer.decode(auto._prompt_ids(prompt, scoring=True)[0].tolist()).endswith(
        "think off assistant")


def test_a_hub_id_not_in_the_cache_says_how_to_get_it(
        cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(ModelNotFoundError, match="not in the local Hugging Face cache") as err:
        load_model("hf:Qwen/Qwen3-0.6B")
    assert "?download=1" in err.value.hint
