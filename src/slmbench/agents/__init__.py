"""Part A, agent reliability: a ReAct agent with ten tools over a seeded world.

``records`` is the bottom layer (Trial, Step, FaultPlan, Score, TrialKey); the subpackages are
``world``, ``tools``, ``tasks``, ``scoring``, ``loop`` and ``runner``, over which ``evaluator``
runs one trial and ``reliability`` / ``analysis`` compute the scores; ``forensics`` says how a
trial failed, ``harness`` fingerprints what shapes a trial, ``comparison`` pairs two runs.
This package re-exports nothing; see ``RULES.md`` beside this file.
"""

__all__ = ["analysis", "comparison", "evaluator", "forensics", "harness", "humaneval", "loop",
           "records", "reliability", "runner", "scoring", "store", "tasks", "tools", "world"]
