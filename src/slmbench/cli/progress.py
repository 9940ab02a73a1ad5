"""Live progress of a Part B matrix in the terminal: :class:`CellBar`, one cell at a time."""

from __future__ import annotations

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeRemainingColumn,
)

from slmbench.core.stats import Estimate
from slmbench.report.study_facts import num


def _bound(e: Estimate | None) -> str:
    if e is None or e.estimate is None:
        return ""
    return f"running {num(e)}"


class CellBar:
    """Per-cell progress: a rich bar (items read, running estimate and bound, ETA) on a
    terminal, a plain line (never wrapped) every ``every`` items and at the end otherwise."""

    def __init__(self, out: Console, every: int = 50) -> None:
        self.out, self.every = out, every
        self.bar: Progress | None = None
        self.task: TaskID | None = None
        self.label, self.total = "", 0
        self._last: Estimate | None = None

    def start(self, label: str, total: int) -> None:
        self.label, self.total = label, total
        if not self.out.is_terminal:
            self.out.print(f"{label}: reading up to {total} items", highlight=False,
                           soft_wrap=True)
            return
        self.bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                            TextColumn("{task.fields[bound]}"), TimeRemainingColumn(),
                            console=self.out, transient=False)
        self.bar.start()
        self.task = self.bar.add_task(label, total=total, bound="")

    def advance(self, read: int, estimate: Estimate | None) -> None:
        if self.bar is not None and self.task is not None:
            self.bar.update(self.task, completed=read, bound=_bound(estimate))
        elif read % self.every == 0:
            self.out.print(f"{self.label}: {read}/{self.total} items read {_bound(estimate)}",
                           highlight=False, soft_wrap=True)
        self._last = estimate

    def finish(self, read: int, verdict: str) -> None:
        if self.bar is not None:
            self.bar.stop()
            self.bar = None
        self.out.print(f"{self.label}: {read}/{self.total} items read, {verdict} "
                       f"{_bound(self._last)}", highlight=False, soft_wrap=True)
