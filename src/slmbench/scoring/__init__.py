"""Scorers: turn a final answer (and the world after the trial) into a Score."""

from slmbench.scoring.base import Score

__all__ = ["Score"]
