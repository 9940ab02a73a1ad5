"""Small pieces every tool module uses."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict


class StrictParams(BaseModel):
    """Base of every tool's ``Params``: unknown argument names are rejected, not ignored."""

    model_config = ConfigDict(extra="forbid")


def jsonable(record: BaseModel) -> dict[str, Any]:
    """A record as plain JSON types, with field aliases (an e-mail's sender is ``from``)."""
    return record.model_dump(mode="json", by_alias=True)


def as_list(value: Any) -> Any:
    """Accept one name as a string as well as a list ("a@x, b@y" splits on commas)."""
    if isinstance(value, str):
        return [v.strip() for v in value.split(",") if v.strip()]
    return value
