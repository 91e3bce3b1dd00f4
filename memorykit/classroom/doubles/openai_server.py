"""A loopback OpenAI-compatible server, for tests and offline notebook demos.

``FakeOpenAIServer`` is a context manager around a stdlib
``ThreadingHTTPServer`` bound to 127.0.0.1 on a free port. The real ``openai``
client talks to it through ``base_url``; nothing leaves the machine. It serves

* ``GET  /v1/models``;
* ``POST /v1/chat/completions``, plain or ``stream=True`` (server-sent events).
  Replies come from a ``ChatModel`` (a ``ScriptedChatModel`` by default), so
  the "model" behind it is a script, not a language model;
* ``POST /v1/embeddings``: deterministic vectors from a ``LexicalHashingEmbedder``,
  as little-endian float32 base64 unless ``encoding_format="float"`` (the
  ``openai`` client asks for base64 when you do not say); ``dimensions`` is
  honoured; an empty string is rejected with HTTP 400.

Tests make it misbehave, one request at a time: ``server.behave(Behaviour.delay(1.0),
Behaviour.error(500))`` queues behaviours consumed by the next requests;
``server.default`` is used when the queue is empty. Behaviours: normal, delay
(to trigger client timeouts), HTTP errors (500, 429, ...), a malformed JSON
body, empty choices, empty content, and, for embeddings, one vector too few.
Every request is recorded in ``server.requests`` (the Authorization header
redacted; ``auth_ok`` says whether it carried the expected key).

Taught in ``notebooks/11_llm_in_the_loop.ipynb``.
"""

from __future__ import annotations

import base64
import json
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np

from memorykit._validate import require_int, require_non_negative
from memorykit.embeddings import LexicalHashingEmbedder

FAKE_API_KEY = "sk-memorykit-fake-key"
"""The key ``FakeOpenAIServer`` expects by default (not a secret: a loopback test key)."""


@dataclass(frozen=True, slots=True)
class Behaviour:
    """How the server answers one request.

    kind: "normal", "delay" (wait ``delay`` seconds, then answer normally),
    "error" (HTTP ``status`` with an OpenAI-style error body), "malformed"
    (HTTP 200 whose body is not JSON), "empty_choices" (chat: ``choices: []``),
    "empty_content" (chat: content ""), "short" (embeddings: one vector fewer
    than inputs), "cut" (a streamed chat reply stops half-way: no finish reason, no
    ``[DONE]``, the connection closed).
    """

    kind: str = "normal"
    delay: float = 0.0
    status: int = 200
    message: str = ""

    KINDS = ("normal", "delay", "error", "malformed", "empty_choices", "empty_content", "short",
             "cut")

    def __post_init__(self) -> None:
        if self.kind not in self.KINDS:
            raise ValueError(f"kind must be one of {', '.join(self.KINDS)}, got {self.kind!r}")
        require_non_negative("delay", self.delay)
        require_int("status", self.status, minimum=100, maximum=599)  # what HTTP can carry

    @classmethod
    def normal(cls) -> Behaviour:
        return cls("normal")

    @classmethod
    def slow(cls, seconds: float) -> Behaviour:
        """Wait ``seconds`` before answering normally (a client with a shorter timeout gives up)."""
        return cls("delay", delay=seconds)

    @classmethod
    def error(cls, status: int = 500, message: str = "simulated failure") -> Behaviour:
        return cls("error", status=status, message=message)

    @classmethod
    def malformed(cls) -> Behaviour:
        return cls("malformed")

    @classmethod
    def empty_choices(cls) -> Behaviour:
        return cls("empty_choices")

    @classmethod
    def empty_content(cls) -> Behaviour:
        return cls("empty_content")

    @classmethod
    def short(cls) -> Behaviour:
        return cls("short")

    @classmethod
    def cut(cls) -> Behaviour:
        """A stream that ends mid-reply, as a dropped connection does."""
        return cls("cut")


@dataclass(slots=True)
class RecordedRequest:
    """One request as the server saw it (Authorization redacted)."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any
    """Parsed JSON body (None for GET or an unparsable body)."""
    auth_ok: bool
    """True when the request carried ``Bearer <the server's api_key>``."""
    behaviour: str
    at: float = field(default_factory=time.monotonic)


