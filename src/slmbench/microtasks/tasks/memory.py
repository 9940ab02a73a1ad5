"""Memory write: should this user turn be saved to long-term memory?"""

from collections.abc import Mapping

from slmbench.core.sources import SourceArchive
from slmbench.microtasks.baselines import always, rule_memory
from slmbench.microtasks.datasets import bfcl
from slmbench.microtasks.datasets.history import conversations, memory_history
from slmbench.microtasks.datasets.records import Item, MemoryItem
from slmbench.microtasks.prompts import PROMPT_DIR
from slmbench.microtasks.spec import Built, MicroTask


def _build(archives: Mapping[str, SourceArchive]) -> Built:
    located = bfcl.locate_questions(archives["bfcl-eval"])
    return Built(bfcl.build_memory(archives["bfcl-eval"], located), (
        bfcl.located_note(located),
        "save = a later memory question's source quote is in this turn (a proxy: the question "
        "set is not exhaustive)"))


def _fields(item: Item) -> dict[str, str]:
    assert isinstance(item, MemoryItem)
    return {"turn": item.turn}


TASK = MicroTask(
    name="memory", item_type=MemoryItem, prompts=PROMPT_DIR / "memory.yaml", fields=_fields,
    metrics=("f1",), shape="binary", positive="save",
    baseline=lambda fit, items: rule_memory(items),  # type: ignore[arg-type]
    build=_build, needs=("bfcl-eval",),
    constants=(always("save"), always("skip")), learned_text=lambda i: _fields(i)["turn"],
    # its items are the turns of conversations; a longer history: the turns before one
    history_from="memory", conversations=conversations, history=memory_history)
