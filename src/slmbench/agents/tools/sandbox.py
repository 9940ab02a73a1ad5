"""Run model-written Python under bubblewrap, with resource limits. Never unsandboxed.

What the code gets:

- its own user, pid, network, IPC, UTS and cgroup namespaces (``--unshare-all``):
  no network at all, not even loopback to the host; ``--disable-userns`` stops
  it from making more;
- a read-only root: ``/usr`` bound read-only (with the ``/bin``, ``/lib``,
  ``/lib64`` symlinks), fresh ``/proc`` and ``/dev``, no ``/etc``, ``/home``,
  ``/root`` or host ``/tmp``; the root itself is remounted read-only;
- a private writable ``/work`` (its working directory) and ``/tmp``, both
  size-capped tmpfs, with the world's scratch files bound read-only into ``/work``;
- the system interpreter ``/usr/bin/python3`` in isolated mode (``-I -B``),
  reading the program from stdin; a one-line bootstrap first reports on a
  pipe that the interpreter started, so a failure before that point is
  bubblewrap's (``SandboxUnavailable``), never mistaken for the program's;
- rlimits set on the bwrap process and inherited by everything inside: CPU
  seconds, address space, file size and number of processes.

Processes limit under a user namespace: the kernel exempts uid 0 (and
CAP_SYS_ADMIN/CAP_SYS_RESOURCE holders) from ``RLIMIT_NPROC``, and a user
namespace created by root still maps to kernel uid 0. So when slmbench runs as
root, bwrap is started as an unprivileged uid (``nobody``, 65534) and relies
on unprivileged user namespaces; ``RLIMIT_NPROC`` then counts that uid's
processes on the whole host, i.e. every sandbox running at the same time.

The wall-clock timeout kills the sandbox's pid 1 (found through bwrap's
``--json-status-fd``, signalled through a pidfd so a recycled pid is never
hit), which takes the whole pid namespace down, and bwrap's process group;
``run_python`` returns only once that namespace is empty.
Output is read incrementally: the first ``output_bytes`` of each stream are
kept (a marker says how much was cut) and a program printing more than
``max_output_bytes`` in total is killed.
"""

from __future__ import annotations

import json
import os
import resource
import select
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import IO

from pydantic import BaseModel, ConfigDict, Field

from slmbench.core.errors import SlmbenchError

SANDBOX_PYTHON = "/usr/bin/python3"
UNPRIVILEGED_UID = 65534  # nobody
_TEARDOWN_WAIT_S = 5.0  # bound on waiting for a killed sandbox's processes to be gone


class SandboxUnavailable(SlmbenchError):
    """bubblewrap is missing or cannot create namespaces here; code is then not run at all."""


class SandboxLimits(BaseModel):
    model_config = ConfigDict(frozen=True)

    wall_seconds: float = Field(default=10.0, gt=0)
    cpu_seconds: int = Field(default=5, ge=1)
    memory_bytes: int = Field(default=512 * 2**20, ge=64 * 2**20)  # RLIMIT_AS
    max_processes: int = Field(default=64, ge=4)  # RLIMIT_NPROC (bwrap itself needs 3)
    max_file_bytes: int = Field(default=16 * 2**20, ge=0)  # RLIMIT_FSIZE
    tmpfs_bytes: int = Field(default=32 * 2**20, ge=2**20)  # size of /work and of /tmp
    output_bytes: int = Field(default=64 * 2**10, ge=1)  # kept per stream
    max_output_bytes: int = Field(default=8 * 2**20, ge=1)  # more in total: killed


class SandboxResult(BaseModel):
    """What a sandboxed run produced. ``killed_reason`` is set when a limit ended it."""

    model_config = ConfigDict(frozen=True)

    stdout: str
    stderr: str
    exit_code: int | None  # None when we killed it
    timed_out: bool = False
    killed_reason: str | None = None
    truncated: bool = False


# Runs first inside the sandbox: tells the host the interpreter started (so any failure
# before this is bubblewrap's, not the program's), then runs the program read from stdin.
_BOOT = ("import os, sys; os.write({fd}, b'started'); os.close({fd}); "
         "exec(compile(sys.stdin.read(), '<stdin>', 'exec'), "
         "{{'__name__': '__main__', '__builtins__': __builtins__}})")

_SIGNAL_REASONS = {
    signal.SIGXCPU: "cpu time limit exceeded",
    signal.SIGXFSZ: "file size limit exceeded",
    signal.SIGKILL: "killed (cpu hard limit or out of memory)",
    signal.SIGSEGV: "segmentation fault (often: out of memory)",
}


