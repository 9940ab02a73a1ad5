"""A fifth micro-task, declared in one module: is this message a greeting?"""

from collections.abc import Sequence
from pathlib import Path

from slmbench.microtasks.baselines import Baseline
from slmbench.microtasks.datasets.records import Item
from slmbench.microtasks.spec import MicroTask


class GreetingItem(Item):
    text: str
    label: str  # "greeting" or "other"


def text_of(item: Item) -> str:
    assert isinstance(item, GreetingItem)
    return item.text


def opening_words(fit: Sequence[Item], items: Sequence[Item]) -> Baseline:
    """The non-LLM baseline: a greeting starts with "hello" or "good morning"."""
    greets = {i.id: text_of(i).lower().startswith(("hello", "good morning")) for i in items}
    return Baseline(name="rules", task="greeting", rankings={
        k: ["greeting", "other"] if yes else ["other", "greeting"] for k, yes in greets.items()})


TASK = MicroTask(
    name="greeting", item_type=GreetingItem,
    prompts=Path(__file__).with_name("greeting.yaml"),
    fields=lambda item: {"text": text_of(item)},
    metrics=("accuracy",), positive="greeting", baseline=opening_words)