def _default_chat() -> Any:
    from memorykit.llm.chat import ScriptedChatModel

    return ScriptedChatModel(label="server", default="Scripted reply to: {last}")


class _Handler(BaseHTTPRequestHandler):
    server: _Server  # type: ignore[assignment]
    protocol_version = "HTTP/1.0"
    timeout = 10  # seconds a handler waits on a silent socket

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        pass  # keep test output quiet

    # ----------------------------------------------------------------- plumbing
    def _send_json(self, status: int, payload: Any, extra: dict[str, str] | None = None) -> None:
        data = json.dumps(payload).encode()
        self._send_bytes(status, data, "application/json", extra)

    def _send_bytes(
        self, status: int, data: bytes, ctype: str, extra: dict[str, str] | None = None
    ) -> None:
        try:
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(data)))
            for k, v in (extra or {}).items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError, OSError):
            pass  # the client gave up (timeout); nothing to do

    def _error(self, status: int, message: str, etype: str = "invalid_request_error") -> None:
        self._send_json(
            status,
            {"error": {"message": message, "type": etype, "param": None, "code": None}},
            {"retry-after-ms": str(self.server.owner.retry_after_ms)},
        )

    def _unauthorized(self) -> None:
        # Like the real API, echo a masked form of the key that was sent.
        auth = self.headers.get("Authorization", "")
        sent = auth[7:] if auth.startswith("Bearer ") else auth
        masked = sent[:3] + "*" * max(0, len(sent) - 7) + sent[-4:] if len(sent) > 8 else "***"
        self._error(401, f"Incorrect API key provided: {masked}.", "invalid_api_key")

    def _record(self, body: Any, behaviour: Behaviour) -> bool:
        owner = self.server.owner
        headers = {k.lower(): v for k, v in self.headers.items()}
        auth = headers.get("authorization", "")
        ok = auth == f"Bearer {owner.api_key}" if owner.api_key else True
        if "authorization" in headers:
            headers["authorization"] = "Bearer <redacted>"
        with owner._lock:
            owner.requests.append(
                RecordedRequest(self.command, self.path, headers, body, ok, behaviour.kind)
            )
        return ok

    # ----------------------------------------------------------------- routing
    def do_GET(self) -> None:  # noqa: N802 - stdlib name
        owner = self.server.owner
        behaviour = owner._next_behaviour()
        if not self._record(None, behaviour):
            return self._unauthorized()
        if not self._misbehave(behaviour):
            return
        if self.path.rstrip("/") == "/v1/models":
            data = [
                {"id": m, "object": "model", "created": 0, "owned_by": "memorykit-fake"}
                for m in owner.models
            ]
            return self._send_json(200, {"object": "list", "data": data})
        self._error(404, f"unknown path {self.path}")

    def do_POST(self) -> None:  # noqa: N802 - stdlib name
        owner = self.server.owner
        behaviour = owner._next_behaviour()
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        if not self._record(body, behaviour):
            return self._unauthorized()
        path = self.path.rstrip("/")
        if path not in ("/v1/chat/completions", "/v1/embeddings"):
            return self._error(404, f"unknown path {self.path}")
        if not isinstance(body, dict):
            return self._error(400, "the request body must be a JSON object")
        if not self._misbehave(behaviour):
            return
        if path == "/v1/chat/completions":
            self._chat(body, behaviour)
        else:
            self._embeddings(body, behaviour)

    def _misbehave(self, behaviour: Behaviour) -> bool:
        """Apply delay/error/malformed; return True when the normal answer should follow."""
        if behaviour.kind == "delay":
            # Interruptible: closing the server wakes every delayed handler.
            self.server.owner._stopping.wait(behaviour.delay)
            return not self.server.owner._stopping.is_set()
        if behaviour.kind == "error":
            etype = "rate_limit_exceeded" if behaviour.status == 429 else "server_error"
            self._error(behaviour.status, behaviour.message or "simulated failure", etype)
            return False
        if behaviour.kind == "malformed":
            self._send_bytes(200, b'{"id": "broken", "choices": [', "application/json")
            return False
        return True

    # --------------------------------------------------------------- endpoints
    def _chat(self, body: dict[str, Any], behaviour: Behaviour) -> None:
        owner = self.server.owner
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            return self._error(400, "'messages' must be a non-empty list")
        model = body.get("model") or "unknown"
        limit = body.get("max_completion_tokens", body.get("max_tokens"))
        try:
            reply = owner._reply(messages)
        except Exception as exc:  # a scripted responder that fails is a server error
            problem = f"responder failed: {type(exc).__name__}: {exc}"
            return self._error(500, problem, "server_error")
        if behaviour.kind == "empty_content":
            reply = ""
        counter = owner._counter()
        ids = counter.encode(reply)
        finish = "stop"
        if isinstance(limit, int) and not isinstance(limit, bool) and 0 < limit < len(ids):
            reply, ids, finish = counter.decode(ids[:limit]), ids[:limit], "length"
        prompt_tokens = billed_prompt_tokens(messages, counter.encode)
        completion_tokens = len(ids)
        created = int(time.time())
        cid = f"chatcmpl-fake-{owner._count('chat')}"
        if body.get("stream"):
            return self._stream(cid, created, model, reply, finish, behaviour)
        choices = [] if behaviour.kind == "empty_choices" else [
            {
                "index": 0,
                "message": {"role": "assistant", "content": reply, "refusal": None},
                "finish_reason": finish,
                "logprobs": None,
            }
        ]
        self._send_json(
            200,
            {
                "id": cid,
                "object": "chat.completion",
                "created": created,
                "model": model,
                "choices": choices,
                "usage": {
                    "prompt_tokens": prompt_tokens,
                    "completion_tokens": completion_tokens,
                    "total_tokens": prompt_tokens + completion_tokens,
                },
            },
        )

    def _stream(
        self, cid: str, created: int, model: str, reply: str, finish: str, behaviour: Behaviour
    ) -> None:
        def event(delta: dict[str, Any], finish_reason: str | None) -> bytes:
            chunk = {
                "id": cid,
                "object": "chat.completion.chunk",
                "created": created,
                "model": model,
                "choices": [] if behaviour.kind == "empty_choices" else [
                    {"index": 0, "delta": delta, "finish_reason": finish_reason}
                ],
            }
            return f"data: {json.dumps(chunk)}\n\n".encode()

        pieces = reply.split(" ")
        try:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.end_headers()
            self.wfile.write(event({"role": "assistant", "content": ""}, None))
            for i, piece in enumerate(pieces):
                if behaviour.kind == "cut" and i >= max(1, len(pieces) // 2):
                    self.wfile.flush()
                    self.close_connection = True
                    return  # half the reply, then the connection drops
                text = piece if i == 0 else " " + piece
                if text:
                    self.wfile.write(event({"content": text}, None))
                    self.wfile.flush()
            self.wfile.write(event({}, finish))
            self.wfile.write(b"data: [DONE]\n\n")
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError, OSError):
            pass

    def _embeddings(self, body: dict[str, Any], behaviour: Behaviour) -> None:
        owner = self.server.owner
        inputs = body.get("input")
        if isinstance(inputs, str):
            inputs = [inputs]
        if not (isinstance(inputs, list) and inputs and all(isinstance(t, str) for t in inputs)):
            return self._error(400, "'input' must be a string or a non-empty list of strings")
        if any(not t.strip() for t in inputs):
            return self._error(400, "'$.input' is invalid: empty strings cannot be embedded")
        dims = body.get("dimensions")
        if dims is not None and (not isinstance(dims, int) or isinstance(dims, bool) or dims < 2):
            return self._error(400, f"'dimensions' must be an integer >= 2, got {dims!r}")
        fmt = body.get("encoding_format")
        if fmt not in (None, "float", "base64"):
            return self._error(400, f"'encoding_format' must be 'float' or 'base64', got {fmt!r}")
        vectors = owner._embed(inputs, dims)
        if behaviour.kind == "short":
            vectors = vectors[:-1]
        data = []
        for i, vec in enumerate(vectors):
            if fmt == "float":
                emb: Any = [float(x) for x in vec]
            else:
                emb = base64.b64encode(vec.astype("<f4").tobytes()).decode("ascii")
            data.append({"object": "embedding", "index": i, "embedding": emb})
        tokens = sum(len(t.split()) for t in inputs)
        self._send_json(
            200,
            {
                "object": "list",
                "data": data,
                "model": body.get("model") or "unknown",
                "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
            },
        )


