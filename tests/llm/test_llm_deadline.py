"""Hostile endpoints (issue 25, items 8 and 9): a server trickling bytes, a 401 echoing the
key, an HTML page served with status 200. Real ``openai`` client, real sockets on 127.0.0.1.

Timing is asserted only with generous bounds: a call with ``timeout=1.0`` against a server
that trickles for 10 s must end in well under 10 s (the old code took the whole trickle).
"""

from __future__ import annotations

import json
import threading
import time
import traceback
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from memorykit.llm.chat import OpenAIChatModel
from memorykit.llm.client import LLMCallFailed, make_client

KEY = "SENTINELKEY0123456789abcdef"  # not key-shaped: only knowing the key can redact it
TRICKLE_SECONDS = 10.0
HELLO = [{"role": "user", "content": "hello"}]


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        pass

    def do_POST(self) -> None:  # noqa: N802 - stdlib name
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
        mode = self.server.mode  # type: ignore[attr-defined]
        self.server.hits += 1  # type: ignore[attr-defined]
        if mode == "401":
            self._send(401, "application/json", json.dumps({"error": {
                "message": f"Incorrect API key provided: {KEY}. You passed {KEY}.",
                "type": "invalid_request_error", "code": "invalid_api_key", "key": KEY}}))
        elif mode == "html":
            self._send(200, "text/html; charset=utf-8",
                       "<!DOCTYPE html><html><head><title>Welcome</title></head>"
                       "<body><h1>It works</h1></body></html>")
        elif mode == "trickle" and body.get("stream"):
            self._trickle("text/event-stream", b'data: {"id":"x","object":"chat.completion.chunk",'
                          b'"created":1,"model":"m","choices":[{"index":0,"delta":{"content":'
                          b'"hi"},"finish_reason":null}]}\n\n' * 200)
        elif mode == "trickle":
            self._trickle("application/json", json.dumps({
                "id": "x", "object": "chat.completion", "created": 1, "model": "m",
                "choices": [{"index": 0, "finish_reason": "stop",
                             "message": {"role": "assistant", "content": "hi " * 2000}}],
            }).encode())

    def _send(self, status: int, ctype: str, text: str) -> None:
        data = text.encode()
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _trickle(self, ctype: str, data: bytes) -> None:
        """Headers at once, then one byte every few hundredths of a second for 10 s: each
        read waits far less than any timeout, the whole body far longer."""
        self.send_response(200)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        end = time.monotonic() + TRICKLE_SECONDS
        stop: threading.Event = self.server.stop  # type: ignore[attr-defined]
        try:
            for i in range(len(data)):
                if time.monotonic() > end or stop.wait(0.05):
                    return  # cut: the client is gone or the test is over
                self.wfile.write(data[i:i + 1])
                self.wfile.flush()
        except OSError:
            return


@pytest.fixture
def server() -> Iterator[ThreadingHTTPServer]:
    srv = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    srv.daemon_threads = True
    srv.mode, srv.hits, srv.stop = "trickle", 0, threading.Event()  # type: ignore[attr-defined]
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    yield srv
    srv.stop.set()  # type: ignore[attr-defined]
    srv.shutdown()
    srv.server_close()
    thread.join(5)


def _model(srv: ThreadingHTTPServer, **kw: Any) -> OpenAIChatModel:
    client = make_client(base_url=f"http://127.0.0.1:{srv.server_port}/v1", api_key=KEY, **kw)
    return OpenAIChatModel("m", client)


def _complete(model):
    return model.complete(HELLO)


def _stream(model):
    return list(model.stream(HELLO))


@pytest.mark.parametrize("call, max_retries, bound", [
    (_complete, 0, 4.0), (_stream, 0, 4.0),
    # one deadline for the call: 2 attempts x 1 s + openai's 0.5 s pause + 0.5 s grace
    (_complete, 1, 7.0),
])
def test_a_trickling_server_cannot_hold_a_call_past_its_deadline(server, call, max_retries, bound):
    model = _model(server, timeout=1.0, max_retries=max_retries)
    start = time.monotonic()
    with pytest.raises(LLMCallFailed) as info:
        call(model)
    took = time.monotonic() - start
    assert info.value.kind == "timeout"
    assert took < bound, f"{call.__name__} took {took:.1f} s against {max_retries + 1} x 1 s"


def _chain(error: BaseException) -> list[BaseException]:
    seen: list[BaseException] = []
    todo: list[BaseException | None] = [error]
    while todo:
        e = todo.pop()
        if e is None or any(e is s for s in seen):
            continue
        seen.append(e)
        todo += [e.__cause__, e.__context__, getattr(e, "cause", None)]
    return seen


def test_a_401_echoing_the_key_leaves_it_in_no_attribute_or_traceback(server):
    server.mode = "401"
    model = _model(server, timeout=5.0, max_retries=0)
    with pytest.raises(LLMCallFailed) as info:
        model.complete(HELLO)
    error = info.value
    assert error.kind == "http 401"
    texts = ["".join(traceback.format_exception(error)), str(error), repr(error)]
    for e in _chain(error):
        texts += [repr(e), str(e), repr(e.args), repr(vars(e)),
                  repr({k: vars(v) for k, v in vars(e).items() if hasattr(v, "__dict__")})]
    for text in texts:
        assert KEY not in text, text
    assert "401" in str(error.cause)  # what went wrong is still said


def test_an_html_page_with_status_200_is_a_malformed_reply_not_an_empty_one(server):
    server.mode = "html"
    model = _model(server, timeout=5.0, max_retries=0)
    with pytest.raises(LLMCallFailed) as info:
        model.complete(HELLO)
    assert info.value.kind == "malformed reply"
    assert "HTML" in str(info.value) and "/v1" in str(info.value)
    with pytest.raises(LLMCallFailed) as streamed:
        list(model.stream(HELLO))
    assert streamed.value.kind == "malformed reply" and "HTML" in str(streamed.value)


def test_an_embedding_request_keeps_the_same_deadline(server):
    from memorykit.llm.embedder import EmbeddingFailed, OpenAIEmbedder

    client = make_client(base_url=f"http://127.0.0.1:{server.server_port}/v1", api_key=KEY,
                         timeout=1.0, max_retries=0)
    start = time.monotonic()
    with pytest.raises(EmbeddingFailed) as info:
        OpenAIEmbedder("m", client, dimension=8).embed(["hello"])
    took = time.monotonic() - start
    assert info.value.kind == "timeout"
    assert took < 4.0, f"the embedding call took {took:.1f} s against a 1 s timeout"


def test_the_call_deadline_is_attempts_times_timeout_plus_pauses_plus_grace():
    from types import SimpleNamespace as Client

    from memorykit.llm.client import call_deadline

    assert call_deadline(Client(timeout=1.0, max_retries=0)) == 1.0 + 0.5
    assert call_deadline(Client(timeout=1.0, max_retries=2)) == 3 * 1.0 + (0.5 + 1) + 0.5
    pauses = 0.5 + 1 + 2 + 4 + 8 + 8  # doubling up to openai's longest pause, 8 s
    assert call_deadline(Client(timeout=2.0, max_retries=6)) == 7 * 2.0 + pauses + 0.5
    for unbounded in (float("inf"), None, "30"):
        assert call_deadline(Client(timeout=unbounded, max_retries=0)) is None
