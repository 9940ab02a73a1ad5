"""Small pieces every tool module uses."""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict


class StrictParams(BaseModel):
    """Base of every tool's ``Params``: unknown argument names are rejected, not ignored."""

    model_config = ConfigDict(extra="forbid")


class WorldTool:
    """Base of every world tool. A tool class declares its name as a class keyword,
    ``class FactLookup(WorldTool, name="fact_lookup")``, and its description (what the model
    reads) as its docstring, white space folded to single spaces; it has a ``Params`` model and
    a ``run(world, params)``, as the :class:`~slmbench.agents.tools.base.Tool` protocol says."""

    name: ClassVar[str]
    description: ClassVar[str]

    def __init_subclass__(cls, *, name: str, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if not cls.__doc__:
            raise TypeError(f"tool {name!r} has no docstring, its description (python -OO "
                            "drops docstrings)")
        cls.name = name
        cls.description = " ".join(cls.__doc__.split())


def jsonable(record: BaseModel) -> dict[str, Any]:
    """A record as plain JSON types, with field aliases (an e-mail's sender is ``from``)."""
    return record.model_dump(mode="json", by_alias=True)


def as_list(value: Any) -> Any:
    """Accept one name as a string as well as a list ("a@x, b@y" splits on commas)."""
    if isinstance(value, str):
        return [v.strip() for v in value.split(",") if v.strip()]
    return value
