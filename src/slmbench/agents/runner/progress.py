"""Progress of a run: a rich display on a terminal, plain lines otherwise.

Both show trials done / total, an ETA from this session's pace and the
running success rate of each model (trials already in the store included).
"""

from __future__ import annotations

import threading
import time
from typing import Protocol

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from slmbench.agents.records import TrialKey


class RunProgress(Protocol):
    """What the executor reports to. Implementations are thread-safe."""

    def start(self, totals: dict[str, int], done: dict[str, int],
              successes: dict[str, int]) -> None: ...

    def advance(self, key: TrialKey, outcome: str) -> None: ...

    def note(self, text: str) -> None: ...

    def stop(self) -> None: ...


class _Tally:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.totals: dict[str, int] = {}
        self.done: dict[str, int] = {}
        self.ok: dict[str, int] = {}
        self.started = time.monotonic()
        self.run_now = 0

    def start(self, totals: dict[str, int], done: dict[str, int],
              successes: dict[str, int]) -> None:
        self.totals, self.done, self.ok = dict(totals), dict(done), dict(successes)
        self.started = time.monotonic()

    def add(self, model: str, outcome: str) -> None:
        self.done[model] = self.done.get(model, 0) + 1
        self.ok[model] = self.ok.get(model, 0) + (outcome == "success")
        self.run_now += 1

    def rate(self, model: str) -> str:
        n = self.done.get(model, 0)
        return f"{self.ok.get(model, 0)}/{n} ok ({100 * self.ok.get(model, 0) / n:.0f}%)" if n \
            else "no trials yet"

    def eta(self) -> str:
        left = sum(self.totals.values()) - sum(self.done.values())
        elapsed = time.monotonic() - self.started
        if not self.run_now or left <= 0:
            return "-"
        secs = int(left * elapsed / self.run_now)
        return f"{secs // 3600}h{secs // 60 % 60:02d}m" if secs >= 3600 else \
            f"{secs // 60}m{secs % 60:02d}s"


class PlainProgress:
    """One line per finished trial, for logs and pipes."""

    def __init__(self, console: Console | None = None) -> None:
        self.console = console or Console(highlight=False, soft_wrap=True)
        self._t = _Tally()

    def start(self, totals: dict[str, int], done: dict[str, int],
              successes: dict[str, int]) -> None:
        self._t.start(totals, done, successes)
        total, already = sum(totals.values()), sum(done.values())
        self.console.print(f"run: {total} trials planned, {already} already stored, "
                           f"{total - already} to run", highlight=False, soft_wrap=True)

    def advance(self, key: TrialKey, outcome: str) -> None:
        with self._t.lock:
            self._t.add(key.model, outcome)
            done, total = sum(self._t.done.values()), sum(self._t.totals.values())
            task = f"{key.task}@{key.instance}" if key.instance else key.task  # a drawn world
            task += f" L{key.level}" if key.level != "base" else ""  # the ladder's level
            line = (f"[{done}/{total}] {key.model} {task} {key.variant} "
                    f"T={key.temperature:g} r{key.repeat} -> {outcome} | "
                    f"{self._t.rate(key.model)} | ETA {self._t.eta()}")
        self.console.print(line, markup=False, highlight=False, soft_wrap=True)

    def note(self, text: str) -> None:
        self.console.print(text, markup=False, highlight=False, soft_wrap=True)

    def stop(self) -> None:
        return None


class RichProgress:
    """A bar per model (done/total, success rate) and one overall bar with ETA."""

    def __init__(self, console: Console | None = None) -> None:
        self.console = console or Console()
        self._t = _Tally()
        self._bar = Progress(
            TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
            TextColumn("{task.fields[rate]}"), TimeElapsedColumn(), TimeRemainingColumn(),
            console=self.console,
        )
        self._ids: dict[str, TaskID] = {}
        self._all: TaskID | None = None

    def start(self, totals: dict[str, int], done: dict[str, int],
              successes: dict[str, int]) -> None:
        self._t.start(totals, done, successes)
        self._bar.start()
        self._all = self._bar.add_task("all models", total=sum(totals.values()),
                                       completed=sum(done.values()), rate="")
        for model, n in totals.items():
            self._ids[model] = self._bar.add_task(model, total=n, completed=done.get(model, 0),
                                                  rate=self._t.rate(model))

    def advance(self, key: TrialKey, outcome: str) -> None:
        with self._t.lock:
            self._t.add(key.model, outcome)
            rate = self._t.rate(key.model)
        self._bar.update(self._ids[key.model], advance=1, rate=rate)
        if self._all is not None:
            self._bar.update(self._all, advance=1)

    def note(self, text: str) -> None:
        self._bar.console.print(text, markup=False)

    def stop(self) -> None:
        self._bar.stop()


def make_progress(console: Console | None = None) -> RunProgress:
    """Rich bars on a terminal, plain lines when stdout is not one."""
    console = console or Console()
    return RichProgress(console) if console.is_terminal else PlainProgress(console)
