"""Retrieval by a score you write: rank every message against the question, pack best first.

``ScoredRetrieval`` is BM25's packing (``memorykit.evaluation.baselines.BM25Retrieval``) with
the ranking left open: a subclass writes ``score(query_terms, message_terms)``, both lists of
terms from the same analyzer (lower-cased, stop words dropped, Snowball stems), and gets a
complete ``ContextPolicy``: the system prompt first, messages scoring above 0 taken best first
while they fit (ties to the newer message), sent in conversation order. Lesson 12's
build-it-yourself exercise is such a subclass; ``TermOverlapRetrieval`` is the library's.

Taught in ``notebooks/12_parameter_tuning.ipynb``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from memorykit.evaluation.baselines import BM25Retrieval, resolve_analyzer
from memorykit.tokens import ChatFormat


class ScoredRetrieval(BM25Retrieval):
    """A retrieval policy whose ranking is ``score``; subclasses write it."""

    def __init__(self, *, analyzer: str | Callable[[str], list[str]] = "stemmed",
                 keep_system: bool = True, chat_format: ChatFormat = ChatFormat(),
                 name: str | None = None) -> None:
        super().__init__(analyzer=resolve_analyzer(analyzer), keep_system=keep_system,
                         chat_format=chat_format)
        self.name = name if name is not None else type(self).__name__

    def score(self, query_terms: list[str], message_terms: list[str]) -> float:
        """How well a message with ``message_terms`` answers a question with ``query_terms``:
        higher is better; a message scoring 0 or less is never sent."""
        raise NotImplementedError

    def scores(self, p: Any, position: int, query: str) -> np.ndarray:
        """``score`` of each of the first ``position`` messages for ``query`` (pinned ones 0)."""
        terms = list(self.analyzer(query))
        out = np.zeros(position, dtype=np.float64)
        if not terms:
            return out
        for i in range(position):
            if p.pinned[i]:
                continue
            value = self.score(list(terms), list(p.docs[i]))
            if isinstance(value, bool) or not isinstance(value, (int, float, np.number)):
                raise TypeError(f"score() must return a number, got {value!r} for message "
                                f"{p.messages[i].id}")
            if not math.isfinite(value):
                raise ValueError(f"score() must return a finite number, got {value!r} for "
                                 f"message {p.messages[i].id}")
            out[i] = value
        return out

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r})"


class TermOverlapRetrieval(ScoredRetrieval):
    """Coordination-level matching: a message scores the number of distinct question terms it
    contains (the oldest ranking of information retrieval, before term weighting)."""

    def score(self, query_terms: list[str], message_terms: list[str]) -> float:
        return float(len(set(query_terms) & set(message_terms)))

