"""``slmbench ARGS`` as a process of its own, without importing the CLI again each time.

A fresh ``python -m slmbench.cli.main`` spends about 4 s of CPU importing its dependencies
(scikit-learn, scipy, statsmodels, ...) before it does anything; a test that starts it
twenty times spends most of its time there. Here each process is forked from
a fork server (``multiprocessing``'s ``forkserver``) that imported ``slmbench.cli.main``
once per test session, and runs the CLI's own entry point, ``main(args)``, with its own
environment, ``sys.argv``, standard streams and exit code. It is a real process: SIGKILL,
file-size limits and a non-zero exit behave as for a launched one. Tests that must see the
console script itself launch it with ``subprocess`` (:data:`CLI`) instead.
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.forkserver
import os
import resource
import subprocess
import sys
import tempfile
from multiprocessing.process import BaseProcess

CLI = (sys.executable, "-m", "slmbench.cli.main")

_FORKS = multiprocessing.get_context("forkserver")
_FORKS.set_forkserver_preload(["slmbench.cli.main"])
_serving: list[bool] = []


def _serve() -> None:
    """Start the fork server (once) with no terminal on its standard streams.

    The CLI's error console decides at import whether to colour its output; a process
    launched with captured output never sees a terminal, so neither may the server.
    """
    if _serving:
        return
    saved = [os.dup(fd) for fd in (0, 1, 2)]
    null = os.open(os.devnull, os.O_RDWR)
    try:
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        multiprocessing.forkserver.ensure_running()
        _serving.append(True)
    finally:
        for fd, copy in zip((0, 1, 2), saved, strict=True):
            os.dup2(copy, fd)
            os.close(copy)
        os.close(null)


def _session(args: list[str], env: dict[str, str], stdout: str, stderr: str,
             fsize: int | None) -> None:
    """In the forked process: ``slmbench ARGS`` as a launched process would run it."""
    os.environ.clear()
    os.environ.update(env)
    for fd, path in ((1, stdout), (2, stderr)):
        target = os.open(path, os.O_WRONLY | os.O_TRUNC)
        os.dup2(target, fd)
        os.close(target)
    if fsize is not None:  # a "disk" that holds only `fsize` bytes per file
        resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))
    sys.argv = [CLI[-1], *args]  # what `python -m slmbench.cli.main ARGS` sees
    from slmbench.cli.main import main

    main(args)


def start(args: list[str], *, env: dict[str, str] | None = None, stdout: str = os.devnull,
          stderr: str = os.devnull, fsize: int | None = None) -> BaseProcess:
    """Start ``slmbench ARGS`` (the environment: ``env``, else this one); output to files."""
    _serve()
    proc = _FORKS.Process(target=_session, args=(
        list(args), dict(os.environ if env is None else env), stdout, stderr, fsize))
    proc.start()
    return proc


def run(args: list[str], *, env: dict[str, str] | None = None, fsize: int | None = None,
        timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """Run ``slmbench ARGS`` to its end, like ``subprocess.run(..., capture_output=True)``."""
    with tempfile.NamedTemporaryFile("r", encoding="utf-8") as out, \
            tempfile.NamedTemporaryFile("r", encoding="utf-8") as err:
        proc = start(args, env=env, stdout=out.name, stderr=err.name, fsize=fsize)
        proc.join(timeout)
        if proc.exitcode is None:
            proc.kill()
            proc.join()
            raise subprocess.TimeoutExpired([*CLI, *args], timeout, out.read(), err.read())
        return subprocess.CompletedProcess([*CLI, *args], proc.exitcode, out.read(), err.read())
