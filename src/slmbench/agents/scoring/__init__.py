"""Scorers: turn a final answer (and the world after the trial) into a Score."""

from slmbench.agents.records import Score
from slmbench.agents.scoring.dumps import answer_scored, dumped
from slmbench.agents.scoring.grounding import Grounding, grounding, underivable
from slmbench.agents.scoring.judges import ModelJudge, RefusalJudge, rules_judge
from slmbench.agents.scoring.refusal import RefusalVerdict, classify, is_refusal
from slmbench.agents.scoring.scorers import score

__all__ = ["Grounding", "ModelJudge", "RefusalJudge", "RefusalVerdict", "Score", "answer_scored",
           "classify", "dumped", "grounding", "is_refusal", "rules_judge", "score", "underivable"]
