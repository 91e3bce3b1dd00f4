"""Exact token accounting, offline.

Counts come from tiktoken with the official BPE files shipped inside the package
(their sha256 is checked on load), so nothing is downloaded and counts equal the
ones OpenAI bills. Taught in ``notebooks/01_tokens_and_budgets.ipynb``.

Three ideas live here:

* ``Tokenizer``: content tokens of a text, for one encoding (``MemoCounter`` remembers
  the counts of texts counted before, for replays that count the same texts again).
* ``ChatFormat``: the per-message framing (role and separators) and the reply
  primer that the chat API adds, which turn content tokens into billed tokens.
* ``ContextBudget``: how a model's context window is shared between system
  prompt, tools, retrieved context, memory, user input and the response reserve.
"""

from __future__ import annotations

import base64
import hashlib
import os
import tempfile
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from typing import Any, Protocol, runtime_checkable

import tiktoken

from memorykit._validate import require_int, require_real, require_str

_ENDOFTEXT = "<|endoftext|>"
_ENDOFPROMPT = "<|endofprompt|>"

# Pattern strings and special tokens are the ones tiktoken_ext/openai_public.py
# declares; only the BPE ranks are loaded from disk.
_CL100K_PATTERN = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"""
    r"""|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)
_O200K_PATTERN = "|".join(
    [
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]
)


@dataclass(frozen=True)
class EncodingSpec:
    """Where an official encoding comes from and how to check it."""

    name: str
    url: str
    """The address tiktoken downloads from; its sha1 names tiktoken's cache file."""
    sha256: str
    """tiktoken's own expected hash of the BPE file."""
    pattern: str
    special_tokens: dict[str, int] = field(default_factory=dict)


ENCODINGS: dict[str, EncodingSpec] = {
    "cl100k_base": EncodingSpec(
        "cl100k_base",
        "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken",
        "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
        _CL100K_PATTERN,
        {
            _ENDOFTEXT: 100257,
            "<|fim_prefix|>": 100258,
            "<|fim_middle|>": 100259,
            "<|fim_suffix|>": 100260,
            _ENDOFPROMPT: 100276,
        },
    ),
    "o200k_base": EncodingSpec(
        "o200k_base",
        "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken",
        "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
        _O200K_PATTERN,
        {_ENDOFTEXT: 199999, _ENDOFPROMPT: 200018},
    ),
}


class EncodingIntegrityError(ValueError):
    """A BPE file on disk does not have the official sha256."""


def _tiktoken_cache_path(spec: EncodingSpec) -> str | None:
    """The file tiktoken itself would have cached for this encoding, if caching is on."""
    cache_dir = os.environ.get("TIKTOKEN_CACHE_DIR", os.environ.get("DATA_GYM_CACHE_DIR"))
    if cache_dir is None:
        cache_dir = os.path.join(tempfile.gettempdir(), "data-gym-cache")
    if cache_dir == "":
        return None
    return os.path.join(cache_dir, hashlib.sha1(spec.url.encode()).hexdigest())


def _read_verified_bpe(spec: EncodingSpec) -> tuple[bytes, str]:
    """The BPE file's bytes and where they came from; never touches the network."""
    cached = _tiktoken_cache_path(spec)
    if cached and os.path.isfile(cached):
        with open(cached, "rb") as fh:
            data = fh.read()
        # A corrupt cache entry is tiktoken's problem to refetch; we fall back to our copy.
        if hashlib.sha256(data).hexdigest() == spec.sha256:
            return data, cached
    packaged = resources.files("memorykit") / "encodings" / f"{spec.name}.tiktoken"
    data = packaged.read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    if digest != spec.sha256:
        raise EncodingIntegrityError(
            f"{packaged} has sha256 {digest}, expected {spec.sha256}: the packaged "
            f"{spec.name} file is corrupt; reinstall memorykit"
        )
    return data, str(packaged)


def _parse_bpe(data: bytes) -> dict[bytes, int]:
    return {
        base64.b64decode(token): int(rank)
        for token, rank in (line.split() for line in data.splitlines() if line)
    }


@lru_cache(maxsize=None)
def load_encoding(name: str) -> tiktoken.Encoding:
    """An official tiktoken encoding, built offline and verified by sha256.

    Uses tiktoken's own cache file when a valid one is present, else the copy
    shipped in ``memorykit/encodings``. Loaded once per process.
    """
    if name not in ENCODINGS:
        raise ValueError(f"encoding must be one of {', '.join(sorted(ENCODINGS))}, got {name!r}")
    spec = ENCODINGS[name]
    data, _source = _read_verified_bpe(spec)
    return tiktoken.Encoding(
        name=spec.name,
        pat_str=spec.pattern,
        mergeable_ranks=_parse_bpe(data),
        special_tokens=spec.special_tokens,
    )


