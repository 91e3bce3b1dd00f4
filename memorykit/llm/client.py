"""Building an OpenAI client, and knowing whether one can be built at all.

Notebooks run offline by default. Before they reach for a real model they ask
``configured()``: True only when the ``openai`` package is installed and an
API key is available (an argument or ``OPENAI_API_KEY``). It never constructs
a client, so it never raises the "Missing credentials" error the ``openai``
client raises at construction. ``make_client`` builds the client from explicit
arguments, falling back to ``OPENAI_BASE_URL`` / ``OPENAI_API_KEY``, with the
timeout and retry count as parameters; it raises ``LLMNotConfigured`` (not the
client's own error) when no key is available.

The API key is never printed: ``describe_backend()`` says only whether a key is
set, and no error message in this package includes it. Nor does any error's attribute
or traceback: the original error an ``LLMError`` keeps (``cause``, also its
``__cause__``) is scrubbed in place of its request, its response and every echo of a
key (key-shaped strings, and the very keys of the clients this package built or was
handed, which an endpoint's 401 may echo whatever their shape).

Deadlines. ``timeout`` is seconds per attempt *in total*, first byte to last, not per
read: the client's own timeouts are per read, so a server trickling a byte at a time
could hold a call for as long as it trickled. ``call_deadline`` bounds a whole call at
``(max_retries + 1) x timeout`` plus openai's pauses between attempts (0.5 s, 1 s, 2 s,
... at most 8 s each) plus 0.5 s of grace (so the client's own timeout reports first when
it can), and ``run_with_deadline`` enforces it: the request runs on a worker thread that
is abandoned (its result dropped) when the deadline passes. A ``Retry-After`` pause longer
than openai's own counts against the deadline.

``openai`` is an optional dependency (the ``llm`` extra); it is imported only
inside the functions that need it. Taught in
``notebooks/11_llm_in_the_loop.ipynb``.
"""

from __future__ import annotations

import contextlib
import os
import queue
import re
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any, TypeVar
from urllib.parse import urlsplit, urlunsplit

from memorykit._validate import require_int, require_positive

DEFAULT_TIMEOUT = 30.0
"""Seconds per request attempt, in total (see ``call_deadline``)."""
DEFAULT_MAX_RETRIES = 2
"""Retries after the first attempt: up to 3 requests for one call."""

ENV_BASE_URL = "OPENAI_BASE_URL"
ENV_API_KEY = "OPENAI_API_KEY"


class LLMError(RuntimeError):
    """Base class of every error this package raises about language-model calls.

    The message is redacted here, whoever composed it, because endpoints echo keys
    back and base URLs may carry one. ``cause`` (the original error, if any) is kept
    without the request and response it refers to: those hold the request headers,
    the key among them. Pickling works for every subclass (process-pool sweeps send
    errors between processes); a cause that is not an ``LLMError`` travels as a
    ``RuntimeError`` holding its redacted description, since third-party errors
    (``openai``'s among them) often cannot be unpickled.
    """

    def __init__(self, message: str = "", *, cause: BaseException | None = None) -> None:
        super().__init__(redact(str(message)))
        self.cause = scrub(cause)

    def __reduce__(self) -> tuple[Any, ...]:
        state = {name: _portable(value) for name, value in vars(self).items()}
        return (_rebuild_error, (type(self), self.args, state))


def _rebuild_error(cls: type[LLMError], args: tuple[Any, ...], state: dict[str, Any]) -> LLMError:
    # not through __init__: subclasses take different keyword arguments, and the state is
    # already redacted
    error = cls.__new__(cls)
    error.args = args
    vars(error).update(state)
    return error


def _portable(value: Any) -> Any:
    if isinstance(value, BaseException) and not isinstance(value, LLMError):
        return RuntimeError(describe_error(value))
    return value


_REQUEST_FIELDS = ("request", "response", "_request", "_response")


def scrub(error: BaseException | None) -> BaseException | None:
    """``error`` and the errors it was raised from, in place: request/response references
    dropped (they hold the request headers, the key among them), every string in their
    arguments and attributes redacted (a 401's message and body echo the key).

    The type and the other attributes (``status_code``) stay, so callers can still tell
    what failed."""
    seen: set[int] = set()
    todo = [error]
    while todo:
        current = todo.pop()
        if current is None or id(current) in seen:
            continue
        seen.add(id(current))
        fields = vars(current)
        for name, value in list(fields.items()):
            fields[name] = None if name in _REQUEST_FIELDS else _redacted(value)
        current.args = _redacted(current.args)
        todo += [current.__cause__, current.__context__]
    return error


