"""The experiment runner: grid, executor, retries, response cache, progress, reports.

``Experiment`` (config.py) says what to run; ``build_plan`` (plan.py) turns it
into the list of trials a run must hold; ``execute`` (executor.py) runs the
ones the run store does not hold yet and writes the reports (report.py).
"""

from slmbench.agents.runner.config import Experiment, load_experiment
from slmbench.agents.runner.executor import RunSummary, execute
from slmbench.agents.runner.plan import Plan, PlannedTrial, build_plan, derive_seed

__all__ = [
    "Experiment",
    "Plan",
    "PlannedTrial",
    "RunSummary",
    "build_plan",
    "derive_seed",
    "execute",
    "load_experiment",
]
