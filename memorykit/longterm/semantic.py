"""Semantic memory (D3, architecture C): embed raw text, recall by cosine similarity.

Every stored message is cut into **units** (its sentences, by default, or the
whole message), each unit is embedded and kept in a ``VectorStore`` with the id
of the message it came from. A query is embedded the same way and the units
whose cosine similarity is **strictly above** ``threshold`` (0.65, D3's
epsilon) are recalled, best first, at most ``recall_limit`` of them.

Why sentences by default: a planted fact is one sentence inside a longer
message, and similarity to a whole message is diluted by everything else it
says. Sentence units keep "The locker code at the gym is 4721." close to "What
is the locker code at the gym?" Each unit still cites its message, so recall
is scored against the original evidence.

The threshold belongs to the embedder. D3 chose 0.65 for all-MiniLM-L6-v2;
the offline default here, ``LexicalHashingEmbedder``, measures word overlap,
not meaning, and its cosines are on another scale (a question and the fact
that answers it typically share 60-85% of their weighted words). The benchmark
reports what 0.65 does with each embedder rather than pretending one number
fits all.

Taught in ``notebooks/09_long_term_memory.ipynb`` (the threshold) and
``notebooks/10_architectures.ipynb`` (architectures C and D).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from memorykit._validate import require_choice, require_int, require_real, require_str
from memorykit.embeddings import Embedder, LexicalHashingEmbedder
from memorykit.longterm.vectorstore import NumpyVectorStore, VectorStore
from memorykit.messages import ROLES, Message

def select_recalled(scores: Sequence[float], threshold: float, limit: int) -> list[int]:
    """Which candidates recall brings back: the positions in ``scores`` strictly above
    ``threshold``, best first (equal scores keep their order in ``scores``), at most ``limit``.

    Architecture C's rule (``SemanticArchitecture.recalled_parts``); lesson 10's
    build-it-yourself exercise rebuilds it and ``memorykit.classroom.contracts.longterm`` holds its
    contract.
    """
    thr = require_real("threshold", threshold)
    limit = require_int("limit", limit, minimum=0)
    values = [require_real("scores[]", s) for s in scores]
    above = sorted((i for i, s in enumerate(values) if s > thr), key=lambda i: -values[i])
    return above[:limit]


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\s*\n+\s*")
UNITS = ("sentence", "message")


@dataclass(frozen=True)
class SemanticSettings:
    """Every parameter of semantic memory (D3 defaults where it has them)."""

    threshold: float = 0.65
    """A unit is recalled when its cosine similarity to the query is strictly above this."""
    recall_limit: int = 5
    """At most this many units (the most similar) are recalled per query."""
    unit: str = "sentence"
    """What one vector stands for: each 'sentence' of a message, or the whole 'message'."""
    roles: tuple[str, ...] = ("user", "assistant")
    """Roles whose messages are embedded (tool payloads and instructions are not, by default)."""

    def __post_init__(self) -> None:
        # a cosine: above 1 nothing is ever recalled; below -1 everything is (the service
        # asks for that with -2), so only the top end is nonsense
        if require_real("threshold", self.threshold) > 1.0:
            raise ValueError(f"threshold must be <= 1 (a cosine), got {self.threshold!r}")
        require_int("recall_limit", self.recall_limit, minimum=0)
        require_choice("unit", self.unit, UNITS)
        if isinstance(self.roles, str) or not isinstance(self.roles, tuple) or not self.roles:
            raise TypeError(f"roles must be a non-empty tuple of roles, got {self.roles!r}")
        for r in self.roles:
            require_choice("roles[]", r, ROLES)


@dataclass(frozen=True)
class Recollection:
    """A recalled unit of text."""

    unit_id: str
    message_id: str
    role: str
    text: str
    score: float
    """Cosine similarity to the query."""
    sources: tuple[str, ...]
    """Original messages the unit stands for (its message, or a summary's sources)."""
    turn: int


def split_units(text: str, unit: str = "sentence") -> list[str]:
    """The units of a text: its non-empty sentences, or the whole (stripped) text."""
    require_str("text", text)
    require_choice("unit", unit, UNITS)
    if unit == "message":
        return [text.strip()] if text.strip() else []
    return [s.strip() for s in _SENTENCE_END.split(text) if s.strip()]


class SemanticMemory:
    """Units of text in a vector store, recalled by cosine similarity.

    ``embedder`` defaults to the offline ``LexicalHashingEmbedder`` (word
    overlap, not meaning); ``store`` to an exact ``NumpyVectorStore``.
    ``add(messages, payload=...)`` embeds all new units in one call; the extra
    payload (a session id, say) can be used as a ``where`` filter in ``recall``.
    """

    def __init__(
        self,
        settings: SemanticSettings | None = None,
        *,
        embedder: Embedder | None = None,
        store: VectorStore | None = None,
        key_prefix: str = "",
    ) -> None:
        self.key_prefix = require_str("key_prefix", key_prefix)
        """Prepended to unit ids, so several memories can share one store (one per session)."""
        self.settings = settings if settings is not None else SemanticSettings()
        if not isinstance(self.settings, SemanticSettings):
            raise TypeError(f"settings must be SemanticSettings, got {settings!r}")
        self.embedder: Embedder = embedder if embedder is not None else LexicalHashingEmbedder()
        if not callable(getattr(self.embedder, "embed", None)):
            raise TypeError(f"embedder must have an embed(texts) method, got {embedder!r}")
        self.store: VectorStore = (
            store if store is not None else NumpyVectorStore(self.embedder.dimension)
        )
        if not callable(getattr(self.store, "search", None)):
            raise TypeError(f"store must be a VectorStore, got {store!r}")
        if self.store.dimension != self.embedder.dimension:
            raise ValueError(
                f"store.dimension must equal embedder.dimension ({self.embedder.dimension}), "
                f"got {self.store.dimension}"
            )
        self.units_of: dict[str, int] = {}
        """How many units each stored message produced (0: not embedded, e.g. a tool payload)."""
        self.embedded_count = 0
        self._unconfirmed: set[str] = set()
        # Ids of messages whose last write failed: the store may hold some of their units,
        # which are discarded before the next attempt (ids must not clash).

    def stores(self, message: Message) -> bool:
        """Would ``add`` embed this message (is its role one of ``settings.roles``)?"""
        return message.role in self.settings.roles

    def add(
        self, messages: Sequence[Message], payload: Mapping[str, Any] | None = None
    ) -> list[str]:
        """Embed and store the units of ``messages``; returns the new unit ids.

        All or nothing: a message counts as stored (``units_of``) only once the
        store has accepted every unit of the call. When the embedder or the store
        fails, the error propagates and no message of the call is marked stored,
        so the caller can try the same messages again; units a failed write may
        have left behind are discarded before that retry.
        """
        if isinstance(messages, Message):
            messages = [messages]
        ids: list[str] = []
        texts: list[str] = []
        payloads: list[dict[str, Any]] = []
        extra = dict(payload or {})
        counts: dict[str, int] = {}
        for m in messages:
            if type(m) is not Message:
                raise TypeError(f"messages must hold Message records, got {m!r}")
            if m.id in self.units_of or m.id in counts:
                raise ValueError(f"message {m.id!r} is already stored")
            units = split_units(m.content, self.settings.unit) if self.stores(m) else []
            counts[m.id] = len(units)
            for k, text in enumerate(units):
                ids.append(f"{self.key_prefix}{m.id}#{k}")
                texts.append(text)
                payloads.append({
                    **extra, "message_id": m.id, "role": m.role, "text": text,
                    "sources": list(m.covers), "turn": m.turn, "created_at": m.created_at,
                })
        if ids:
            vectors = self._checked_vectors(self.embedder.embed(texts), len(texts))
            unconfirmed = self._unconfirmed
            if unconfirmed:
                retried = [f"{self.key_prefix}{mid}#{k}" for mid, n in counts.items()
                           if mid in unconfirmed for k in range(n)]
                if retried:
                    self.store.discard(retried)
            try:
                self.store.add(ids, vectors, payloads)
            except BaseException:
                # the store may hold some of these units now: clean them up before a retry
                unconfirmed.update(mid for mid, n in counts.items() if n)
                raise
            unconfirmed.difference_update(counts)
            self.embedded_count += len(ids)
        self.units_of.update(counts)
        return ids

    def _unit_ids(self, message_ids: Sequence[str]) -> list[str]:
        return [f"{self.key_prefix}{mid}#{k}" for mid in message_ids
                for k in range(self.units_of.get(mid, 0))]

    def drop(self, message_ids: Sequence[str]) -> int:
        """Remove every unit of these stored messages on purpose (a later statement replaced
        them: the caller records why); returns how many units the store removed. They count as
        not stored (``units_of`` 0) once the store has confirmed; a failure propagates and
        changes nothing here, so the caller can try again."""
        removed = self.store.discard(self._unit_ids(message_ids))
        for mid in message_ids:
            if mid in self.units_of:
                self.units_of[mid] = 0
        return removed

    def annotate(self, message_ids: Sequence[str], fields: Mapping[str, Any]) -> bool:
        """Add ``fields`` to the payload of every unit of these messages (a superseded entry's
        ``valid_until`` and ``superseded_by``) where the store can (``set_payload``); returns
        whether it could."""
        set_payload = getattr(self.store, "set_payload", None)
        ids = self._unit_ids(message_ids)
        if set_payload is None or not ids:
            return False
        set_payload(ids, dict(fields))
        return True

    def embed_query(self, query: str) -> np.ndarray:
        require_str("query", query)
        return self._checked_vectors(self.embedder.embed([query]), 1)[0]

    def _checked_vectors(self, vectors: Any, n: int) -> np.ndarray:
        """The embedder's answer for ``n`` texts, refused unless it is n finite rows of the right size."""
        matrix = np.asarray(vectors, dtype=np.float32)
        if matrix.shape != (n, self.embedder.dimension):
            raise ValueError(f"embedder returned shape {matrix.shape} for {n} texts, expected "
                             f"({n}, {self.embedder.dimension})")
        if not np.all(np.isfinite(matrix)):
            raise ValueError(f"embedder returned NaN or inf for "
                             f"{int((~np.isfinite(matrix)).any(axis=1).sum())} of {n} texts")
        return matrix

    def recall(
        self,
        query: str,
        *,
        limit: int | None = None,
        threshold: float | None | str = "settings",
        where: Mapping[str, Any] | None = None,
        exclude: set[str] | frozenset[str] = frozenset(),
        vector: np.ndarray | None = None,
    ) -> list[Recollection]:
        """Units most similar to ``query``, best first.

        ``threshold`` defaults to ``settings.threshold``; ``None`` turns it off
        (every unit is ranked). Units of messages in ``exclude`` (for example
        those already in the short-term window) are skipped, not counted.
        """
        limit = self.settings.recall_limit if limit is None else require_int("limit", limit, minimum=0)
        if threshold == "settings":
            threshold = self.settings.threshold
        q = self.embed_query(query) if vector is None else vector
        if limit == 0 or len(self.store) == 0:
            return []
        skip = sum(self.units_of.get(i, 0) for i in exclude)
        hits = self.store.search(q, limit + skip, threshold=threshold, where=where)  # type: ignore[arg-type]
        out = []
        for h in hits:
            p = h.payload
            if p["message_id"] in exclude:
                continue
            out.append(Recollection(h.id, p["message_id"], p["role"], p["text"], h.score,
                                    tuple(p["sources"]), int(p["turn"])))
            if len(out) == limit:
                break
        return out

    def reset(self) -> None:
        """Forget everything: clears the whole store (do not call on a shared store)."""
        clear = getattr(self.store, "clear", None)
        if clear is None:
            raise TypeError(f"{self.store!r} cannot be cleared; give the memory a new store")
        clear()
        self.units_of.clear()
        self._unconfirmed.clear()

    def __repr__(self) -> str:
        return (
            f"SemanticMemory(units={len(self.store)}, threshold={self.settings.threshold:g}, "
            f"embedder={getattr(self.embedder, 'name', self.embedder)!r})"
        )


__all__ = ["Recollection", "SemanticMemory", "SemanticSettings", "UNITS", "split_units"]
