"""Vector stores: keep vectors with a payload, find the nearest ones to a query.

``VectorStore`` is the small protocol semantic memory and the memory service
use: ``add(ids, vectors, payloads)``, ``search(vector, limit, threshold, where)``,
``delete(where)`` and ``len()``. Two implementations share it:

* ``NumpyVectorStore`` (the default): **exact** cosine similarity, one
  matrix-vector product over every stored vector. No index, no approximation,
  no dependency beyond numpy; fine up to a few hundred thousand vectors.
* ``QdrantVectorStore``: the same calls on a Qdrant collection. With
  ``QdrantClient(":memory:")`` (the default) it runs in-process, which is how
  the tests check it against the numpy store; given a client connected to a
  Qdrant server it works unchanged, for stores that outgrow memory. D4's
  long-term memory runs on Qdrant. ``qdrant-client`` is optional and imported
  only when this class is built.

Conventions both stores keep (and the equivalence test checks):

* a hit's ``score`` is the cosine similarity in [-1, 1];
* ``threshold`` keeps hits with ``score > threshold`` (strictly greater, as in
  D3's "sim(q, d) > epsilon");
* ``where`` is an exact-match filter on payload fields (``{"session_id": "s1"}``);
* ties are broken by insertion order (older first);
* a zero vector (a text with no features under a lexical embedder) matches
  nothing: its similarity is 0 to everything, and Qdrant cannot normalise it,
  so the Qdrant store returns no hits for a zero query and stores zero vectors
  only in its payload bookkeeping (they are never returned with a score above 0);
* ``discard(ids)`` removes the given ids and ignores the ones not stored, so a
  writer whose ``add`` failed half way can clean up and try again;
* both are **thread-safe**: every call holds the store's lock, so several
  sessions may add and search from several threads (a concurrency test runs
  four writer threads against each store and checks every id still points at
  its own payload).

Taught in ``notebooks/10_architectures.ipynb``.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Protocol, runtime_checkable

import numpy as np

from memorykit._locks import without_locks
from memorykit._validate import require_int, require_real, require_str


@dataclass(frozen=True, slots=True)
class Hit:
    """One search result."""

    id: str
    score: float
    """Cosine similarity of the stored vector to the query, in [-1, 1]."""
    payload: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))


@runtime_checkable
class VectorStore(Protocol):
    """Vectors with payloads; nearest-neighbour search by cosine similarity."""

    name: str
    dimension: int

    def add(
        self, ids: Sequence[str], vectors: np.ndarray, payloads: Sequence[Mapping[str, Any]]
    ) -> None: ...

    def search(self, vector: np.ndarray, limit: int, *, threshold: float | None = None,
               where: Mapping[str, Any] | None = None) -> list[Hit]: ...

    def delete(self, where: Mapping[str, Any]) -> int: ...

    def discard(self, ids: Sequence[str]) -> int: ...

    def __len__(self) -> int: ...


def _check_add(
    dimension: int, ids: Any, vectors: Any, payloads: Any
) -> tuple[list[str], np.ndarray, list[dict[str, Any]]]:
    if isinstance(ids, str) or not isinstance(ids, Sequence):
        raise TypeError(f"ids must be a sequence of str, got {ids!r}")
    ids = list(ids)
    for i in ids:
        require_str("ids[]", i, non_empty=True)
    if len(set(ids)) != len(ids):
        raise ValueError(f"ids must be unique, got duplicates in {ids!r}")
    matrix = np.asarray(vectors, dtype=np.float32)
    if matrix.ndim != 2 or matrix.shape != (len(ids), dimension):
        raise ValueError(
            f"vectors must have shape ({len(ids)}, {dimension}), got {matrix.shape}"
        )
    if not np.all(np.isfinite(matrix)):
        raise ValueError("vectors must be finite, got NaN or inf")
    if isinstance(payloads, Mapping) or not isinstance(payloads, Sequence):
        raise TypeError(f"payloads must be a sequence of dicts, got {payloads!r}")
    if len(payloads) != len(ids):
        raise ValueError(f"payloads must have {len(ids)} entries, got {len(payloads)}")
    out = []
    for p in payloads:
        if not isinstance(p, Mapping):
            raise TypeError(f"payloads must hold dicts, got {p!r}")
        out.append(dict(p))
    return ids, matrix, out


def _check_search(dimension: int, vector: Any, limit: Any, threshold: Any, where: Any) -> np.ndarray:
    q = np.asarray(vector, dtype=np.float32)
    if q.shape != (dimension,):
        raise ValueError(f"vector must have shape ({dimension},), got {q.shape}")
    if not np.all(np.isfinite(q)):
        raise ValueError("vector must be finite, got NaN or inf")
    require_int("limit", limit, minimum=1)
    if threshold is not None:
        require_real("threshold", threshold)
    if where is not None and not isinstance(where, Mapping):
        raise TypeError(f"where must be a dict of payload field -> value, got {where!r}")
    return q


def _check_where(where: Any) -> None:
    if where is not None and not isinstance(where, Mapping):
        raise TypeError(f"where must be a dict of payload field -> value, got {where!r}")


def _check_ids(ids: Any) -> list[str]:
    if isinstance(ids, str) or not isinstance(ids, Sequence):
        raise TypeError(f"ids must be a sequence of str, got {ids!r}")
    for i in ids:
        require_str("ids[]", i, non_empty=True)
    return list(ids)


class _LockedStore:
    """What both stores share: checked input, and one lock around every write."""

    dimension: int
    _lock: threading.RLock

    def add(
        self, ids: Sequence[str], vectors: np.ndarray, payloads: Sequence[Mapping[str, Any]]
    ) -> None:
        ids, matrix, payloads = _check_add(self.dimension, ids, vectors, payloads)
        with self._lock:
            self._add(ids, matrix, payloads)

    def _add(self, ids: list[str], matrix: np.ndarray, payloads: list[dict[str, Any]]) -> None:
        raise NotImplementedError


class NumpyVectorStore(_LockedStore):
    """Exact cosine search over an in-memory matrix (the default store).

    Rows are L2-normalised when added, so a search is one matrix-vector
    product; the matrix grows by doubling, so adding n vectors costs O(n)
    amortised. ``where`` filters compare payload values with ``==``. Every
    call holds one lock (``add`` grows the matrix and the id index together,
    which two threads must not interleave).
    """

    def __init__(self, dimension: int) -> None:
        self.dimension = require_int("dimension", dimension, minimum=1)
        self.name = f"numpy-exact-cosine({self.dimension})"
        self._lock = threading.RLock()
        self._reset()

    def _reset(self) -> None:
        self._matrix = np.zeros((16, self.dimension), dtype=np.float32)
        self._ids: list[str] = []
        self._payloads: list[dict[str, Any]] = []
        self._alive = np.zeros(16, dtype=bool)
        self._index: dict[str, int] = {}

    def __len__(self) -> int:
        return len(self._index)

    def _add(self, ids: list[str], matrix: np.ndarray, payloads: list[dict[str, Any]]) -> None:
        clash = [i for i in ids if i in self._index]
        if clash:
            raise ValueError(f"ids already stored: {clash!r}")
        n = len(self._ids)
        need = n + len(ids)
        if need > self._matrix.shape[0]:
            size = max(need, 2 * self._matrix.shape[0])
            grown = np.zeros((size, self.dimension), dtype=np.float32)
            grown[:n] = self._matrix[:n]
            alive = np.zeros(size, dtype=bool)
            alive[:n] = self._alive[:n]
            self._matrix, self._alive = grown, alive
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        np.divide(matrix, norms, out=matrix, where=norms > 0)
        self._matrix[n:need] = matrix
        self._alive[n:need] = True
        for k, (i, p) in enumerate(zip(ids, payloads)):
            self._index[i] = n + k
            self._ids.append(i)
            self._payloads.append(p)

    def _mask(self, where: Mapping[str, Any] | None) -> np.ndarray:
        n = len(self._ids)
        mask = self._alive[:n].copy()
        if where:
            for row in np.flatnonzero(mask):
                p = self._payloads[row]
                if any(p.get(k, _MISSING) != v for k, v in where.items()):
                    mask[row] = False
        return mask

    def search(self, vector: np.ndarray, limit: int, *, threshold: float | None = None,
               where: Mapping[str, Any] | None = None) -> list[Hit]:
        q = _check_search(self.dimension, vector, limit, threshold, where)
        with self._lock:
            return self._search(q, limit, threshold, where)

    def _search(self, q: np.ndarray, limit: int, threshold: float | None,
                where: Mapping[str, Any] | None) -> list[Hit]:
        n = len(self._ids)
        if n == 0:
            return []
        norm = float(np.linalg.norm(q))
        scores = self._matrix[:n] @ (q / norm if norm > 0 else q)
        scores = scores.astype(np.float64)
        mask = self._mask(where)
        if threshold is not None:
            mask &= scores > threshold
        rows = np.flatnonzero(mask)
        if rows.size == 0:
            return []
        order = rows[np.argsort(-scores[rows], kind="stable")][:limit]
        return [
            Hit(self._ids[r], float(scores[r]), MappingProxyType(self._payloads[r])) for r in order
        ]

    def delete(self, where: Mapping[str, Any]) -> int:
        """Remove every vector whose payload matches ``where``; returns how many."""
        if not isinstance(where, Mapping) or not where:
            raise ValueError(f"where must be a non-empty dict (delete everything with clear()), "
                             f"got {where!r}")
        with self._lock:
            rows = np.flatnonzero(self._mask(where))
            for r in rows:
                self._alive[r] = False
                self._index.pop(self._ids[r], None)
            return int(rows.size)

    def discard(self, ids: Sequence[str]) -> int:
        """Remove the vectors with these ids (ids not stored are ignored); returns how many."""
        ids = _check_ids(ids)
        with self._lock:
            removed = 0
            for i in ids:
                row = self._index.pop(i, None)
                if row is not None:
                    self._alive[row] = False
                    removed += 1
            return removed

    def clear(self) -> None:
        with self._lock:
            self._reset()

    def set_payload(self, ids: Sequence[str], fields: Mapping[str, Any]) -> int:
        """Add ``fields`` to the payloads of these ids (ids not stored are ignored); returns how
        many (the long-term store dates a superseded entry so)."""
        ids = _check_ids(ids)
        with self._lock:
            rows = [self._index[i] for i in ids if i in self._index]
            for r in rows:
                self._payloads[r].update(fields)
            return len(rows)

    def payload(self, id: str) -> Mapping[str, Any]:
        with self._lock:
            row = self._index.get(id)
            if row is None:
                raise KeyError(f"id {id!r} is not stored")
            return MappingProxyType(self._payloads[row])

    def payloads(self, where: Mapping[str, Any] | None = None) -> list[Mapping[str, Any]]:
        """Every stored payload (matching ``where``), oldest first: what the store really holds."""
        _check_where(where)
        with self._lock:
            return [MappingProxyType(self._payloads[r]) for r in np.flatnonzero(self._mask(where))]

    def __getstate__(self) -> dict[str, Any]:
        state = without_locks(self.__dict__)
        n = len(self._ids)  # the rows in use, not the spare capacity
        state["_matrix"], state["_alive"] = self._matrix[:n].copy(), self._alive[:n].copy()
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.RLock()
        # a state from a file must be a store this class could have built: rows, ids, payloads
        # and liveness agree, the index points at live rows of its own ids, vectors are finite
        m, alive, ids, index = self._matrix, self._alive, self._ids, self._index
        n = len(ids) if type(ids) is list else -1
        if not (isinstance(m, np.ndarray) and m.dtype == np.float32 and m.ndim == 2
                and m.shape == (n, self.dimension) and np.isfinite(m).all()
                and isinstance(alive, np.ndarray) and alive.dtype == bool and alive.shape == (n,)
                and all(type(i) is str for i in ids) and type(self._payloads) is list
                and len(self._payloads) == n and all(type(p) is dict for p in self._payloads)
                and type(index) is dict and len(index) == int(alive.sum())
                and all(type(r) is int and 0 <= r < n and ids[r] == i and alive[r]
                        for i, r in index.items())):
            raise ValueError("NumpyVectorStore state is inconsistent: its _matrix, _alive, _ids, "
                             "_payloads and _index must describe the same rows")

    def __repr__(self) -> str:
        return f"NumpyVectorStore(dimension={self.dimension}, vectors={len(self)})"


_MISSING = object()
_NAMESPACE = uuid.UUID("6f1d9a52-3c4e-4b7a-9d0e-2a6c1f4b8e11")


def _point_id(id: str) -> str:
    """Qdrant point ids are UUIDs: a stable one per string id."""
    return str(uuid.uuid5(_NAMESPACE, id))


class QdrantVectorStore(_LockedStore):
    """The same store on Qdrant (optional: ``pip install qdrant-client``).

    ``client`` defaults to ``QdrantClient(":memory:")`` (in-process, for tests
    and notebooks); pass a client connected to a server for persistent or large
    stores. The collection is created with cosine distance if it does not
    exist. Qdrant point ids must be integers or UUIDs, so a string id is mapped
    to a UUID5 and kept in the payload under ``_id``. Every call holds the
    store's lock (the insertion counter that breaks ties must not be shared
    by two writers).
    """

    def __init__(
        self, dimension: int, *, client: Any = None, collection: str = "memorykit"
    ) -> None:
        self.dimension = require_int("dimension", dimension, minimum=1)
        self.collection = require_str("collection", collection, non_empty=True)
        try:
            from qdrant_client import QdrantClient, models
        except ImportError as exc:  # pragma: no cover - depends on the environment
            raise ImportError(
                "QdrantVectorStore needs qdrant-client: pip install qdrant-client"
            ) from exc
        self._models = models
        self._lock = threading.RLock()
        self.client = client if client is not None else QdrantClient(":memory:")
        if not self.client.collection_exists(self.collection):
            self.client.create_collection(
                self.collection,
                vectors_config=models.VectorParams(
                    size=self.dimension, distance=models.Distance.COSINE
                ),
            )
        self.name = f"qdrant-cosine({self.dimension}, {self.collection!r})"
        self._order = self.client.count(self.collection).count

    def __len__(self) -> int:
        return self.client.count(self.collection, exact=True).count

    def __getstate__(self) -> dict[str, Any]:
        # the points live in Qdrant, behind the client: a state holds the settings and the
        # insertion counter, and names the client as a collaborator to pass again
        return {k: v for k, v in without_locks(self.__dict__).items() if k != "_models"}

    def __setstate__(self, state: dict[str, Any]) -> None:
        from qdrant_client import models

        self.__dict__.update(state)
        self._models = models
        self._lock = threading.RLock()
        if not self.client.collection_exists(self.collection):
            raise ValueError(f"the Qdrant client passed again has no collection "
                             f"{self.collection!r}: pass the client the store was saved from")

    def _filter(self, where: Mapping[str, Any] | None) -> Any:
        if not where:
            return None
        m = self._models
        return m.Filter(
            must=[m.FieldCondition(key=k, match=m.MatchValue(value=v)) for k, v in where.items()]
        )

    def _add(self, ids: list[str], matrix: np.ndarray, payloads: list[dict[str, Any]]) -> None:
        existing = self.client.retrieve(self.collection, [_point_id(i) for i in ids])
        if existing:
            raise ValueError(f"ids already stored: {[p.payload['_id'] for p in existing]!r}")
        points = []
        for i, v, p in zip(ids, matrix, payloads):
            self._order += 1
            if not np.any(v):
                # Qdrant cannot normalise a zero vector; store a tiny stand-in that scores
                # ~0 against everything, as the numpy store's zero row does.
                v = np.full(self.dimension, 1e-12, dtype=np.float32)
            points.append(
                self._models.PointStruct(
                    id=_point_id(i),
                    vector=v.tolist(),
                    payload={**p, "_id": i, "_order": self._order},
                )
            )
        self.client.upsert(self.collection, points=points, wait=True)

    def search(self, vector: np.ndarray, limit: int, *, threshold: float | None = None,
               where: Mapping[str, Any] | None = None) -> list[Hit]:
        q = _check_search(self.dimension, vector, limit, threshold, where)
        if not np.any(q):
            return []
        # Ask for a few extra points: ties are re-ordered by insertion below.
        with self._lock:
            response = self.client.query_points(
                self.collection,
                query=q.tolist(),
                limit=limit + 8,
                query_filter=self._filter(where),
                score_threshold=threshold,
                with_payload=True,
            )
        hits = []
        for point in response.points:
            score = float(point.score)
            if threshold is not None and not score > threshold:
                continue  # Qdrant's score_threshold keeps equal scores; ours is strict
            payload = dict(point.payload or {})
            hid = payload.pop("_id")
            order = payload.pop("_order", 0)
            hits.append((-round(score, 6), order, Hit(hid, score, MappingProxyType(payload))))
        hits.sort(key=lambda t: (t[0], t[1]))
        return [h for _, _, h in hits[:limit]]

    def delete(self, where: Mapping[str, Any]) -> int:
        if not isinstance(where, Mapping) or not where:
            raise ValueError(f"where must be a non-empty dict, got {where!r}")
        flt = self._filter(where)
        with self._lock:
            n = self.client.count(self.collection, count_filter=flt, exact=True).count
            self.client.delete(
                self.collection, points_selector=self._models.FilterSelector(filter=flt), wait=True
            )
        return n

    def discard(self, ids: Sequence[str]) -> int:
        """Remove the points with these ids (ids not stored are ignored); returns how many."""
        ids = _check_ids(ids)
        points = [_point_id(i) for i in ids]
        with self._lock:
            n = len(self.client.retrieve(self.collection, points)) if points else 0
            if n:
                self.client.delete(
                    self.collection, points_selector=self._models.PointIdsList(points=points),
                    wait=True,
                )
        return n

    def set_payload(self, ids: Sequence[str], fields: Mapping[str, Any]) -> int:
        """Add ``fields`` to the payloads of these ids (ids not stored are ignored); returns how many."""
        points = [_point_id(i) for i in _check_ids(ids)]
        with self._lock:
            found = [p.id for p in self.client.retrieve(self.collection, points)] if points else []
            if found:
                self.client.set_payload(self.collection, payload=dict(fields), points=found,
                                        wait=True)
        return len(found)

    def payloads(self, where: Mapping[str, Any] | None = None) -> list[Mapping[str, Any]]:
        """Every stored payload (matching ``where``), oldest first: what the store really holds."""
        _check_where(where)
        out: list[tuple[int, dict[str, Any]]] = []
        offset = None
        with self._lock:
            while True:
                points, offset = self.client.scroll(
                    self.collection, scroll_filter=self._filter(where), limit=256,
                    offset=offset, with_payload=True, with_vectors=False,
                )
                for point in points:
                    payload = dict(point.payload or {})
                    order = payload.pop("_order", 0)
                    payload.pop("_id", None)
                    out.append((order, payload))
                if offset is None:
                    break
        out.sort(key=lambda t: t[0])
        return [MappingProxyType(p) for _, p in out]

    def clear(self) -> None:
        """Drop every point: the collection is deleted and created again."""
        with self._lock:
            self.client.delete_collection(self.collection)
            self.client.create_collection(
                self.collection,
                vectors_config=self._models.VectorParams(
                    size=self.dimension, distance=self._models.Distance.COSINE
                ),
            )

    def __repr__(self) -> str:
        return f"QdrantVectorStore(dimension={self.dimension}, collection={self.collection!r})"


def qdrant_available() -> bool:
    """True when ``qdrant-client`` can be imported (the Qdrant store is usable)."""
    try:
        import qdrant_client  # noqa: F401
    except ImportError:
        return False
    return True


__all__ = ["Hit", "NumpyVectorStore", "QdrantVectorStore", "VectorStore", "qdrant_available"]
