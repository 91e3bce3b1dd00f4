"""The attention window: show the model the parts of memory that match the question.

Instead of the whole window, ``AttentionWindow.select(query)`` ranks the
buffer's messages by cosine similarity to the query and fills a token budget
with the best hits, each with its neighbours (+-1 message by default) so a hit
keeps its surrounding context, then returns them in conversation order (seed
001). Embeddings are computed in one call and cached by message id, so asking
again costs one query embedding and one matrix-vector product.

Two guarantees the seed's sketch lacks: a tool call and its results are
selected together (a result without its call is an invalid prompt), and the
budget, in billed tokens, always holds.

Taught in ``notebooks/03_summary_buffer.ipynb``, section "The attention window: what matches
the question" (facts found per budget and neighbours, against a recency window), and its
Exercise 3.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np

from memorykit._validate import require_bool, require_int, require_str
from memorykit.buffers.base import MessageBuffer
from memorykit.buffers.summary_buffer import tool_units
from memorykit.embeddings import Embedder, LexicalHashingEmbedder
from memorykit.messages import Message


@dataclass(frozen=True)
class AttentionSelection:
    """What ``select_with_scores`` chose, and why."""

    messages: list[Message]
    """The selection, in conversation order."""
    scores: dict[str, float]
    """Cosine similarity of every kept message to the query."""
    hits: list[str]
    """Ids selected as hits (not just neighbours), best first."""
    tokens: int
    """Billed tokens of the selection."""
    budget: int

    @property
    def ids(self) -> list[str]:
        return [m.id for m in self.messages]


@dataclass(frozen=True)
class _Layout:
    """Everything selection needs that does not depend on the query, for one buffer state.

    Rows index ``kept``; a unit (a message, or a tool call with its results) is a list of rows.
    """

    kept: tuple[Message, ...]
    """The buffer's messages when the layout was built (the key it is reused under)."""
    include_pinned: bool
    """The window's ``include_pinned`` when the layout was built (also part of the key)."""
    ids: tuple[str, ...]
    """Each kept message's id."""
    matrix: np.ndarray
    """One embedding row per kept message."""
    norms: np.ndarray
    """Each row's Euclidean norm."""
    pinned_rows: tuple[int, ...]
    """Rows included before any hit (pinned messages, when ``include_pinned``)."""
    unit_rows: tuple[tuple[int, ...], ...]
    """The other messages grouped into tool units, in conversation order."""
    cost: tuple[int, ...]
    """Each unit's billed tokens."""
    member_rows: np.ndarray
    """Every unit's rows concatenated: a unit scores the best of its members (``reduceat``)."""
    unit_starts: np.ndarray
    """Where each unit starts in ``member_rows``."""

    @classmethod
    def build(cls, kept: tuple[Message, ...], matrix: np.ndarray, include_pinned: bool,
              is_pinned: Callable[[Message], bool]) -> _Layout:
        row = {m.id: r for r, m in enumerate(kept)}
        pinned = tuple(r for r, m in enumerate(kept) if include_pinned and is_pinned(m))
        skip = set(pinned)
        units = tuple(tuple(row[m.id] for m in u)
                      for u in tool_units([m for r, m in enumerate(kept) if r not in skip]))
        starts = np.cumsum([0] + [len(u) for u in units[:-1]], dtype=np.intp)
        return cls(kept, include_pinned, tuple(row), matrix, np.linalg.norm(matrix, axis=1),
                   pinned, units, tuple(sum(kept[r].billed_tokens for r in u) for u in units),
                   np.fromiter((r for u in units for r in u), dtype=np.intp), starts)


