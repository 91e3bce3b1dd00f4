"""Embedders: texts to unit vectors, so similarity is a dot product.

``Embedder`` is the protocol (``embed(texts) -> (n, d) float32`` with
L2-normalised rows, plus ``name`` and ``dimension``). A neural or API-backed
embedder fits it; this module ships one offline embedder:

``LexicalHashingEmbedder`` measures **word overlap, not meaning**. Each
lowercased word (and, by default, each pair of adjacent words) is hashed with
BLAKE2b into one of ``dimension`` slots with a +/-1 sign (the "hashing trick"),
weighted by 1 + log(count), and the vector is L2-normalised. "car" and
"automobile" share nothing; "Paris trip" and "trip to Paris" share a lot.
The hash is stable across processes (Python's ``hash()`` is salted per process
and would make results change from run to run).

``MemoEmbedder`` wraps any embedder and remembers the vector of each text it embedded
(bounded, least recently used first out), for replays that embed the same texts again.

Taught in ``notebooks/03_summary_buffer.ipynb`` (the attention window).
"""

from __future__ import annotations

import hashlib
import math
import threading
from collections import Counter, OrderedDict
from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np

from memorykit._text import STOPWORDS, words
from memorykit._locks import without_locks
from memorykit._validate import require_bool, require_int, require_non_negative


@runtime_checkable
class Embedder(Protocol):
    """Texts to an (n, dimension) float32 array whose non-zero rows have norm 1."""

    name: str
    dimension: int

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...


MAX_DIMENSION = 1 << 20
"""The longest embedding memorykit accepts (4 MiB per float32 row): the slots
``LexicalHashingEmbedder`` hashes into, the size ``OpenAIEmbedder`` expects."""


class LexicalHashingEmbedder:
    """A lexical (word-overlap) embedder, not a semantic one; deterministic and offline.

    Features are lowercased words, minus common stop words when ``stopwords``
    is True, plus adjacent-word bigrams (weight ``bigram_weight``) when
    ``bigrams`` is True. A text with no features embeds to the zero vector
    (its similarity to anything is 0).
    """

    def __init__(
        self,
        dimension: int = 512,
        *,
        bigrams: bool = True,
        bigram_weight: float = 0.5,
        stopwords: bool = True,
    ) -> None:
        # each embedding is a dense row of this size: past a million slots it is a typo
        self.dimension = require_int("dimension", dimension, minimum=2, maximum=MAX_DIMENSION)
        self.bigrams = require_bool("bigrams", bigrams)
        self.bigram_weight = require_non_negative("bigram_weight", bigram_weight)
        self.stopwords = require_bool("stopwords", stopwords)
        self.name = f"lexical-hashing-{self.dimension}" + ("+bigrams" if self.bigrams else "")
        self._slots: dict[str, tuple[int, float]] = {}

    def _slot(self, feature: str) -> tuple[int, float]:
        slot = self._slots.get(feature)
        if slot is None:
            h = int.from_bytes(hashlib.blake2b(feature.encode(), digest_size=8).digest(), "little")
            slot = (h % self.dimension, 1.0 if (h >> 63) & 1 else -1.0)
            if len(self._slots) < 1_000_000:
                self._slots[feature] = slot
        return slot

    def features(self, text: str) -> Counter[str]:
        """Feature counts of one text (what the vector is made of)."""
        toks = [w.lower() for w in words(text)]
        if self.stopwords:
            toks = [w for w in toks if w not in STOPWORDS]
        counts: Counter[str] = Counter(toks)
        if self.bigrams:
            counts.update(f"{a} {b}" for a, b in zip(toks, toks[1:]))
        return counts

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if isinstance(texts, str):
            raise TypeError(f"texts must be a sequence of str, not one str: got {texts!r}")
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for row, text in enumerate(texts):
            if not isinstance(text, str):
                raise TypeError(f"texts must hold str, got {text!r} ({type(text).__name__})")
            vec = out[row]
            for feature, n in self.features(text).items():
                index, sign = self._slot(feature)
                weight = 1.0 + math.log(n)
                if " " in feature:
                    weight *= self.bigram_weight
                vec[index] += sign * weight
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        np.divide(out, norms, out=out, where=norms > 0)
        return out

    def __repr__(self) -> str:
        return f"LexicalHashingEmbedder(dimension={self.dimension}, bigrams={self.bigrams})"