class _Capped:
    """Drains a pipe on a thread, keeping the first ``keep`` bytes and counting all of them."""

    def __init__(self, stream: IO[bytes], keep: int) -> None:
        self.kept = bytearray()
        self.total = 0
        self._stream, self._keep = stream, keep
        self.thread = threading.Thread(target=self._drain, daemon=True)
        self.thread.start()

    def _drain(self) -> None:
        while chunk := self._stream.read1(65536):
            self.total += len(chunk)
            if len(self.kept) < self._keep:
                self.kept += chunk[: self._keep - len(self.kept)]
        self._stream.close()

    def text(self) -> tuple[str, bool]:
        out = self.kept.decode("utf-8", errors="replace")
        if self.total > len(self.kept):
            return out + f"\n[... output truncated: {self.total - len(self.kept)} more bytes]", True
        return out, False


class Sandbox:
    """Runs Python source under bwrap with :class:`SandboxLimits`."""

    def __init__(self, limits: SandboxLimits | None = None, python: str = SANDBOX_PYTHON) -> None:
        self.limits = limits or SandboxLimits()
        self.python = python

    def _bwrap_args(self, file_dir: Path, names: list[str], started_fd: int,
                    status_fd: int) -> list[str]:
        lim = self.limits
        args = [
            "bwrap", "--unshare-all", "--unshare-user", "--disable-userns",
            "--die-with-parent", "--new-session", "--json-status-fd", str(status_fd),
            "--ro-bind", "/usr", "/usr",
            "--symlink", "usr/bin", "/bin", "--symlink", "usr/lib", "/lib",
            "--symlink", "usr/lib64", "/lib64",
            "--proc", "/proc", "--dev", "/dev",
            "--size", str(lim.tmpfs_bytes), "--tmpfs", "/tmp",
            "--size", str(lim.tmpfs_bytes), "--tmpfs", "/work",
        ]
        for name in names:
            args += ["--ro-bind", str(file_dir / name), f"/work/{name}"]
        args += [
            "--remount-ro", "/", "--chdir", "/work", "--hostname", "sandbox",
            "--clearenv", "--setenv", "PATH", "/usr/bin:/bin", "--setenv", "HOME", "/work",
            "--setenv", "LANG", "C.UTF-8",
            self.python, "-I", "-B", "-c", _BOOT.format(fd=started_fd),
        ]
        return args

    def _set_limits(self) -> None:  # runs in the child between fork and exec
        lim = self.limits
        for res, value in ((resource.RLIMIT_CPU, (lim.cpu_seconds, lim.cpu_seconds + 1)),
                           (resource.RLIMIT_AS, (lim.memory_bytes,) * 2),
                           (resource.RLIMIT_NPROC, (lim.max_processes,) * 2),
                           (resource.RLIMIT_FSIZE, (lim.max_file_bytes,) * 2),
                           (resource.RLIMIT_CORE, (0, 0))):
            resource.setrlimit(res, value)

    def check(self) -> None:
        """Raise :class:`SandboxUnavailable` unless bwrap exists and the interpreter is usable."""
        if shutil.which("bwrap") is None:
            raise SandboxUnavailable("bubblewrap (bwrap) is not installed; code cannot be run",
                                     hint="install it: apt-get install bubblewrap")
        if not self.python.startswith("/usr/") or not os.access(self.python, os.X_OK):
            raise SandboxUnavailable(f"sandbox interpreter {self.python} missing or not under /usr",
                                     hint="install the system python3 (apt-get install python3)")

    def run_python(self, code: str, files: dict[str, str] | None = None) -> SandboxResult:
        """Run ``code``; ``files`` (name -> text) appear read-only in its working directory."""
        self.check()
        with tempfile.TemporaryDirectory(prefix="slmbench-sbx-") as tmp:
            file_dir = Path(tmp)
            file_dir.chmod(0o755)  # bwrap may run as an unprivileged uid and must see them
            names: list[str] = []
            for name, text in _placeable(files or {}):
                target = file_dir / name
                target.parent.mkdir(parents=True, exist_ok=True)
                for d in target.relative_to(file_dir).parents:
                    (file_dir / d).chmod(0o755)
                target.write_text(text)
                target.chmod(0o444)
                names.append(name)
            return self._run(code, file_dir, names)

    def _run(self, code: str, file_dir: Path, names: list[str]) -> SandboxResult:
        lim = self.limits
        started_r, started_w = os.pipe()
        status_r, status_w = os.pipe()
        drop = os.geteuid() == 0
        # bwrap reads its options from an unlinked file: no host path is in any process's argv
        # (bwrap's own pid 1 inside the sandbox keeps bwrap's command line)
        with tempfile.TemporaryFile() as options:
            args = self._bwrap_args(file_dir, names, started_w, status_w)
            command = args.index(self.python)  # bwrap takes the command on its own argv
            options.write(b"".join(a.encode() + b"\0" for a in args[1:command]))
            options.seek(0)
            try:
                proc = subprocess.Popen(
                    ["bwrap", "--args", str(options.fileno()), *args[command:]],
                    stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                    pass_fds=(started_w, status_w, options.fileno()), start_new_session=True,
                    preexec_fn=self._set_limits,
                    env={"PATH": "/usr/bin:/bin"},
                    user=UNPRIVILEGED_UID if drop else None,
                    group=UNPRIVILEGED_UID if drop else None,
                    extra_groups=[] if drop else None,
                )
            finally:
                os.close(started_w)
                os.close(status_w)
        assert proc.stdin and proc.stdout and proc.stderr
        pidfd = _open_sandbox_init(status_r, time.monotonic() + lim.wall_seconds)
        out = _Capped(proc.stdout, lim.output_bytes)
        err = _Capped(proc.stderr, lim.output_bytes)
        try:
            proc.stdin.write(code.encode())
            proc.stdin.close()
        except BrokenPipeError:
            pass
        killed: str | None = None
        deadline = time.monotonic() + lim.wall_seconds
        while proc.poll() is None:
            if out.total + err.total > lim.max_output_bytes:
                killed = f"output limit exceeded ({lim.max_output_bytes} bytes)"
                break
            if time.monotonic() >= deadline:
                killed = f"wall-clock timeout after {lim.wall_seconds:g} s"
                break
            time.sleep(0.02)
        if killed:
            # Killing the sandbox's pid 1 takes down its whole pid namespace; killing bwrap's
            # group alone would leave that to --die-with-parent, asynchronously.
            if pidfd is not None:
                signal.pidfd_send_signal(pidfd, signal.SIGKILL)
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        if pidfd is not None:
            # pid 1 finishes exiting only once every process in its namespace is gone
            select.select([pidfd], [], [], _TEARDOWN_WAIT_S)
            os.close(pidfd)
        os.close(status_r)
        out.thread.join()
        err.thread.join()
        with os.fdopen(started_r, "rb") as fh:
            status = fh.read().decode(errors="replace")
        stdout, cut_out = out.text()
        stderr, cut_err = err.text()
        if status != "started" and not killed:
            raise SandboxUnavailable(
                f"bubblewrap could not start the sandbox: {stderr.strip() or 'no message'}",
                hint="unprivileged user namespaces must be enabled; try "
                     "`bwrap --unshare-all --unshare-user --ro-bind /usr /usr true` to see why")
        code_ = None if killed else proc.returncode
        if killed is None and code_ is not None and code_ > 128:
            sig = code_ - 128
            killed = _SIGNAL_REASONS.get(sig, f"killed by signal {_signal_name(sig)}")
        return SandboxResult(stdout=stdout, stderr=stderr, exit_code=code_,
                             timed_out=killed is not None and killed.startswith("wall"),
                             killed_reason=killed, truncated=cut_out or cut_err)