class AttentionWindow:
    """Select the messages most similar to a query within ``window_tokens``.

    Units are messages, except that a tool call and its results form one unit
    scored by its best member. Hits are taken best first (ties: older first);
    each hit unit is added, then its neighbour units nearest first (before,
    then after), each only if it fits. As in the seed, selection stops at the
    first hit that no longer fits. Pinned system messages are included first
    when ``include_pinned`` is True (and they fit): instructions should reach
    the model whatever the query.

    ``vectors`` are embeddings already computed, by message id (a harness that embeds a
    whole conversation in one call passes them); they are copied, never modified.
    What does not depend on the query (the buffer's tool units, their costs, the stacked
    vectors and their norms) is kept until the buffer's messages change, so a question
    costs one query embedding, one matrix-vector product and the greedy fill.
    """

    def __init__(
        self,
        buffer: MessageBuffer,
        embedder: Embedder | None = None,
        window_tokens: int = 2000,
        neighbours: int = 1,
        *,
        include_pinned: bool = True,
        vectors: Mapping[str, np.ndarray] | None = None,
    ) -> None:
        if not isinstance(buffer, MessageBuffer):
            raise TypeError(f"buffer must be a MessageBuffer, got {buffer!r}")
        self.buffer = buffer
        self.embedder: Embedder = embedder if embedder is not None else LexicalHashingEmbedder()
        if not callable(getattr(self.embedder, "embed", None)):
            raise TypeError(f"embedder must have an embed(texts) method, got {embedder!r}")
        self.window_tokens = require_int("window_tokens", window_tokens, minimum=1)
        self.neighbours = require_int("neighbours", neighbours, minimum=0)
        self.include_pinned = require_bool("include_pinned", include_pinned)
        self._cache: dict[str, np.ndarray] = dict(vectors) if vectors is not None else {}
        self._layout: _Layout | None = None
        self.embedded_count = 0
        """How many message texts were ever embedded (the cache's effect, for the notebook)."""

    def _vectors(self, messages: list[Message]) -> np.ndarray:
        missing = [m for m in messages if m.id not in self._cache]
        if missing:
            vecs = np.asarray(self.embedder.embed([m.content for m in missing]), dtype=np.float32)
            if vecs.shape[0] != len(missing):
                raise ValueError(
                    f"embedder returned {vecs.shape[0]} rows for {len(missing)} texts"
                )
            self.embedded_count += len(missing)
            for m, v in zip(missing, vecs):
                self._cache[m.id] = v
        if len(self._cache) > 2 * len(messages) + 64:
            keep = {m.id for m in messages}
            self._cache = {k: v for k, v in self._cache.items() if k in keep}
        return np.stack([self._cache[m.id] for m in messages])

    def _current_layout(self) -> _Layout | None:
        """The layout of the buffer as it is now: rebuilt only when its messages changed (an
        add, an eviction, an importance update) or ``include_pinned`` did, so asking many
        questions of one buffer pays for the query alone."""
        kept = tuple(self.buffer)
        if not kept:
            return None
        cached = self._layout
        # tuple == compares identical messages by identity first: O(n) in C, no Python loop
        if cached is not None and cached.include_pinned == self.include_pinned \
                and cached.kept == kept:
            return cached
        self._layout = _Layout.build(kept, self._vectors(list(kept)), self.include_pinned,
                                     self.buffer.is_pinned)
        return self._layout

    def _similarities(self, layout: _Layout, query: str) -> np.ndarray:
        """Cosine similarity of each of ``layout.kept`` to ``query`` (0 for a zero vector)."""
        q = np.asarray(self.embedder.embed([query]), dtype=np.float32)[0]
        norms = layout.norms * float(np.linalg.norm(q))
        raw = layout.matrix @ q
        return np.divide(raw, norms, out=np.zeros_like(raw), where=norms > 0)

    def scores(self, query: str) -> dict[str, float]:
        """Cosine similarity of every kept message to ``query``."""
        require_str("query", query)
        layout = self._current_layout()
        if layout is None:
            return {}
        return dict(zip(layout.ids, self._similarities(layout, query).tolist()))

    def select_with_scores(self, query: str) -> AttentionSelection:
        require_str("query", query)
        budget = self.window_tokens
        layout = self._current_layout()
        if layout is None:
            return AttentionSelection([], {}, [], 0, budget)
        sims = self._similarities(layout, query)
        rows: list[int] = []
        used = 0
        for r in layout.pinned_rows:
            if used + layout.kept[r].billed_tokens <= budget:
                rows.append(r)
                used += layout.kept[r].billed_tokens
        units, cost = layout.unit_rows, layout.cost
        chosen: set[int] = set()
        hits: list[str] = []
        if units:
            unit_score = np.maximum.reduceat(sims[layout.member_rows], layout.unit_starts)
            for i in np.argsort(-unit_score, kind="stable").tolist():
                if i not in chosen:
                    if used + cost[i] > budget:
                        break
                    chosen.add(i)
                    used += cost[i]
                hits.append(layout.kept[units[i][0]].id)
                for d in range(1, self.neighbours + 1):
                    for j in (i - d, i + d):
                        if 0 <= j < len(units) and j not in chosen and used + cost[j] <= budget:
                            chosen.add(j)
                            used += cost[j]
        rows.extend(r for i in chosen for r in units[i])
        rows.sort()
        selected = [layout.kept[r] for r in rows]
        scores = dict(zip(layout.ids, sims.tolist()))
        return AttentionSelection(selected, scores, hits, used, budget)

    def select(self, query: str) -> list[Message]:
        """The selected messages, in conversation order."""
        return self.select_with_scores(query).messages

    def to_openai(self, query: str) -> list[dict]:
        return [m.to_openai() for m in self.select(query)]

    def __repr__(self) -> str:
        return (
            f"AttentionWindow(window_tokens={self.window_tokens}, neighbours={self.neighbours}, "
            f"embedder={getattr(self.embedder, 'name', self.embedder)!r})"
        )


__all__ = ["AttentionSelection", "AttentionWindow"]
