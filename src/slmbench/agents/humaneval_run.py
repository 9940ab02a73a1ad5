"""``slmbench humaneval``'s workflow: one model's direct pass@1 over the pack, resumable.

:func:`run_humaneval` loads the problems and the model, runs what the run directory's store
does not hold yet (:func:`slmbench.agents.humaneval.run`) and summarizes the store; the model
is closed whatever happens, an error or Ctrl-C included. The CLI only prints.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from slmbench.agents import humaneval
from slmbench.agents.store import RunStore
from slmbench.models.base import Model

__all__ = ["run_humaneval"]


def run_humaneval(model_spec: str, *, limit: int | None = None, run_dir: Path | None = None,
                  max_tokens: int = humaneval.MAX_TOKENS,
                  on_start: Callable[[int, int, Path], None] | None = None,
                  on_result: Callable[[humaneval.ProblemResult], None] | None = None,
                  loader: Callable[[str], Model] | None = None) -> humaneval.Summary:
    """Run ``model_spec`` on the first ``limit`` problems (all: None) into ``run_dir``
    (default :func:`~slmbench.agents.humaneval.default_run_dir`) and return its summary.
    ``on_start(stored, total, run_dir)`` is told how many problems were already stored
    before any is run; ``on_result`` each result as it is stored; ``loader`` builds the model
    (default :func:`slmbench.models.factory.load_model`)."""
    if loader is None:
        from slmbench.models.factory import load_model as loader
    problems = humaneval.load_problems(limit)
    where = run_dir or humaneval.default_run_dir(model_spec)
    model = loader(model_spec)
    try:
        with RunStore(where) as store:
            todo = humaneval.pending(store, model.spec, problems)
            if on_start is not None:
                on_start(len(problems) - todo, len(problems), where)
            humaneval.run(model, problems, store, max_tokens=max_tokens, on_result=on_result,
                          source=humaneval.source_provenance())
            return humaneval.summarize(store, model.spec)
    finally:
        model.close()
