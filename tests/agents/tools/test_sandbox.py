"""Escape attempts from the code sandbox: each is contained, with a clear result, host unchanged.

These run real bubblewrap sandboxes with small limits so the suite stays fast.
"""

import os
import socket
from pathlib import Path

import pytest

from slmbench.agents.tools.sandbox import Sandbox, SandboxLimits

# RLIMIT_NPROC counts every process of the sandbox's uid on the host: these tests hold it to 16
# (and one fills it on purpose), so they run in make test's serial pass, never beside another
# worker's sandboxes (a concurrent code task or certification made bwrap's fork fail with EAGAIN)
pytestmark = pytest.mark.serial

SMALL = SandboxLimits(wall_seconds=5, cpu_seconds=3, memory_bytes=256 * 2**20, max_processes=16,
                      max_file_bytes=2**20, tmpfs_bytes=4 * 2**20, output_bytes=4096,
                      max_output_bytes=2**20)


@pytest.fixture
def sb() -> Sandbox:
    return Sandbox(SMALL)


def _live_processes_in_namespace(ns: str) -> int:
    """Live (not zombie) host processes whose pid namespace is ``ns`` (``pid:[4026532xyz]``)."""
    count = 0
    for link in Path("/proc").glob("[0-9]*/ns/pid"):
        try:
            if os.readlink(link) == ns:
                state = (link.parent.parent / "stat").read_text().rsplit(")", 1)[1].split()[0]
                count += state != "Z"
        except OSError:
            continue
    return count


def test_normal_program_runs_and_sees_scratch_files_read_only(sb: Sandbox) -> None:
    code = ("print(open('data.csv').read().strip())\n"
            "open('out.txt', 'w').write('ok'); print(open('out.txt').read())\n"
            "try:\n    open('data.csv', 'w')\nexcept OSError as e:\n    print('ro', e.errno)\n")
    r = sb.run_python(code, files={"data.csv": "a,b\n1,2\n"})
    assert r.exit_code == 0 and r.killed_reason is None and not r.timed_out
    assert r.stdout.split() == ["a,b", "1,2", "ok", "ro", "30"]  # EROFS