@dataclass(frozen=True)
class ModelEncoding:
    """Which encoding a model uses, and whether that is known or a guess."""

    model: str
    encoding: str
    approximate: bool
    """True when the model is unknown and cl100k_base stands in for its tokenizer."""


_O200K_PREFIXES = ("gpt-4o", "gpt-4.1", "gpt-4.5", "gpt-5", "chatgpt-4o", "o1", "o3", "o4")
_CL100K_PREFIXES = ("gpt-4", "gpt-3.5", "gpt-35", "text-embedding-3", "text-embedding-ada-002")


def encoding_for_model(model: str) -> ModelEncoding:
    """Map a model name to its encoding (longest family first: gpt-4o before gpt-4).

    gpt-4o / gpt-4.1 / gpt-5 / o-series use o200k_base; gpt-4 and gpt-3.5 use
    cl100k_base; anything else gets cl100k_base flagged ``approximate=True``.
    """
    require_str("model", model, non_empty=True)
    lowered = model.strip().lower()
    if lowered.startswith(_O200K_PREFIXES):
        return ModelEncoding(model, "o200k_base", False)
    if lowered.startswith(_CL100K_PREFIXES):
        return ModelEncoding(model, "cl100k_base", False)
    return ModelEncoding(model, "cl100k_base", True)


@runtime_checkable
class TokenCounter(Protocol):
    """Counts the tokens of a text. ``encoding`` names what it counts in."""

    encoding: str

    def count(self, text: str) -> int: ...


class Tokenizer:
    """Exact content-token counts for one official encoding.

    Special-token strings such as ``<|endoftext|>`` in user text are counted as
    ordinary text (``encode_ordinary``), as the chat API treats them.
    """

    def __init__(self, encoding: str = "cl100k_base") -> None:
        self._encoding = load_encoding(encoding)
        self.encoding = encoding
        self._encode = self._encoding.encode_ordinary

    @classmethod
    def for_model(cls, model: str) -> Tokenizer:
        return cls(encoding_for_model(model).encoding)

    def count(self, text: str) -> int:
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, got {text!r} ({type(text).__name__})")
        return len(self._encode(text))

    def encode(self, text: str) -> list[int]:
        return self._encode(text)

    def decode(self, tokens: list[int]) -> str:
        return self._encoding.decode(tokens)

    def __reduce__(self) -> tuple[Any, ...]:
        # described by its encoding's name and rebuilt (the encoding's tables are not state)
        return (Tokenizer, (self.encoding,))

    def __repr__(self) -> str:
        return f"Tokenizer({self.encoding!r})"


class MemoCounter:
    """A ``TokenCounter`` that remembers the counts of the last ``maxsize`` texts it counted.

    Replays count the same texts again and again (a summary is counted by the summarizer,
    then by the buffer that stores it; a lesson's slider replays one conversation under
    many settings), and tokenizing is the costly part of counting. Counts are exact: the
    memo returns what ``counter.count(text)`` returned for the same text.

    Bounded: at most ``maxsize`` texts are remembered, the least recently used leave first
    (``functools.lru_cache``), so a long session's memory stays flat.
    """

    def __init__(self, counter: TokenCounter | None = None, *, maxsize: int = 65_536) -> None:
        if counter is not None and not callable(getattr(counter, "count", None)):
            raise TypeError(f"counter must have a count(text) method, got {counter!r}")
        self.counter: TokenCounter = counter if counter is not None else Tokenizer()
        """The counter asked for texts not remembered."""
        self.maxsize = require_int("maxsize", maxsize, minimum=1)
        """Texts remembered at most (least recently used leave first)."""
        self.encoding = getattr(self.counter, "encoding", "?")
        self._count = lru_cache(maxsize=self.maxsize)(self.counter.count)

    def count(self, text: str) -> int:
        if type(text) is not str:
            raise TypeError(f"text must be a str, got {text!r} ({type(text).__name__})")
        return self._count(text)

    def cache_info(self) -> Any:
        """Hits, misses and size of the memo (``functools.lru_cache``'s ``cache_info``)."""
        return self._count.cache_info()

    def __reduce__(self) -> tuple[Any, ...]:
        # the memo is a cache, not state: a restored counter starts empty and counts the same
        return (MemoCounter, (self.counter,), {"maxsize": self.maxsize})

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(self.counter, maxsize=state["maxsize"])  # type: ignore[misc]

    def __repr__(self) -> str:
        return f"MemoCounter({self.counter!r}, maxsize={self.maxsize})"


