"""Part B, micro-task eligibility: can a small model take over one frequent small decision?

``datasets`` builds the items from pinned packages, ``prompts`` holds the frozen prompts,
``readout`` reads a model's answer, ``baselines`` and ``eligibility`` set τ and the rule,
``matrix`` runs a grid, ``store`` keeps the readings, ``diagnostics`` explains the verdicts.
This package re-exports nothing; see ``RULES.md`` beside this file.
"""

__all__ = ["baselines", "datasets", "diagnostics", "eligibility", "matrix", "prompts", "readout",
           "store"]
