"""llama.cpp's own ``llama-server``, started and stopped by slmbench (the ``llamaserver:`` backend).

``llamaserver:NAME`` serves a pulled registry model (``slmbench pull NAME``), and
``llamaserver:/path/to/file.gguf`` any GGUF file, through a ``llama-server`` built by
``make llama-server`` from the llama.cpp that the pinned llama-cpp-python sdist vendors
(so this backend and ``llamacpp:`` run the same kernels). Options:

* ``slots`` - parallel sequences the server decodes in one batch (``-np``, default 8);
* ``threads`` - CPU threads (default 2);
* ``n_ctx`` - context window *per slot* in tokens (default 4096, as ``llamacpp:``); each
  trial records it with the window the server says the model was trained for (``n_ctx_train``);
* ``timeout`` - seconds per request (default 300); ``load_timeout`` - seconds to wait
  for the server to load the model (default 120);
* ``n_gpu_layers`` - layers offloaded to the GPU (``-ngl``; a CUDA build of llama-server);
* ``think`` / ``think_tokens`` - as for ``openai:`` (``chat_template_kwargs``).

The server listens on a free loopback port and is started with ``--jinja``: OpenAI
``tools`` go through the GGUF's own chat template, and calls the model writes in that
template's format (e.g. Qwen's ``<tool_call>`` tags) come back parsed. Measured here with
the pinned build: Qwen2.5-Coder-0.5B writes its call as bare JSON or a fenced JSON block,
never in the tags its template asks for, and the server returns that as plain text (no
``tool_calls`` in 4 native-scaffold requests at temperature 0 and 4 seeds at 0.7;
Qwen2.5-Coder-1.5B, whose template is the same, wrote fenced or bare JSON in 4 of 4 tool
requests too, 0 ``tool_calls``, 2026-12-01). The server's own template analysis is not
the cause (verbose log, 2026-12-02): it finds Qwen's format (``JSON_NATIVE``, each call opened
by ``<tool_call>``), builds a grammar from the request's tools, and parses replies with it.
Under ``tool_choice="auto"`` that grammar is lazy, waiting for ``<tool_call>``, which the
model never writes; under ``"required"`` it is applied from the first token but, by
llama.cpp's design, lets free text come before the first call, so the model's fenced JSON is
accepted as text and the reply runs on to the token limit. Prefilled with ``<tool_call>``, the
0.5B ends its turn at once; after a history holding one tagged call it answers in prose.
Chat requests go through :class:`~slmbench.models.openai.OpenAIModel` unchanged. Each
calling thread is pinned to one slot (``id_slot``), so the steps of one agent trial reuse
their own prefix from that slot's KV cache instead of evicting each other's.

The server is stopped by :meth:`LlamaServerModel.close`, at interpreter exit, and by the
kernel when this process dies in any way (``PR_SET_PDEATHSIG``, armed from a thread that
lives as long as the process): no ``llama-server`` outlives the run.

``score`` raises ``LogprobsUnsupportedError`` (as ``openai:``). Tried and measured: forcing each
candidate token with a logit bias on ``/completion`` and reading its pre-sampling log-prob
(``n_probs``) gave -4.95 where ``llamacpp:`` gives -5.12 for one SmolLM2 candidate; until the
cause is found (template rendering or tokenization are the suspects) no number is given.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import os
import queue
import signal
import socket
import subprocess
import tempfile
import threading
import time
import weakref
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import httpx

from slmbench.core.errors import BackendError, ModelNotFoundError, ModelSpecError
from slmbench.core.paths import bin_dir
from slmbench.models.catalog import resolve_target
from slmbench.models.openai import OpenAIModel, openai_messages
from slmbench.models.records import Message
from slmbench.models.spec import SERVER_BACKENDS, ModelSpec, gpu_layers, parse_spec
from slmbench.models.thinking import THINK_OPTIONS, Thinking

# The llama-cpp-python release whose vendored llama.cpp `make llama-server` builds: the same
# pin as the `embedded` extra in pyproject.toml, so both backends run the same kernels.
PINNED_LLAMA_CPP_PYTHON = "0.3.36"
# The Makefile's BUILD_TAG: ggml built without its AMX kernels (they crash this pin on AMX CPUs).
BUILD_TAG = "noamx"
DEFAULT_SLOTS = 8
OPTIONS = ("slots", "threads", "n_ctx", "timeout", "load_timeout", "n_gpu_layers",
           *THINK_OPTIONS)
_PR_SET_PDEATHSIG = 1
_LOG_TAIL = 600  # characters of the server's log quoted when it fails to start


OTHER_SERVERS_IN_FLIGHT = 4  # default requests in flight to an openai:/ollama: server


def default_in_flight(spec: str) -> int:
    """Calls of ``spec`` kept in flight at once unless the user says otherwise: a
    ``llamaserver:``'s ``slots``, 4 for another server backend, 1 for an in-process one or a
    name that is no backend spec (a quantization run's ``MODEL#precision``)."""
    try:
        parsed = parse_spec(spec)
    except ModelSpecError:
        return 1
    if parsed.backend == "llamaserver":
        return parsed.int_option("slots", DEFAULT_SLOTS)
    return OTHER_SERVERS_IN_FLIGHT if parsed.backend in SERVER_BACKENDS else 1


def server_binary() -> Path:
    """Where ``make llama-server`` puts the binary built from the pinned source."""
    return bin_dir() / f"llama-server-{PINNED_LLAMA_CPP_PYTHON}-{BUILD_TAG}"


def _find_binary() -> Path:
    path = server_binary()
    if not path.is_file():
        raise ModelNotFoundError(f"llama-server is not built ({path} does not exist)",
                                 "run `make llama-server` (a few minutes, once)")
    return path


_LIBC = ctypes.CDLL(None, use_errno=True)  # loaded here: the child must not dlopen after fork


def _die_with(parent: int) -> Callable[[], None]:
    """What the child runs between fork and exec: be killed when ``parent`` ends."""
    def arm() -> None:
        _LIBC.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != parent:  # the parent died before the signal was armed
            os._exit(1)
    return arm


class _Spawner:
    """Starts children from one daemon thread that lives as long as the process.

    ``PR_SET_PDEATHSIG`` fires when the *thread* that forked the child ends, so children
    are never forked from a worker thread that may finish before the run does.
    """

    def __init__(self) -> None:
        self._jobs: queue.Queue[tuple[Callable[[], Any], queue.Queue[Any]]] = queue.Queue()
        threading.Thread(target=self._serve, name="llama-server-spawner", daemon=True).start()

    def _serve(self) -> None:
        while True:
            job, reply = self._jobs.get()
            try:
                reply.put((job(), None))
            except Exception as exc:  # handed back to the caller
                reply.put((None, exc))

    def call(self, job: Callable[[], Any]) -> Any:
        reply: queue.Queue[Any] = queue.Queue(maxsize=1)
        self._jobs.put((job, reply))
        result, exc = reply.get()
        if exc is not None:
            raise exc
        return result


_spawner_lock = threading.Lock()
_spawner: _Spawner | None = None
_live: weakref.WeakSet[LlamaServerModel] = weakref.WeakSet()


def _spawn(argv: list[str], log: Any) -> subprocess.Popen[bytes]:
    global _spawner
    with _spawner_lock:
        if _spawner is None:
            _spawner = _Spawner()
    return _spawner.call(lambda: subprocess.Popen(  # type: ignore[no-any-return]
        argv, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
        start_new_session=True, preexec_fn=_die_with(os.getpid())))


@atexit.register
def _stop_all() -> None:
    for model in list(_live):
        model.close()


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class LlamaServerModel(OpenAIModel):
    """A GGUF model served by a ``llama-server`` process this object owns."""

    no_logprobs = ("llama-server's forced-token log-probs did not match the in-process backend "
                   "on the same weights (measured), so none are given",
                   "score with the llamacpp backend on the same GGUF")

    def __init__(self, path: Path, *, spec: str, slots: int = DEFAULT_SLOTS, threads: int = 2,
                 n_ctx: int = 4096, timeout: float = 300.0, load_timeout: float = 120.0,
                 n_gpu_layers: int | None = None, thinking: Thinking | None = None) -> None:
        self.path, self.slots, self.n_ctx = path, slots, n_ctx
        self._proc: subprocess.Popen[bytes] | None = None
        self._log = tempfile.NamedTemporaryFile(prefix="llama-server-", suffix=".log")  # noqa: SIM115
        self._close_lock = threading.Lock()
        self._slot_lock = threading.Lock()
        self._thread_slot = threading.local()
        self._next_slot = 0
        port = free_port()
        base = f"http://127.0.0.1:{port}"
        argv = [str(_find_binary()), "-m", str(path), "--host", "127.0.0.1", "--port", str(port),
                "-c", str(n_ctx * slots), "-np", str(slots), "-t", str(threads),
                "--jinja", "--no-webui", "--metrics"]
        if n_gpu_layers is not None:
            argv += ["-ngl", str(n_gpu_layers)]
        self._proc = _spawn(argv, self._log)
        _live.add(self)
        self._http = httpx.Client(base_url=base, timeout=timeout)
        try:
            self._wait_healthy(load_timeout)
            self.n_ctx_train = self._trained_window()
        except BaseException:
            self.close()
            raise
        super().__init__(path.stem, f"{base}/v1", spec=spec, timeout=timeout, thinking=thinking)

    @property
    def settings(self) -> dict[str, Any]:
        """The server backend's settings, with the window each slot has (``n_ctx``) and the
        one the model was trained for (``n_ctx_train``, as the server reports it): whose
        limit a context overflow was is read from these (``agents/exclusion.py``)."""
        window = {"n_ctx": self.n_ctx, "slots": self.slots}
        if self.n_ctx_train is not None:
            window["n_ctx_train"] = self.n_ctx_train
        return {**super().settings, **window}

    @classmethod
    def from_spec(cls, spec: ModelSpec) -> LlamaServerModel:
        spec.check_options(OPTIONS)
        return cls(resolve_target(spec.target), spec=spec.raw,
                   slots=spec.int_option("slots", DEFAULT_SLOTS),
                   threads=spec.int_option("threads", 2),
                   n_ctx=spec.int_option("n_ctx", 4096),
                   timeout=spec.seconds_option("timeout", 300.0),
                   load_timeout=spec.seconds_option("load_timeout", 120.0),
                   n_gpu_layers=gpu_layers(spec), thinking=Thinking.from_spec(spec))

    @staticmethod
    def preflight(spec: ModelSpec, wait_ready_s: float | None = None, *,
                  on_wait: Callable[[str], None] | None = None) -> None:
        """The binary is built and the model file is there (the server is ours to start)."""
        spec.check_options(OPTIONS)
        _find_binary()
        resolve_target(spec.target)

    # -- the process -----------------------------------------------------------------------
    def _log_tail(self) -> str:
        self._log.flush()
        text = Path(self._log.name).read_text(encoding="utf-8", errors="replace")
        return " | ".join(text[-_LOG_TAIL:].strip().splitlines()[-4:])

    def _wait_healthy(self, load_timeout: float) -> None:
        """Return when ``/health`` answers 200; 503 (loading) and refusals are waited for."""
        deadline = time.monotonic() + load_timeout
        while time.monotonic() < deadline:
            assert self._proc is not None
            if self._proc.poll() is not None:
                raise BackendError(
                    f"llama-server exited with code {self._proc.returncode} while loading "
                    f"{self.path.name}: {self._log_tail()}",
                    "check the GGUF file and the options (n_ctx x slots must fit in memory)")
            with contextlib.suppress(httpx.TransportError):
                if self._http.get("/health", timeout=2.0).status_code == 200:
                    return
            time.sleep(0.1)
        raise BackendError(f"llama-server did not load {self.path.name} in {load_timeout:g} s",
                           "raise ?load_timeout= or use a smaller n_ctx/slots")

    def _trained_window(self) -> int | None:
        """The context window the model was trained for, as the server reports it
        (``/v1/models``: ``data[0].meta.n_ctx_train``); None where it does not say."""
        try:
            listed = self._http.get("/v1/models", timeout=10.0).json()
            value = listed["data"][0]["meta"]["n_ctx_train"]
        except (httpx.HTTPError, ValueError, KeyError, IndexError, TypeError):
            return None
        return value if isinstance(value, int) and value > 0 else None

    def counters(self) -> dict[str, float]:
        """The server's cumulative counters from ``/metrics`` (``prompt_tokens_total``: prompt
        tokens it evaluated, cache hits excluded; ``tokens_predicted_total``; ...)."""
        text = self._http.get("/metrics").text
        out = {}
        for line in text.splitlines():
            name, _, value = line.partition(" ")
            if name.startswith("llamacpp:") and value:
                out[name.removeprefix("llamacpp:")] = float(value)
        return out

    @property
    def pid(self) -> int | None:
        """The server's process id (None once stopped)."""
        return self._proc.pid if self._proc is not None else None

    def close(self) -> None:
        """Stop the server (SIGTERM, then SIGKILL after 5 s); safe to call twice."""
        with self._close_lock:
            proc, self._proc = self._proc, None
            if proc is not None and proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(timeout=5.0)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
            _live.discard(self)
            if hasattr(self, "_client"):
                super().close()
            self._http.close()
            self._log.close()

    # -- requests ----------------------------------------------------------------------------
    def _slot(self) -> int:
        """This thread's slot: threads are dealt slots in turn, and keep theirs."""
        slot = getattr(self._thread_slot, "id", None)
        if slot is None:
            with self._slot_lock:
                slot, self._next_slot = self._next_slot % self.slots, self._next_slot + 1
            self._thread_slot.id = slot
        return int(slot)

    def _request_extras(self) -> dict[str, Any]:
        return {"extra_body": {"id_slot": self._slot(), "cache_prompt": True}}

    def render_prompt(self, messages: Sequence[Message]) -> str:
        """The prompt text the server makes of ``messages``: its ``/apply-template`` (the
        template ``--jinja`` applies to a chat request, with the same thinking switch)."""
        body: dict[str, Any] = {"messages": openai_messages(messages)}
        if self.thinking.enabled is not None:
            body["chat_template_kwargs"] = {"enable_thinking": self.thinking.enabled}
        try:
            reply = self._http.post("/apply-template", json=body)
            reply.raise_for_status()
            return str(reply.json()["prompt"])
        except (httpx.HTTPError, ValueError, KeyError) as exc:
            raise BackendError(f"llama-server at {self._http.base_url} did not render the "
                               f"template: {exc}", "check the server's log") from exc
