"""Record a real model's replies once, replay them anywhere: a chat model keyed by the request.

A lesson that shows what a real (local) model does cannot ask for the model in CI or on a
reader's laptop. ``RecordingChatModel`` wraps a real chat model (an ``OpenAIChatModel``
against a local llama.cpp server): every call goes through, and the reply, its
``finish_reason``, the provider's usage and any failure are written into a ``Transcript``
under a key made from the request (the messages and ``max_tokens``). ``ReplayChatModel``
answers the same requests from the transcript, deterministically and offline, and restores
``last_usage``/``last_finish_reason`` so summarizers and calibration see exactly what the
model reported; a recorded failure is raised again as the same ``LLMCallFailed`` kind. A
request that was never recorded raises ``TranscriptMiss`` naming the key and the request's
last message: a replay never invents an answer.

Taught in ``notebooks/11_llm_in_the_loop.ipynb``.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from memorykit._validate import require_bool, require_optional_int, require_str
from memorykit.llm.chat import ChatMessages, Usage, check_chat_messages
from memorykit.llm.client import ENV_BASE_URL, LLMCallFailed, LLMError

FORMAT = "memorykit-transcript/1"
"""The ``format`` field of a transcript file (a file of another format is refused)."""


class TranscriptMiss(LLMError):
    """A replayed request that the transcript does not hold (re-record to add it)."""


def request_key(messages: ChatMessages, max_tokens: int | None) -> str:
    """The key of a request: a hash of its messages and token cap (the model name is left out,
    so a recording made under one alias replays under another)."""
    max_tokens = require_optional_int("max_tokens", max_tokens, minimum=1)
    canonical = json.dumps({"messages": check_chat_messages(messages), "max_tokens": max_tokens},
                           sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:20]


@dataclass(frozen=True)
class Exchange:
    """One recorded call: what came back, or how it failed."""

    last_message: str
    """The request's last message, cut to 120 characters (for a reader of the file)."""
    reply: str | None
    """The reply text; None when the call failed."""
    finish_reason: str | None
    prompt_tokens: int | None
    """The provider's ``usage.prompt_tokens`` (its own tokenizer and chat template)."""
    completion_tokens: int | None
    error_kind: str | None = None
    """``LLMCallFailed.kind`` of a failed call ("timeout", "empty reply", ...)."""
    error: str | None = None
    """The failure's message (already redacted by ``LLMError``)."""

    def __post_init__(self) -> None:
        # a hand-edited file is read through here: refuse what a recording cannot contain
        for name in ("prompt_tokens", "completion_tokens"):
            require_optional_int(name, getattr(self, name), minimum=0, maximum=10**7)
        for name in ("last_message", "reply", "finish_reason", "error_kind", "error"):
            value = getattr(self, name)
            if value is not None and not isinstance(value, str):
                raise TypeError(f"{name} must be a str or None, got {value!r}")
        if (self.reply is None) == (self.error_kind is None):
            raise ValueError(f"an exchange holds a reply or a failure kind, got reply "
                             f"{self.reply!r} and error_kind {self.error_kind!r}")


class Transcript:
    """Recorded exchanges by request key, with the model they came from; JSON on disk."""

    def __init__(self, model: str, exchanges: dict[str, Exchange] | None = None,
                 note: str = "") -> None:
        self.model = require_str("model", model, non_empty=True)
        self.exchanges: dict[str, Exchange] = dict(exchanges or {})
        self.note = require_str("note", note)
        """Where and how the transcript was recorded (for the reader of the file)."""

    @classmethod
    def load(cls, path: str | Path) -> Transcript:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise ValueError(f"{path} is not a {FORMAT} file "
                             f"(format {data.get('format') if isinstance(data, dict) else None!r})")
        return cls(data["model"], {k: Exchange(**v) for k, v in data["exchanges"].items()},
                   data.get("note", ""))

    def save(self, path: str | Path) -> None:
        data = {"format": FORMAT, "model": self.model, "note": self.note,
                "exchanges": {k: asdict(v) for k, v in sorted(self.exchanges.items())}}
        Path(path).write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n",
                              encoding="utf-8")

    def __len__(self) -> int:
        return len(self.exchanges)


def _tail(messages: ChatMessages) -> str:
    text = str(messages[-1].get("content") or "") if messages else ""
    return text if len(text) <= 120 else text[:117] + "..."


class _Reporting:
    """What both models expose after a call, as ``OpenAIChatModel`` does."""

    is_scripted = False
    name: str

    def __init__(self) -> None:
        self.calls = 0
        self.last_usage: Usage | None = None
        self.last_finish_reason: str | None = None


