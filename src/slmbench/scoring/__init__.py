"""Scorers: turn a final answer (and the world after the trial) into a Score."""

from slmbench.scoring.base import Score
from slmbench.scoring.refusal import RefusalVerdict, classify, is_refusal
from slmbench.scoring.scorers import score

__all__ = ["RefusalVerdict", "Score", "classify", "is_refusal", "score"]
