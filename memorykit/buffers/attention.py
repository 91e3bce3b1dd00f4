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


class AttentionWindow:
    """Select the messages most similar to a query within ``window_tokens``.

    Units are messages, except that a tool call and its results form one unit
    scored by its best member. Hits are taken best first (ties: older first);
    each hit unit is added, then its neighbour units nearest first (before,
    then after), each only if it fits. As in the seed, selection stops at the
    first hit that no longer fits. Pinned system messages are included first
    when ``include_pinned`` is True (and they fit): instructions should reach
    the model whatever the query.
    """

    def __init__(
        self,
        buffer: MessageBuffer,
        embedder: Embedder | None = None,
        window_tokens: int = 2000,
        neighbours: int = 1,
        *,
        include_pinned: bool = True,
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
        self._cache: dict[str, np.ndarray] = {}
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

    def scores(self, query: str) -> dict[str, float]:
        """Cosine similarity of every kept message to ``query``."""
        require_str("query", query)
        kept = list(self.buffer)
        if not kept:
            return {}
        matrix = self._vectors(kept)
        q = np.asarray(self.embedder.embed([query]), dtype=np.float32)[0]
        norms = np.linalg.norm(matrix, axis=1) * float(np.linalg.norm(q))
        raw = matrix @ q
        sims = np.divide(raw, norms, out=np.zeros_like(raw), where=norms > 0)
        return {m.id: float(s) for m, s in zip(kept, sims)}

    def select_with_scores(self, query: str) -> AttentionSelection:
        scores = self.scores(query)
        kept = list(self.buffer)
        budget = self.window_tokens
        pinned = [m for m in kept if self.include_pinned and self.buffer.is_pinned(m)]
        pinned_ids = {m.id for m in pinned}
        units = tool_units([m for m in kept if m.id not in pinned_ids])
        chosen: set[int] = set()
        used = 0
        selected: list[Message] = []
        for m in pinned:
            if used + m.billed_tokens <= budget:
                selected.append(m)
                used += m.billed_tokens
        cost = [sum(m.billed_tokens for m in u) for u in units]
        unit_score = np.array([max(scores[m.id] for m in u) for u in units], dtype=float)
        order = np.argsort(-unit_score, kind="stable")
        hits: list[str] = []
        for i in order:
            i = int(i)
            if i not in chosen:
                if used + cost[i] > budget:
                    break
                chosen.add(i)
                used += cost[i]
            hits.append(units[i][0].id)
            for d in range(1, self.neighbours + 1):
                for j in (i - d, i + d):
                    if 0 <= j < len(units) and j not in chosen and used + cost[j] <= budget:
                        chosen.add(j)
                        used += cost[j]
        selected.extend(m for i in chosen for m in units[i])
        position = {m.id: k for k, m in enumerate(kept)}
        selected.sort(key=lambda m: position[m.id])
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