class RecordingChatModel(_Reporting):
    """``model``'s replies, each written into ``transcript`` (failures too) before returning.

    A request ``transcript`` already holds is answered from it without calling ``model``: a
    recording interrupted part-way is resumed instead of redone (a call cut by the server
    going away, a "connection" failure, is dropped first so that it is asked again; a
    timeout is the model's own outcome and stays).
    """

    RETRIED = ("connection",)

    def __init__(self, model: Any, transcript: Transcript) -> None:
        super().__init__()
        if not callable(getattr(model, "complete", None)):
            raise TypeError(f"model must have a complete(messages) method, got {model!r}")
        self.model, self.transcript = model, transcript
        self.name = getattr(model, "name", type(model).__name__)
        for key in [k for k, e in transcript.exchanges.items() if e.error_kind in self.RETRIED]:
            del transcript.exchanges[key]
        self._recorded = ReplayChatModel(transcript)

    def complete(self, messages: ChatMessages, *, max_tokens: int | None = None) -> str:
        key = request_key(messages, require_optional_int("max_tokens", max_tokens, minimum=1))
        self.calls += 1
        if key in self.transcript.exchanges:
            try:
                return self._recorded.complete(messages, max_tokens=max_tokens)
            finally:
                self.last_usage = self._recorded.last_usage
                self.last_finish_reason = self._recorded.last_finish_reason
        try:
            reply = self.model.complete(messages, max_tokens=max_tokens)
        except LLMCallFailed as exc:
            self.transcript.exchanges[key] = Exchange(_tail(messages), None, None, None, None,
                                                      exc.kind, str(exc))
            raise
        self.last_usage = getattr(self.model, "last_usage", None)
        self.last_finish_reason = getattr(self.model, "last_finish_reason", None)
        usage = self.last_usage
        self.transcript.exchanges[key] = Exchange(
            _tail(messages), reply, self.last_finish_reason,
            getattr(usage, "prompt_tokens", None), getattr(usage, "completion_tokens", None))
        return reply


class ReplayChatModel(_Reporting):
    """Answers from ``transcript`` only: the recorded reply, usage and finish reason, or the
    recorded failure; ``TranscriptMiss`` for a request never recorded."""

    def __init__(self, transcript: Transcript) -> None:
        super().__init__()
        if not isinstance(transcript, Transcript):
            raise TypeError(f"transcript must be a Transcript, got {transcript!r}")
        self.transcript = transcript
        self.name = f"openai:{transcript.model} (replayed)"

    def complete(self, messages: ChatMessages, *, max_tokens: int | None = None) -> str:
        key = request_key(messages, require_optional_int("max_tokens", max_tokens, minimum=1))
        self.calls += 1
        self.last_usage, self.last_finish_reason = None, None
        exchange = self.transcript.exchanges.get(key)
        if exchange is None:
            raise TranscriptMiss(
                f"no recorded reply for request {key} (last message {_tail(messages)!r}, "
                f"max_tokens={max_tokens}) in the {self.transcript.model} transcript: the "
                "request changed since it was recorded; re-record it against the live server")
        if exchange.reply is None:
            raise LLMCallFailed(exchange.error or "recorded failure",
                                kind=exchange.error_kind or "error")
        self.last_usage = Usage(exchange.prompt_tokens, exchange.completion_tokens)
        self.last_finish_reason = exchange.finish_reason
        return exchange.reply


def replay_or_live(path: str | Path, env: Mapping[str, str] | None = None, *,
                   record: bool = False, **client: Any) -> tuple[Any, str]:
    """The chat model a lesson's real-model section runs on, and a line saying which.

    With ``OPENAI_BASE_URL`` (or a key) in ``env`` (default the environment) the live model
    that ``choose_backend`` picks, wrapped in a ``RecordingChatModel`` when ``record`` (the
    transcript is then saved to ``path`` by the caller: ``model.transcript.save(path)``);
    otherwise a ``ReplayChatModel`` over the transcript at ``path``, also when the endpoint
    cannot even say which model it serves (the line then says why). ``client``:
    ``timeout``, ``max_retries`` for the live client.
    """
    from memorykit.llm.backend import choose_backend

    env = os.environ if env is None else env
    record = require_bool("record", record)
    why = ""
    try:
        live = choose_backend(env, **client)
    except LLMError as exc:
        live, why = None, f"the endpoint did not answer ({exc}); "
    if live is not None and live.kind == "openai":
        chat = live.chat
        if record:  # resumes the recording at ``path`` when there is one
            name = getattr(chat, "model", chat.name)
            old = Transcript.load(path) if Path(path).is_file() else None
            chat = RecordingChatModel(chat, old if old and old.model == name else Transcript(name))
        return chat, f"live: {live.description}"
    if record:
        raise ValueError(f"record=True needs a live model: set {ENV_BASE_URL} to a running "
                         f"server ({why or 'none is set'})")
    transcript = Transcript.load(path)
    return ReplayChatModel(transcript), why + (
        f"replaying {len(transcript)} recorded exchanges with {transcript.model} "
        f"({transcript.note}); set {ENV_BASE_URL} to a running server to run live")


__all__ = ["FORMAT", "Exchange", "RecordingChatModel", "ReplayChatModel", "Transcript",
           "TranscriptMiss", "replay_or_live", "request_key"]
