"""The ``Score`` record every scorer returns."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class Score(BaseModel):
    """A scorer's verdict: a value in [0, 1], a pass flag and a one-line reason."""

    model_config = ConfigDict(frozen=True)

    value: float = Field(ge=0.0, le=1.0)
    passed: bool
    reason: str
