"""What would stop a run before its first trial, checked before any run folder exists: each
model (``check_ready``), the plan (task files, ``--task`` filters, drawn instances only of
shipped tasks) and the sandbox when code tasks are planned."""

from __future__ import annotations

from collections.abc import Callable

from slmbench.agents.runner.config import Experiment
from slmbench.agents.runner.plan import (
    Plan,
    SuiteLoader,
    VariantsFn,
    build_plan,
    default_suite_loader,
    default_variants,
)
from slmbench.core.errors import ConfigError
from slmbench.models.readiness import check_ready


def code_tasks(exp: Experiment, plan: Plan) -> list[str]:
    """Ids of the planned tasks that offer ``code_interpreter`` (every task under ``all``)."""
    return [tid for tid, task in plan.tasks.items()
            if exp.toolset == "all" or "code_interpreter" in getattr(task, "tools", ())]


def check_sandbox(exp: Experiment, plan: Plan) -> None:
    """Raise :class:`SandboxUnavailable` when code tasks are planned and the sandbox cannot run.

    A trial never fails because of the machine: without bubblewrap the run does not start.
    """
    needing = code_tasks(exp, plan)
    if not needing:
        return
    from slmbench.agents.tools.sandbox import Sandbox, SandboxUnavailable

    try:
        Sandbox().run_python("pass")
    except SandboxUnavailable as exc:
        raise SandboxUnavailable(
            f"{len(needing)} planned task(s) need code_interpreter ({', '.join(needing[:3])}"
            f"{', ...' if len(needing) > 3 else ''}) but {exc}",
            "install bubblewrap (`make system-deps`, or sudo apt-get install bubblewrap), "
            + ("or use --toolset task --skip-code-tasks" if exp.toolset == "all"
               else "or pass --skip-code-tasks"),
        ) from exc


def check_instances(exp: Experiment, plan: Plan) -> None:
    """ConfigError when drawn worlds (an instance past 0) or the difficulty ladder's levels are
    planned for a task that is not a shipped task as shipped: only those are families (a
    template over the world, or a task the same in every world, with its ladder); another
    task's answer is its own world's."""
    if exp.instance_seeds() == [0] and not exp.levels:
        return
    from slmbench.agents.tasks import Task, load_tasks

    shipped = load_tasks()
    odd = [tid for tid, task in plan.tasks.items()
           if isinstance(task, Task) and shipped.get(tid) != task]
    if odd:
        what = "instances past 0" if exp.instance_seeds() != [0] else "levels"
        raise ConfigError(
            f"{what} are drawn from the shipped task families; {', '.join(odd[:3])}"
            f"{', ...' if len(odd) > 3 else ''} is not a shipped task as shipped",
            "run your own tasks with instances = 1 and no levels (the world they were written "
            "for), or the shipped suites with --instances / --levels")


def preflight(exp: Experiment, *, load_suite: SuiteLoader | None = None,
              variants: VariantsFn | None = None, check_servers: bool = True,
              wait_ready_s: float | None = None,
              on_wait: Callable[[str], None] | None = None) -> Plan:
    """Raise the one-line error that would stop ``exp`` before its first trial; return its plan.

    Checked before any run folder exists, so a run that cannot start writes nothing: each
    model with :func:`~slmbench.models.readiness.check_ready` (local executor and ``check_servers``
    only: a Ray actor checks its own model), the plan (task files, ``--task`` filters), and
    the sandbox when code tasks are planned (:func:`check_sandbox`), and that drawn instances
    are planned only for shipped tasks (:func:`check_instances`).
    """
    if check_servers and exp.executor == "local":
        for spec in exp.models:
            check_ready(spec, wait_ready_s=wait_ready_s, on_wait=on_wait,
                        native_tools=exp.scaffold == "native")
    plan = build_plan(exp, load_suite=load_suite or default_suite_loader(),
                      variants=variants or default_variants())
    check_instances(exp, plan)
    check_sandbox(exp, plan)
    return plan
