"""Part B, micro-task eligibility: can a small model take over one frequent small decision?

``tasks`` is the registry of micro-tasks, each one module declaring a ``spec.MicroTask``
(``taskfile`` makes one of a user's YAML file);
``datasets`` builds the items from pinned packages, ``prompts`` holds the frozen prompts,
``readout`` reads a model's answer, ``store`` keeps the readings, ``samples`` picks the
items a run reads, ``session`` is the one read loop, ``baselines`` and ``eligibility`` set τ
and the rule, ``matrix`` runs a grid, ``diagnostics`` explains the verdicts, ``recommend``
says what to deploy per task (``demo`` is the demo's slice of it), ``stored`` rebuilds
matrices from a store alone, and ``job`` is the one entry of a reading run (check, read
through the store, write its report and page). Below the CLI and the study every function is
handed the ``MicroTask`` objects, never a name to look up. This package re-exports nothing;
see ``RULES.md`` beside this file.
"""

__all__ = ["baselines", "datasets", "demo", "diagnostics", "eligibility", "job", "matrix",
           "prompts", "readout", "recommend", "samples", "session", "spec", "store", "stored",
           "taskfile", "tasks"]