def _placeable(files: dict[str, str]) -> list[tuple[str, str]]:
    """The files that can appear in ``/work``, in name order.

    A name that leaves the folder (absolute, ``..``) is dropped, and so is one that clashes
    with a name kept before it: ``a`` and ``a/b`` cannot both exist (one is a file, the
    other needs ``a`` to be a folder), so the first in name order wins. Nothing here raises:
    a scratch folder the model made odd must not break every later code call.
    """
    kept: dict[str, str] = {}
    for name in sorted(files):
        parts = Path(name).parts
        if not name or name.startswith("/") or ".." in parts or name != Path(name).as_posix():
            continue
        prefixes = {"/".join(parts[:i]) for i in range(1, len(parts))}
        if prefixes & kept.keys() or any(k.startswith(f"{name}/") for k in kept):
            continue
        kept[name] = files[name]
    return list(kept.items())


def _open_sandbox_init(status_fd: int, deadline: float) -> int | None:
    """A pidfd for the sandbox's pid 1, from bwrap's ``{"child-pid": N}`` status line.

    None when bwrap failed before creating it, or it has already exited.
    """
    buf = b""
    while b"}" not in buf and time.monotonic() < deadline:
        ready, _, _ = select.select([status_fd], [], [], max(0.0, deadline - time.monotonic()))
        chunk = os.read(status_fd, 4096) if ready else b""
        if not chunk:
            break
        buf += chunk
    try:
        pid = json.JSONDecoder().raw_decode(buf.decode().strip())[0]["child-pid"]
        return os.pidfd_open(int(pid))
    except (ValueError, KeyError, TypeError, ProcessLookupError):
        return None


def _signal_name(sig: int) -> str:
    try:
        return signal.Signals(sig).name
    except ValueError:
        return str(sig)