class MemoEmbedder:
    """An ``Embedder`` that remembers the vector of each of the last ``maxsize`` texts.

    A replay embeds the same texts again (a lesson's slider rebuilds a memory over one
    conversation under many settings); each text is embedded once, the texts not
    remembered in one call to ``embedder``. Vectors are the embedder's own: this is exact
    for embedders that embed each text on its own (``LexicalHashingEmbedder``, and the
    API and sentence-transformer embedders up to their batching noise).

    Bounded: at most ``maxsize`` vectors are remembered, the least recently used leave
    first. Every call returns a new array, so a caller writing into it changes nothing here.
    Safe from several threads (the memo's order is updated under a lock; the wrapped
    embedder is called outside it, so it must be thread-safe itself).
    """

    def __init__(self, embedder: Embedder | None = None, *, maxsize: int = 16_384) -> None:
        if embedder is not None and not callable(getattr(embedder, "embed", None)):
            raise TypeError(f"embedder must have an embed(texts) method, got {embedder!r}")
        self.embedder: Embedder = embedder if embedder is not None else LexicalHashingEmbedder()
        """The embedder asked for texts not remembered."""
        self.maxsize = require_int("maxsize", maxsize, minimum=1)
        """Vectors remembered at most (least recently used leave first)."""
        self.name = self.embedder.name
        self.dimension = self.embedder.dimension
        self._rows: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    def __getstate__(self) -> dict[str, Any]:
        return without_locks(self.__dict__)

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if isinstance(texts, str):
            raise TypeError(f"texts must be a sequence of str, not one str: got {texts!r}")
        rows = self._rows
        missing: list[str] = []
        found: dict[str, np.ndarray] = {}
        for text in texts:
            if type(text) is not str:
                raise TypeError(f"texts must hold str, got {text!r} ({type(text).__name__})")
        with self._lock:
            for text in texts:
                row = rows.get(text)
                if row is not None:
                    rows.move_to_end(text)
                    found[text] = row
                elif text not in found and text not in missing:
                    missing.append(text)
        if missing:
            vectors = np.asarray(self.embedder.embed(missing))
            if vectors.shape != (len(missing), self.dimension):
                raise ValueError(f"embedder returned shape {vectors.shape} for {len(missing)} "
                                 f"texts, expected ({len(missing)}, {self.dimension})")
            with self._lock:
                for text, vector in zip(missing, vectors):
                    found[text] = rows[text] = vector
                while len(rows) > self.maxsize:
                    rows.popitem(last=False)
        if not len(texts):
            return np.zeros((0, self.dimension), dtype=np.float32)
        return np.stack([found[t] for t in texts])

    def __repr__(self) -> str:
        return f"MemoEmbedder({self.embedder!r}, maxsize={self.maxsize})"


def cosine_similarity(matrix: np.ndarray, vector: np.ndarray) -> np.ndarray:
    """Cosine of each row of ``matrix`` (n, d) with ``vector`` (d,); 0 where a norm is 0."""
    m = np.asarray(matrix, dtype=np.float64)
    v = np.asarray(vector, dtype=np.float64)
    if m.ndim != 2:
        raise ValueError(f"matrix must be 2-D (n, d), got shape {m.shape}")
    if v.ndim != 1 or v.shape[0] != m.shape[1]:
        raise ValueError(f"vector must have shape ({m.shape[1]},), got {v.shape}")
    norms = np.linalg.norm(m, axis=1) * np.linalg.norm(v)
    dots = m @ v
    out = np.zeros(m.shape[0])
    np.divide(dots, norms, out=out, where=norms > 0)
    return out


__all__ = ["Embedder", "LexicalHashingEmbedder", "MemoEmbedder", "cosine_similarity"]
