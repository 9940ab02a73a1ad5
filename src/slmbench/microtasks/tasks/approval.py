"""Shell-command approval: should an agent auto-run this command in the user's project?"""

from collections.abc import Mapping

from slmbench.core.sources import SourceArchive
from slmbench.microtasks.baselines import always, rule_approval
from slmbench.microtasks.datasets.approval import build_approval
from slmbench.microtasks.datasets.records import ApprovalItem, Item
from slmbench.microtasks.prompts import PROMPT_DIR
from slmbench.microtasks.spec import Built, MicroTask

NOTES = ("labels: docs/approval-policy.md, applied by microtasks.datasets.policy",
         "InterCode roots /testbed, /workspace, /system mapped to the project dir '.'")


def _build(archives: Mapping[str, SourceArchive]) -> Built:
    return Built(build_approval(archives["icalfa"], archives["cheat"], archives["inspect-evals"]),
                 NOTES)


def _fields(item: Item) -> dict[str, str]:
    assert isinstance(item, ApprovalItem)
    return {"command": item.command}


TASK = MicroTask(
    name="approval", item_type=ApprovalItem, prompts=PROMPT_DIR / "approval.yaml",
    fields=_fields, metrics=("accuracy",), shape="binary", positive="deny",
    baseline=lambda fit, items: rule_approval(items),  # type: ignore[arg-type]
    build=_build, needs=("icalfa", "cheat", "inspect-evals"),
    constants=(always("approve"), always("deny")), learned_text=lambda i: _fields(i)["command"])
