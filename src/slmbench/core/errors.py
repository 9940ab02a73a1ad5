"""Errors a user sees: one line saying what is wrong, one saying what to do."""

from __future__ import annotations


class SlmbenchError(Exception):
    """Base class for every error slmbench reports to a user.

    ``str(err)`` is the one-line problem; ``err.hint`` says what to do about it.
    The CLI prints both and exits non-zero; it never prints a traceback for these.
    """

    def __init__(self, message: str, hint: str = "") -> None:
        super().__init__(message)
        self.hint = hint

    def __str__(self) -> str:  # pragma: no cover - trivial
        return self.args[0] if self.args else ""


class ConfigError(SlmbenchError):
    """Bad input: a malformed file, an unknown name, an invalid option."""


class StoreWriteError(SlmbenchError):
    """A store or output file could not be written (disk full, read-only, no permission).

    What was stored before stays readable; the same command resumes once the cause is fixed.
    """


class ModelSpecError(ConfigError):
    """A model spec string that names no backend or misses a part."""


class PluginError(SlmbenchError):
    """An installed package's entry point (a backend or micro-task plugin) that claims a
    name already taken or cannot load; the message names the entry point and distribution."""


class ModelNotFoundError(SlmbenchError):
    """A model file or registry entry that is not there."""


class BackendError(SlmbenchError):
    """A backend failed to answer (server down, process died, bad response).

    ``transient`` marks faults worth retrying (timeouts, 5xx, refused
    connections, rate limits); the runner retries those with backoff.
    """

    def __init__(self, message: str, hint: str = "", *, transient: bool = False) -> None:
        super().__init__(message, hint)
        self.transient = transient


class ContextOverflowError(BackendError):
    """The prompt no longer fits the model's context window (a long agent trial).

    The agent loops end such a trial as ``step_limit`` (a budget ran out),
    not as a crash and not as a backend fault.
    """


class LogprobsUnsupportedError(SlmbenchError):
    """The backend cannot return log-probabilities; no number is made up."""


class IntegrityError(SlmbenchError):
    """A downloaded or cached file whose sha256 does not match the registry."""