def _redacted(value: Any, depth: int = 0) -> Any:
    """``value`` with every string in it redacted (through lists, tuples and dicts)."""
    if isinstance(value, str):
        return redact(value)
    if depth > 8:  # a body nested deeper than any real error's: dropped, not walked
        return None if isinstance(value, (dict, list, tuple)) else value
    if isinstance(value, dict):
        return {_redacted(k, depth + 1): _redacted(v, depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_redacted(v, depth + 1) for v in value)
    return value


class LLMNotConfigured(LLMError):
    """No API key is available (argument or OPENAI_API_KEY), so no client can be built."""


class LLMCallFailed(LLMError):
    """A request to the model failed; ``kind`` says how and ``cause`` holds the original error.

    ``kind`` is one of "timeout", "connection", "http <status>", "malformed reply",
    "empty reply", "error".
    """

    def __init__(self, message: str, *, kind: str, cause: BaseException | None = None) -> None:
        super().__init__(message, cause=cause)
        self.kind = kind


def require_openai() -> Any:
    """Import and return the ``openai`` module, or raise ImportError saying how to get it."""
    try:
        import openai
    except ImportError as exc:  # pragma: no cover - openai is installed in the dev venv
        raise ImportError(
            "memorykit.llm needs the 'openai' package: install memorykit[llm] "
            "(pip install 'memorykit[llm]')"
        ) from exc
    return openai


def openai_available() -> bool:
    """True when the ``openai`` package can be imported."""
    try:
        require_openai()
    except ImportError:
        return False
    return True


def _env(env: Mapping[str, str] | None) -> Mapping[str, str]:
    return os.environ if env is None else env


def _check_optional_str(name: str, value: Any) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        # Never echo the value: it may be a secret.
        raise TypeError(f"{name} must be a str or None, got a {type(value).__name__}")
    return value


def resolve_base_url(
    base_url: str | None = None, env: Mapping[str, str] | None = None
) -> str | None:
    """The base URL a client would use: the argument, else OPENAI_BASE_URL, else None.

    None means the ``openai`` default, https://api.openai.com/v1.
    """
    base_url = _check_optional_str("base_url", base_url)
    if base_url:
        return base_url
    return _env(env).get(ENV_BASE_URL) or None


def _resolve_key(api_key: str | None, env: Mapping[str, str] | None) -> str | None:
    api_key = _check_optional_str("api_key", api_key)
    if api_key and api_key.strip():
        return api_key
    value = _env(env).get(ENV_API_KEY)
    return value if value and value.strip() else None


def configured(
    *, base_url: str | None = None, api_key: str | None = None, env: Mapping[str, str] | None = None
) -> bool:
    """True when a real backend can be used: ``openai`` is installed and an API key is available.

    Constructs no client and contacts nothing. ``base_url`` only matters in that
    it is checked for type; without one the client would use api.openai.com.
    """
    resolve_base_url(base_url, env)
    return openai_available() and _resolve_key(api_key, env) is not None


def describe_backend(
    *, base_url: str | None = None, api_key: str | None = None, env: Mapping[str, str] | None = None
) -> str:
    """One line for a notebook: where requests would go and whether a key is set (never the key)."""
    url = resolve_base_url(base_url, env)
    url = safe_url(url) if url else "https://api.openai.com/v1 (default)"
    key = "set" if _resolve_key(api_key, env) else "missing"
    pkg = "installed" if openai_available() else "not installed (install memorykit[llm])"
    return f"base_url={url}; api key {key}; openai package {pkg}"


def make_client(
    *,
    base_url: str | None = None,
    api_key: str | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    max_retries: int = DEFAULT_MAX_RETRIES,
    env: Mapping[str, str] | None = None,
    **client_kwargs: Any,
) -> Any:
    """An ``openai.OpenAI`` client from explicit arguments, else OPENAI_BASE_URL / OPENAI_API_KEY.

    ``timeout`` is seconds per attempt; ``max_retries`` retries follow a failed
    attempt (timeouts, connection errors, 408/409/429/5xx), so one call makes at
    most ``max_retries + 1`` requests. Raises ``LLMNotConfigured`` when no key is
    available, ImportError when ``openai`` is missing. Extra keyword arguments go
    to ``openai.OpenAI`` unchanged.
    """
    timeout = require_positive("timeout", timeout)
    max_retries = require_int("max_retries", max_retries, minimum=0)
    url = resolve_base_url(base_url, env)
    key = _resolve_key(api_key, env)
    openai = require_openai()
    if key is None:
        raise LLMNotConfigured(
            f"no API key: pass api_key=... or set {ENV_API_KEY} "
            f"(and {ENV_BASE_URL} for a non-OpenAI endpoint); offline components "
            "(ScriptedChatModel, ExtractiveSummarizer, LexicalHashingEmbedder) need neither"
        )
    kwargs: dict[str, Any] = dict(client_kwargs)
    if url is not None:
        kwargs["base_url"] = url
    remember_key(key)
    return openai.OpenAI(api_key=key, timeout=timeout, max_retries=max_retries, **kwargs)


def resolve_client(
    client: Any, *, timeout: float | None, max_retries: int | None, needs: str
) -> Any:
    """``client`` with ``timeout``/``max_retries`` applied (``with_options``), or a new one.

    With ``client=None`` a client is built by ``make_client`` (from the
    environment), the two settings defaulting to ``DEFAULT_TIMEOUT`` and
    ``DEFAULT_MAX_RETRIES``. ``needs`` names the resource the caller uses
    ("chat", "embeddings"), checked so a wrong object fails early.
    """
    options: dict[str, Any] = {}
    if timeout is not None:
        options["timeout"] = require_positive("timeout", timeout)
    if max_retries is not None:
        options["max_retries"] = require_int("max_retries", max_retries, minimum=0)
    if client is None:
        return make_client(**options)
    if not hasattr(client, needs):
        raise TypeError(f"client must be an openai.OpenAI client, got {type(client).__name__}")
    remember_key(getattr(client, "api_key", None))
    return client.with_options(**options) if options else client


_FIRST_PAUSE, _LONGEST_PAUSE = 0.5, 8.0  # openai's backoff between attempts
_GRACE = 0.5
_T = TypeVar("_T")


def call_deadline(client: Any) -> float | None:
    """Seconds one call on ``client`` may take in all: ``(max_retries + 1) x timeout`` plus
    openai's pauses between attempts plus 0.5 s of grace; None when the client has no
    numeric timeout (then nothing bounds the call but the client's own per-read timeouts).

    ``timeout`` is the client's: a number, or the largest part of an ``httpx`` timeout."""
    timeout = getattr(client, "timeout", None)
    if not isinstance(timeout, (int, float)) or isinstance(timeout, bool):
        parts = [getattr(timeout, f, None) for f in ("connect", "read", "write", "pool")]
        numbers = [p for p in parts if isinstance(p, (int, float)) and not isinstance(p, bool)]
        timeout = max(numbers, default=None)
    retries = getattr(client, "max_retries", 0)
    if timeout is None or not timeout > 0 or not isinstance(retries, int) or retries < 0:
        return None
    doubling = min(retries, 4)  # 0.5 s, 1 s, 2 s, 4 s, then 8 s each
    pauses = sum(_FIRST_PAUSE * 2**k for k in range(doubling))
    pauses += _LONGEST_PAUSE * (retries - doubling)
    deadline = (retries + 1) * float(timeout) + pauses + _GRACE
    return deadline if deadline < threading.TIMEOUT_MAX else None  # inf: no deadline to keep


class DeadlinePassed(Exception):
    """``run_with_deadline``'s call did not end in time (it is abandoned, not stopped)."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        super().__init__(f"no whole reply within the call's deadline of {seconds:.1f} s (the "
                         "server is too slow, or trickling its reply)")


def run_with_deadline(call: Callable[[], _T], seconds: float | None) -> _T:
    """``call()``, run on a worker thread; raises ``DeadlinePassed`` after ``seconds``.

    A blocked socket read cannot be interrupted from outside, so the worker is abandoned
    (a daemon thread: it ends when the server ends the response or the client's per-read
    timeout fires; its result is dropped). Waiting stays interruptible (Ctrl-C, a notebook's
    stop button). ``seconds=None``: ``call()`` runs here, unbounded.
    """
    if seconds is None:
        return call()
    outcome: list[Any] = []
    done = threading.Event()

    def work() -> None:
        try:
            outcome.append((True, call()))
        except BaseException as exc:  # noqa: BLE001 - handed to the waiting thread as is
            outcome.append((False, exc))
        finally:
            done.set()

    threading.Thread(target=work, name="memorykit-llm-call", daemon=True).start()
    if not done.wait(seconds):
        raise DeadlinePassed(seconds)
    ok, value = outcome[0]
    if not ok:
        raise value
    return value


def iterate_with_deadline(open_stream: Callable[[], Any], seconds: float | None) -> Iterator[Any]:
    """The items of the stream ``open_stream()`` returns, read on a worker thread so that the
    time spent waiting for them keeps to ``seconds`` in all (None: unbounded); past it
    ``DeadlinePassed`` is raised and the stream closed (the worker's next read then fails)."""
    items: queue.SimpleQueue[tuple[bool, Any]] = queue.SimpleQueue()
    opened: list[Any] = []

    def read() -> None:
        try:
            with open_stream() as stream:
                opened.append(stream)
                for item in stream:
                    items.put((True, item))
            items.put((True, _END))
        except BaseException as exc:  # noqa: BLE001 - handed to the waiting thread as is
            items.put((False, exc))

    threading.Thread(target=read, name="memorykit-llm-stream", daemon=True).start()
    left = seconds
    try:
        while True:
            start = time.monotonic()
            try:
                ok, item = items.get(timeout=left)
            except queue.Empty:
                raise DeadlinePassed(seconds or 0.0) from None
            if left is not None:
                left = max(0.0, left - (time.monotonic() - start))
            if not ok:
                raise item
            if item is _END:
                return
            yield item
    finally:
        for stream in opened:
            with contextlib.suppress(Exception):  # closing under a read may fail: abandoned
                stream.close()


_END = object()


def client_base_url(client: Any) -> str:
    """The client's base URL as text (for names and reprs; never includes the key)."""
    return safe_url(str(getattr(client, "base_url", "?")))


def safe_url(url: str) -> str:
    """``url`` without user info, query or fragment, key-shaped strings redacted.

    Keys hide in base URLs (``http://user:KEY@host/v1``, ``?api-key=KEY``), and a base
    URL is shown in reprs, ``describe_backend()`` and error messages.
    """
    parts = urlsplit(url)
    try:
        host = parts.hostname or ""
        if parts.port is not None:
            host = f"{host}:{parts.port}"
    except ValueError:  # a malformed port: show no host rather than the raw netloc
        host = "<unparsable host>"
    return redact(urlunsplit((parts.scheme, host, parts.path, "", "")))


def classify_error(exc: BaseException) -> str:
    """A short kind for an exception raised by an ``openai`` call (see ``LLMCallFailed.kind``)."""
    try:
        openai = require_openai()
    except ImportError:  # pragma: no cover
        return "error"
    if isinstance(exc, (openai.APITimeoutError, DeadlinePassed)):
        return "timeout"
    if isinstance(exc, openai.APIConnectionError):
        return "connection"
    if isinstance(exc, openai.APIStatusError):
        return f"http {exc.status_code}"
    if isinstance(exc, (openai.APIResponseValidationError, ValueError)):
        return "malformed reply"
    return "error"


_KEYLIKE = re.compile(r"\b(?:sk|pk|key|api[-_]?key)[-_][A-Za-z0-9_*\-]{4,}", re.IGNORECASE)
# "api_key: X", "api-key=X", "Authorization: Bearer X", "token=X" (also inside a URL query):
# the value after a secret-named field, whatever its shape
_SECRET_FIELD = re.compile(
    r"(?<![A-Za-z0-9])(api[-_ ]?key|authorization|access[-_]?token|token|secret|password"
    r"|passwd)(['\"]?\s*[:=]\s*['\"]?)(?:(?:bearer|basic|token)\s+)?[^\s'\",;&#)]{4,}",
    re.IGNORECASE,
)
_BEARER = re.compile(r"\b(bearer|basic)\s+[A-Za-z0-9._~+/=\-]{4,}", re.IGNORECASE)
# user info in a URL: scheme://user:password@host
_URL_USERINFO = re.compile(r"(?<=://)[^/@\s]+@")


_KNOWN_KEYS: set[str] = set()
"""Keys of the clients this package built or was handed: redacted wherever they appear."""
_SHORTEST_KNOWN_KEY = 8  # shorter "keys" (a local server's "x") would redact ordinary text


def remember_key(key: Any) -> None:
    """Redact ``key`` from every message and error from now on (a key an endpoint may echo
    in any shape, which the key-shaped patterns alone would miss)."""
    if isinstance(key, str) and len(key.strip()) >= _SHORTEST_KNOWN_KEY:
        _KNOWN_KEYS.add(key.strip())


def redact(text: str) -> str:
    """``text`` with anything shaped like an API key replaced: a key this package's clients
    use, ``sk-...`` (even masked), the value of a secret-named field (``api_key: X``,
    ``api-key=X``, ``Authorization: ...``), a bare ``Bearer X`` and the user info of a URL."""
    for key in sorted(_KNOWN_KEYS, key=len, reverse=True):  # a key inside a longer one: later
        text = text.replace(key, "<redacted key>")
    text = _URL_USERINFO.sub("<redacted>@", text)
    text = _SECRET_FIELD.sub(r"\1\2<redacted>", text)
    text = _BEARER.sub(r"\1 <redacted>", text)
    return _KEYLIKE.sub("<redacted key>", text)


def describe_error(exc: BaseException) -> str:
    """``"<Type>: <message>"``, key-like strings redacted, cut to 300 characters.

    Used in every error message of this package: endpoints may echo (part of)
    the key back, as OpenAI does in its 401 message.
    """
    text = redact(str(exc).strip().replace("\n", " "))
    if len(text) > 300:
        text = text[:297] + "..."
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


__all__ = [
    "DEFAULT_MAX_RETRIES",
    "DEFAULT_TIMEOUT",
    "LLMCallFailed",
    "LLMError",
    "LLMNotConfigured",
    "configured",
    "describe_backend",
    "make_client",
    "resolve_client",
    "openai_available",
    "require_openai",
    "resolve_base_url",
    "safe_url",
]