@dataclass(frozen=True)
class ChatFormat:
    """The chat API's framing cost, in tokens, on top of the message contents.

    Defaults follow OpenAI's published accounting for gpt-3.5-turbo-0613 and
    later chat models: each message costs 3 tokens of framing plus its role
    (and name, if any); every reply is primed with 3 more tokens.
    """

    tokens_per_message: int = 3
    """Framing tokens around every message (start, separator, end)."""
    tokens_per_name: int = 1
    """Extra tokens when a message carries a ``name`` field."""
    reply_primer: int = 3
    """Tokens that prime the assistant's reply, paid once per request."""
    tokens_per_tool_call: int = 3
    """Framing tokens around each tool call an assistant message issues, on top of the
    function's name and its arguments (counted with the tokenizer). An estimate: OpenAI does
    not publish how calls are rendered into the prompt; compare with the provider's
    ``usage.prompt_tokens`` to calibrate it."""

    def __post_init__(self) -> None:
        for name in ("tokens_per_message", "tokens_per_name", "reply_primer",
                     "tokens_per_tool_call"):
            require_int(name, getattr(self, name), minimum=0)

    def message_overhead(self, role_tokens: int, has_name: bool = False) -> int:
        return self.tokens_per_message + role_tokens + (self.tokens_per_name if has_name else 0)

    def tool_call_tokens(self, counter: TokenCounter, name: str, arguments: str) -> int:
        """Billed tokens of one tool call: its function name, its JSON arguments and framing."""
        return self.tokens_per_tool_call + counter.count(name) + counter.count(arguments)


_ROLE_TOKENS = {"system": 1, "user": 1, "assistant": 1, "tool": 1}


def role_tokens(counter: TokenCounter, role: str) -> int:
    """Tokens of the role string; every role memorykit knows is one token in both encodings."""
    if role in _ROLE_TOKENS:
        return _ROLE_TOKENS[role]
    return counter.count(role)


def count_chat_tokens(
    messages: list[dict[str, Any]],
    counter: TokenCounter,
    chat_format: ChatFormat = ChatFormat(),
) -> int:
    """Billed prompt tokens of a list of OpenAI-style chat message dicts.

    The dicts are ``{"role", "content"[, "name"][, "tool_calls"]}``; the count is the same
    ``MessageFactory`` gives each message, plus the reply primer."""
    total = chat_format.reply_primer
    for message in messages:
        total += chat_format.message_overhead(
            role_tokens(counter, message["role"]), "name" in message
        ) + counter.count(message.get("content") or "")
        if "name" in message:
            total += counter.count(message["name"])
        for call in message.get("tool_calls") or ():
            function = call["function"]
            total += chat_format.tool_call_tokens(counter, function["name"], function["arguments"])
    return total


@dataclass(frozen=True)
class ContextBudget:
    """How one request's context window is shared (D4's 128K picture).

    The memory share is what a conversation buffer's ``max_tokens`` should be.
    """

    context_window: int = 128_000
    """The model's maximum tokens per request, prompt and reply together."""
    system_prompt: int = 500
    """Tokens of the system prompt."""
    tools: int = 1_000
    """Tokens of the tool (function) definitions."""
    retrieved: int = 2_000
    """Tokens of retrieved (RAG) context."""
    memory: int = 2_000
    """Tokens reserved for conversation memory: the buffer's budget."""
    user_input: int = 1_500
    """Tokens reserved for the current user input."""
    strict: bool = True
    """Raise when the prompt parts add up to more than the window. ``False`` keeps such a plan
    so it can be shown (``fits`` is False, ``response_reserve`` negative)."""

    def __post_init__(self) -> None:
        require_int("context_window", self.context_window, minimum=1)
        for name in ("system_prompt", "tools", "retrieved", "memory", "user_input"):
            require_int(name, getattr(self, name), minimum=0)
        if not isinstance(self.strict, bool):
            raise TypeError(f"strict must be a bool, got {self.strict!r}")
        if self.strict and not self.fits:
            raise ValueError(
                f"the prompt parts add up to {self.prompt_tokens} tokens, more than "
                f"context_window={self.context_window}"
            )

    @classmethod
    def with_memory_share(cls, context_window: int, memory_share: float, **parts: Any) -> ContextBudget:
        """A budget whose memory part is ``memory_share`` of the window (rounded to a token)."""
        share = require_real("memory_share", memory_share)
        if not 0.0 <= share <= 1.0:
            raise ValueError(f"memory_share must be in [0, 1], got {memory_share!r}")
        require_int("context_window", context_window, minimum=1)
        return cls(context_window, memory=int(round(share * context_window)), **parts)

    @property
    def prompt_tokens(self) -> int:
        return self.system_prompt + self.tools + self.retrieved + self.memory + self.user_input

    @property
    def response_reserve(self) -> int:
        """What is left for the reply once every prompt part is placed (negative: overflow)."""
        return self.context_window - self.prompt_tokens

    @property
    def fits(self) -> bool:
        return self.response_reserve >= 0

    def shares(self) -> dict[str, int]:
        """Tokens per part of the window; an overflowing plan leaves no response reserve."""
        return {
            "system prompt": self.system_prompt,
            "tools": self.tools,
            "retrieved": self.retrieved,
            "memory": self.memory,
            "user input": self.user_input,
            "response reserve": max(0, self.response_reserve),
        }

    def fractions(self) -> dict[str, float]:
        return {k: v / self.context_window for k, v in self.shares().items()}
