"""The built-in ``plain`` template for base models, rendered the way llama.cpp renders it."""

# ruff: noqa: E402  (imports that need an extra come after its importorskip)
from __future__ import annotations

from extras import need

chat_format = need("llama_cpp.llama_chat_format", "embedded")

from slmbench.models.base import BUILTIN_TEMPLATES, TEMPLATE_DIR

TURNS = [
    {"role": "system", "content": "Answer in one word."},
    {"role": "user", "content": "Capital of France?"},
    {"role": "assistant", "content": "Paris"},
    {"role": "user", "content": "And of Spain?"},
]


def render(messages: list[dict[str, str]], *, add_generation_prompt: bool) -> str:
    template = (TEMPLATE_DIR / "plain.jinja").read_text(encoding="utf-8")
    formatter = chat_format.Jinja2ChatFormatter(
        template=template, eos_token="<eos>", bos_token="<bos>",
        add_generation_prompt=add_generation_prompt)
    return formatter(messages=messages).prompt


def test_every_builtin_template_ships_with_the_package() -> None:
    assert all((TEMPLATE_DIR / f"{name}.jinja").is_file() for name in BUILTIN_TEMPLATES)


def test_turns_are_labelled_and_the_reply_starts_a_line() -> None:
    assert render(TURNS, add_generation_prompt=True) == (
        "<bos>Answer in one word.\n\nUser:\nCapital of France?\n\nAssistant:\nParis\n\n"
        "User:\nAnd of Spain?\n\nAssistant:\n")


def test_a_shorter_conversation_renders_as_a_prefix_of_a_longer_one() -> None:
    # generate's KV-cache chunks rely on each leading message rendering as a prefix.
    whole = render(TURNS, add_generation_prompt=True)
    for i in range(1, len(TURNS)):
        assert whole.startswith(render(TURNS[:i], add_generation_prompt=False))