def billed_prompt_tokens(messages: Any, encode: Any) -> int:
    """What the loopback server bills for a prompt, by OpenAI's published recipe for chat models.

    The OpenAI cookbook's ``num_tokens_from_messages``: 3 tokens per message, the tokens of every
    field's value (role, content, name, and here also ``tool_call_id``), 1 more for a name, and 3
    for the reply primer. OpenAI does not publish how tool calls are billed; this server bills
    the JSON text of each call's function (name and arguments). It is the loopback's own rule,
    not memorykit's ``ChatFormat``, so a calibration against it can find a difference.
    """
    total = 3
    for message in messages:
        if not isinstance(message, dict):
            continue
        total += 3
        for key, value in message.items():
            if key == "tool_calls" and isinstance(value, list):
                functions = [c.get("function") for c in value if isinstance(c, dict)]
                total += len(encode(json.dumps(functions)))
            elif isinstance(value, str):
                total += len(encode(value))
            if key == "name":
                total += 1
    return total


class _Server(ThreadingHTTPServer):
    daemon_threads = False  # server_close() joins handler threads: nothing leaks
    block_on_close = True
    allow_reuse_address = True
    owner: FakeOpenAIServer


class FakeOpenAIServer:
    """An OpenAI-compatible HTTP server on 127.0.0.1, for tests and offline demos.

    Use it as a context manager; ``base_url`` is ``http://127.0.0.1:<port>/v1``.
    ``chat`` answers chat requests: a ``ChatModel`` (default: a
    ``ScriptedChatModel`` replying "Scripted reply to: <last user message>") or
    a function ``messages -> str``. The server cuts the reply to the request's
    ``max_tokens``/``max_completion_tokens`` (cl100k_base tokens) and then says
    ``finish_reason="length"``, as a real endpoint would. ``usage`` bills the
    prompt by OpenAI's published recipe (``billed_prompt_tokens``), written here
    on its own so that ``memorykit.llm.calibration`` has something independent
    to be compared with. ``embedder`` makes the
    vectors (default: ``LexicalHashingEmbedder(embedding_dimension)``).
    ``api_key``: requests must carry it as a bearer token, else HTTP 401
    (None accepts anything). ``retry_after_ms`` is sent with every error so a
    retrying client waits that long instead of its exponential backoff (fast
    tests).
    """

    def __init__(
        self,
        *,
        chat: Any = None,
        embedder: Any = None,
        embedding_dimension: int = 64,
        api_key: str | None = FAKE_API_KEY,
        models: tuple[str, ...] = ("memorykit-fake-chat", "memorykit-fake-embedding"),
        retry_after_ms: int = 1,
    ) -> None:
        self.chat = chat if chat is not None else _default_chat()
        if not (callable(getattr(self.chat, "complete", None)) or callable(self.chat)):
            raise TypeError(f"chat must be a ChatModel or a function, got {chat!r}")
        self.embedder = embedder if embedder is not None else LexicalHashingEmbedder(
            embedding_dimension
        )
        self.api_key = api_key
        self.models = tuple(models)
        self.retry_after_ms = require_int("retry_after_ms", retry_after_ms, minimum=0)
        self.default = Behaviour.normal()
        self.requests: list[RecordedRequest] = []
        self._queue: deque[Behaviour] = deque()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._counters: dict[str, int] = {}
        self._embedders: dict[int, Any] = {}
        self._tokenizer: Any = None
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------- lifecycle
    def start(self) -> FakeOpenAIServer:
        if self._server is not None:
            raise RuntimeError("the server is already running")
        self._stopping.clear()
        server = _Server(("127.0.0.1", 0), _Handler)
        server.owner = self
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.05},
            name=f"FakeOpenAIServer:{self.port}", daemon=True,
        )
        self._thread.start()
        return self

    def close(self) -> None:
        """Stop serving, wake delayed handlers, join every thread. Safe to call twice."""
        server, thread = self._server, self._thread
        if server is None:
            return
        self._stopping.set()
        server.shutdown()
        server.server_close()  # joins handler threads (block_on_close)
        if thread is not None:
            thread.join(timeout=5)
        self._server = None
        self._thread = None

    def __enter__(self) -> FakeOpenAIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def running(self) -> bool:
        return self._server is not None

    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError("the server is not running: use it as a context manager")
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def env(self) -> dict[str, str]:
        """OPENAI_BASE_URL and OPENAI_API_KEY pointing at this server."""
        return {"OPENAI_BASE_URL": self.base_url, "OPENAI_API_KEY": self.api_key or "unused"}

    def client(self, *, timeout: float = 5.0, max_retries: int = 0, **kwargs: Any) -> Any:
        """A real ``openai.OpenAI`` client pointed at this server."""
        from memorykit.llm.client import make_client

        return make_client(
            base_url=self.base_url, api_key=self.api_key or "unused",
            timeout=timeout, max_retries=max_retries, **kwargs,
        )

    # ------------------------------------------------------------- behaviour
    def behave(self, *behaviours: Behaviour) -> None:
        """Queue behaviours for the next requests, one each, in order."""
        for b in behaviours:
            if not isinstance(b, Behaviour):
                raise TypeError(f"behaviours must be Behaviour values, got {b!r}")
        with self._lock:
            self._queue.extend(behaviours)

    def _next_behaviour(self) -> Behaviour:
        with self._lock:
            return self._queue.popleft() if self._queue else self.default

    def requests_to(self, path_suffix: str) -> list[RecordedRequest]:
        """Recorded requests whose path ends with ``path_suffix`` (e.g. "/chat/completions")."""
        with self._lock:
            return [r for r in self.requests if r.path.rstrip("/").endswith(path_suffix)]

    def _count(self, what: str) -> int:
        with self._lock:
            self._counters[what] = self._counters.get(what, 0) + 1
            return self._counters[what]

    # ------------------------------------------------------------- answers
    def _reply(self, messages: list[dict[str, Any]]) -> str:
        """The responder's full reply (the handler cuts it to the request's token limit)."""
        with self._lock:  # scripted models keep state: one reply at a time
            if callable(getattr(self.chat, "complete", None)):
                # The wire fields (tool_calls, tool_call_id) stay: the model validates the
                # history as the endpoint would. Only content is made a str (null is allowed
                # on the wire for an assistant message that only calls tools).
                clean = [
                    {**m, "content": str(m.get("content") or "")}
                    for m in messages if isinstance(m, dict)
                ]
                reply = self.chat.complete(clean)
            else:
                reply = self.chat(messages)
        if not isinstance(reply, str):
            raise TypeError(f"the responder returned {type(reply).__name__}, expected str")
        return reply

    def _counter(self) -> Any:
        if self._tokenizer is None:
            from memorykit.tokens import Tokenizer

            self._tokenizer = Tokenizer()
        return self._tokenizer

    def _embed(self, texts: list[str], dims: int | None) -> np.ndarray:
        embedder = self.embedder
        if dims is not None and dims != getattr(embedder, "dimension", None):
            with self._lock:
                embedder = self._embedders.get(dims)
                if embedder is None:
                    embedder = self._embedders[dims] = LexicalHashingEmbedder(dims)
        return np.asarray(embedder.embed(texts), dtype=np.float32)

    def __repr__(self) -> str:
        where = self.base_url if self.running else "stopped"
        return f"FakeOpenAIServer({where}, {len(self.requests)} requests)"


__all__ = ["FAKE_API_KEY", "Behaviour", "FakeOpenAIServer", "RecordedRequest", "billed_prompt_tokens"]
