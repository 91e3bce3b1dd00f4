"""Deterministic faulty doubles for long-term memory: an embedder and stores that fail on cue.

Each double wraps a real component and fails on the calls its ``schedule``
names (1-based call numbers of the method the fault hits), then behaves like
the component it wraps; ``heal()`` stops every further fault. ``injected``
counts the faults actually raised or returned, so a test can report how many
it tried. They ship with the library (like ``memorykit.classroom.doubles.openai_server``) so a lab
can break its own memory service on purpose and watch nothing get lost.

Fault kinds:

* embedder (``FaultyEmbedder``): ``"raise"`` (an error), ``"wrong-dimension"``,
  ``"nan"`` / ``"inf"`` (non-finite rows), ``"short-batch"`` / ``"long-batch"``
  (one row too few or too many), ``"not-an-array"`` (returns None);
* store (``FaultyStore``, around any ``VectorStore``): ``"add-raises"`` (refuses
  before writing), ``"add-partial"`` (writes the first half, then raises: a
  store dying mid-batch), ``"add-lost-reply"`` (writes everything, then raises:
  the confirmation was lost), ``"search-raises"``, ``"discard-raises"`` (a
  scheduled add writes half and raises, and then every clean-up before a retry
  fails until ``heal()``: the retries keep failing, nothing may be lost);
* Qdrant client (``FaultyQdrantClient``, around a real ``QdrantClient``, local
  mode included): ``"upsert-partial"`` (upserts the first half of the points,
  then raises ``ConnectionError``), ``"upsert-raises"``, ``"retrieve-raises"``.

Used by ``tests/test_longterm_faults.py`` (the fault matrix); the service they
break is taught in ``notebooks/09_long_term_memory.ipynb``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from memorykit.embeddings import Embedder
from memorykit.longterm.vectorstore import Hit, VectorStore

EMBEDDER_FAULTS = ("raise", "wrong-dimension", "nan", "inf", "short-batch", "long-batch",
                   "not-an-array")
STORE_FAULTS = ("add-raises", "add-partial", "add-lost-reply", "search-raises",
                "discard-raises")
QDRANT_FAULTS = ("upsert-partial", "upsert-raises", "retrieve-raises")


class InjectedFault(ConnectionError):
    """The error a faulty double raises (a ``ConnectionError``, as a dead server gives)."""


class _Schedule:
    """Which calls fail: 1-based call numbers, until ``heal()``."""

    def __init__(self, fault: str, kinds: Sequence[str], schedule: Iterable[int]) -> None:
        if fault not in kinds:
            raise ValueError(f"fault must be one of {list(kinds)}, got {fault!r}")
        calls = sorted(set(schedule))
        if not calls or any(type(c) is not int or c < 1 for c in calls):
            raise ValueError(f"schedule must name call numbers >= 1, got {schedule!r}")
        self.fault = fault
        self.schedule = frozenset(calls)
        self.calls = 0
        self.injected = 0
        self.healed = False

    def fires(self) -> bool:
        """Count one call; True when this call must fail."""
        self.calls += 1
        hit = not self.healed and self.calls in self.schedule
        self.injected += hit
        return hit

    def heal(self) -> None:
        self.healed = True


class FaultyEmbedder(_Schedule):
    """An embedder that returns bad vectors or raises on the scheduled ``embed`` calls."""

    def __init__(self, embedder: Embedder, fault: str, schedule: Iterable[int]) -> None:
        super().__init__(fault, EMBEDDER_FAULTS, schedule)
        self.embedder = embedder
        self.name = f"faulty({embedder.name}, {fault})"
        self.dimension = embedder.dimension

    def embed(self, texts: Sequence[str]) -> Any:
        vectors = np.asarray(self.embedder.embed(texts), dtype=np.float32)
        if not self.fires():
            return vectors
        fault = self.fault
        if fault == "raise":
            raise InjectedFault("embedder unreachable (injected)")
        if fault == "wrong-dimension":
            return np.zeros((len(texts), self.dimension + 1), dtype=np.float32)
        if fault in ("nan", "inf"):
            bad = vectors.copy()
            bad[len(bad) // 2] = np.nan if fault == "nan" else np.inf
            return bad
        if fault == "short-batch":
            return vectors[:-1]
        if fault == "long-batch":
            return np.vstack([vectors, vectors[:1]])
        return None  # "not-an-array"


class FaultyStore(_Schedule):
    """A ``VectorStore`` around another that fails on the scheduled calls of one method."""

    def __init__(self, store: VectorStore, fault: str, schedule: Iterable[int]) -> None:
        super().__init__(fault, STORE_FAULTS, schedule)
        self.store = store
        self.name = f"faulty({store.name}, {fault})"
        self.dimension = store.dimension

    def add(self, ids: Sequence[str], vectors: np.ndarray,
            payloads: Sequence[Mapping[str, Any]]) -> None:
        fails = self.fault in ("add-raises", "add-partial", "add-lost-reply", "discard-raises")
        if not (fails and self.fires()):
            self.store.add(ids, vectors, payloads)
            return
        if self.fault in ("add-partial", "discard-raises"):
            half = len(ids) // 2
            if half:
                self.store.add(ids[:half], vectors[:half], payloads[:half])
        elif self.fault == "add-lost-reply":
            self.store.add(ids, vectors, payloads)
        raise InjectedFault(f"store failed during add ({self.fault}, injected)")

    def search(self, vector: np.ndarray, limit: int, *, threshold: float | None = None,
               where: Mapping[str, Any] | None = None) -> list[Hit]:
        if self.fault == "search-raises" and self.fires():
            raise InjectedFault("store failed during search (injected)")
        return self.store.search(vector, limit, threshold=threshold, where=where)

    def discard(self, ids: Sequence[str]) -> int:
        if self.fault == "discard-raises" and not self.healed:
            self.injected += 1
            raise InjectedFault("store failed during discard (injected)")
        return self.store.discard(ids)

    def delete(self, where: Mapping[str, Any]) -> int:
        return self.store.delete(where)

    def payloads(self, where: Mapping[str, Any] | None = None) -> list[Mapping[str, Any]]:
        return self.store.payloads(where)  # type: ignore[attr-defined, no-any-return]

    def __len__(self) -> int:
        return len(self.store)


class FaultyQdrantClient(_Schedule):
    """A ``QdrantClient`` stand-in that forwards to a real one and fails on cue."""

    def __init__(self, client: Any, fault: str, schedule: Iterable[int]) -> None:
        super().__init__(fault, QDRANT_FAULTS, schedule)
        self.client = client

    def __getattr__(self, name: str) -> Any:
        return getattr(self.client, name)

    def upsert(self, collection_name: str, points: Sequence[Any], **kwargs: Any) -> Any:
        if not self.fault.startswith("upsert") or not self.fires():
            return self.client.upsert(collection_name, points=points, **kwargs)
        if self.fault == "upsert-partial" and len(points) > 1:
            self.client.upsert(collection_name, points=list(points)[: len(points) // 2], **kwargs)
        raise InjectedFault(f"qdrant connection lost during upsert ({self.fault}, injected)")

    def retrieve(self, collection_name: str, ids: Sequence[Any], **kwargs: Any) -> Any:
        if self.fault == "retrieve-raises" and self.fires():
            raise InjectedFault("qdrant connection lost during retrieve (injected)")
        return self.client.retrieve(collection_name, ids, **kwargs)


__all__ = ["EMBEDDER_FAULTS", "QDRANT_FAULTS", "STORE_FAULTS", "FaultyEmbedder",
           "FaultyQdrantClient", "FaultyStore", "InjectedFault"]