def test_host_environment_is_not_visible(sb: Sandbox, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SLMBENCH_PROBE_SECRET", "hunter2")
    r = sb.run_python("import os; print(sorted(os.environ)); print(os.getuid() != 0)")
    assert "SLMBENCH_PROBE_SECRET" not in r.stdout and "hunter2" not in r.stdout
    assert r.stdout.split("\n")[1] == "True" if os.geteuid() == 0 else r.exit_code == 0


def test_no_network_to_host_loopback_or_dns(sb: Sandbox) -> None:
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(1)
        server.setblocking(False)
        port = server.getsockname()[1]
        r = sb.run_python(
            "import socket\n"
            f"try:\n    socket.create_connection(('127.0.0.1', {port}), timeout=2)\n"
            "    print('connected')\n"
            "except OSError as e:\n    print('refused', type(e).__name__)\n"
            "try:\n    socket.getaddrinfo('pypi.org', 443)\n    print('resolved')\n"
            "except OSError as e:\n    print('dns', type(e).__name__)\n")
        with pytest.raises(BlockingIOError):
            server.accept()  # nothing reached the host's listener
    assert "connected" not in r.stdout and "resolved" not in r.stdout
    assert "refused" in r.stdout and "dns gaierror" in r.stdout


@pytest.mark.parametrize("target", ["/tmp/slmbench_escape_probe", "/usr/x", "/root/x",
                                    "/etc/slmbench_escape_probe", "/x"])
def test_writes_outside_scratch_never_reach_the_host(sb: Sandbox, target: str) -> None:
    assert not os.path.exists(target)
    r = sb.run_python(f"open({target!r}, 'w').write('escaped')\nprint('wrote')")
    assert not os.path.exists(target)
    if target.startswith("/tmp/"):
        assert r.exit_code == 0  # the sandbox's own private /tmp, gone when it ends
    else:
        assert r.exit_code == 1 and ("Read-only file system" in r.stderr
                                     or "No such file or directory" in r.stderr)


def test_root_only_host_file_is_invisible(sb: Sandbox, tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("top secret")
    secret.chmod(0o600)
    r = sb.run_python(
        f"import os\nprint(os.path.exists({str(secret)!r}))\n"
        f"try:\n    print(open({str(secret)!r}).read())\n"
        "except OSError as e:\n    print(type(e).__name__)\n"
        "print(os.path.exists('/root'), os.path.exists('/etc/shadow'))")
    assert "top secret" not in r.stdout
    assert r.stdout.split() == ["False", "FileNotFoundError", "False", "False"]


def test_fork_bomb_is_bounded_and_leaves_nothing_behind(sb: Sandbox) -> None:
    r = sb.run_python("import os, sys\nprint(os.readlink('/proc/self/ns/pid'), flush=True)\n"
                      "while True:\n    try:\n        os.fork()\n"
                      "    except OSError:\n        pass\n")
    assert r.timed_out and r.exit_code is None
    ns = r.stdout.split()[0]
    assert ns.startswith("pid:[") and ns != os.readlink("/proc/self/ns/pid")
    assert _live_processes_in_namespace(ns) == 0  # the pid namespace was torn down


def test_allocating_4_gb_fails_inside_the_sandbox(sb: Sandbox) -> None:
    r = sb.run_python("x = bytearray(4 * 2**30)\nprint('allocated')")
    assert "allocated" not in r.stdout
    assert "MemoryError" in r.stderr or r.killed_reason


def test_infinite_loop_is_stopped_by_the_wall_clock() -> None:
    r = Sandbox(SMALL.model_copy(update={"wall_seconds": 1.5, "cpu_seconds": 60})).run_python(
        "while True:\n    pass")
    assert r.timed_out and r.exit_code is None
    assert r.killed_reason == "wall-clock timeout after 1.5 s"


def test_cpu_limit_stops_a_busy_program() -> None:
    r = Sandbox(SMALL.model_copy(update={"wall_seconds": 30, "cpu_seconds": 1})).run_python(
        "while True:\n    pass")
    assert not r.timed_out
    assert r.killed_reason == "cpu time limit exceeded"


def test_printing_100_mb_is_truncated(sb: Sandbox) -> None:
    r = sb.run_python("import sys\nfor _ in range(100):\n    sys.stdout.write('x' * 2**20)")
    assert r.truncated
    assert len(r.stdout) < SMALL.output_bytes + 200
    assert "[... output truncated:" in r.stdout
    assert r.killed_reason == f"output limit exceeded ({SMALL.max_output_bytes} bytes)"


def test_file_size_limit_applies(sb: Sandbox) -> None:
    r = sb.run_python("open('big.bin', 'wb').write(b'0' * 4 * 2**20)")
    assert r.exit_code == 1 and "File too large" in r.stderr


def test_process_limit_is_enforced_even_when_slmbench_runs_as_root(sb: Sandbox) -> None:
    # root is exempt from RLIMIT_NPROC; the sandbox runs as an unprivileged uid so it is not
    r = sb.run_python(
        "import os, time\nn = 0\ntry:\n    while n < 1000:\n        if os.fork() == 0:\n"
        "            time.sleep(20)\n            os._exit(0)\n        n += 1\n"
        "except OSError as e:\n    print(n, type(e).__name__, flush=True)\nos._exit(0)\n")
    forked, error = r.stdout.split()
    assert error == "BlockingIOError"
    assert 0 < int(forked) < SMALL.max_processes


@pytest.mark.parametrize("code", [
    "import os; os.setuid(0)",
    "import os; os.chroot('/usr')",
    # a nested user namespace (a way to regain capabilities) is refused: --disable-userns
    "import ctypes, os\nlibc = ctypes.CDLL(None, use_errno=True)\n"
    "if libc.unshare(0x10000000) != 0:\n    e = ctypes.get_errno()\n"
    "    raise PermissionError(e, os.strerror(e))\n",
])
def test_no_privileges_inside(sb: Sandbox, code: str) -> None:
    r = sb.run_python(code)
    assert r.exit_code == 1
    assert "PermissionError" in r.stderr or "OSError" in r.stderr
