"""A small knowledge graph: the store the Objects column is drawn from.

Nodes are ``WorkspaceObject`` records, edges are undirected and labelled
("contact_of", "about", "governs"...). The one query the working memory needs
is the k-hop neighbourhood of a set of entities (D2 uses 2 hops); the
all-pairs hop matrix behind it is computed once per change of the graph, so
salience over hundreds of turns is a few numpy operations. Sized for the tens
to hundreds of objects a working memory holds, not for a graph database.
``spring_layout`` places a graph's nodes for a drawing, the same way every time.
Taught in ``notebooks/07_objects_salience.ipynb``.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Iterator

import numpy as np

from memorykit._validate import require_int, require_str
from memorykit.workspace.objects import WorkspaceObject


class KnowledgeGraph:
    """Objects and labelled undirected edges, in insertion order."""

    def __init__(self, objects: Iterable[WorkspaceObject] = ()) -> None:
        self._objects: dict[str, WorkspaceObject] = {}
        self._edges: dict[str, dict[str, str]] = {}
        self._hops: np.ndarray | None = None
        for obj in objects:
            self.add(obj)

    # ---------------------------------------------------------------- building
    def add(self, obj: WorkspaceObject) -> WorkspaceObject:
        if not isinstance(obj, WorkspaceObject):
            raise TypeError(f"obj must be a WorkspaceObject, got {obj!r}")
        if obj.id in self._objects:
            raise ValueError(f"object id {obj.id!r} is already in the graph")
        self._objects[obj.id] = obj
        self._edges[obj.id] = {}
        self._hops = None
        return obj

    def replace(self, obj: WorkspaceObject) -> WorkspaceObject:
        """Put a new version of an object in place of the one with its id; its links stay
        (a belief whose strength changed is the same node of the graph)."""
        if not isinstance(obj, WorkspaceObject):
            raise TypeError(f"obj must be a WorkspaceObject, got {obj!r}")
        old = self.get(obj.id)
        if old.kind != obj.kind:
            raise ValueError(f"object {obj.id!r} is a {old.kind}; it cannot be replaced by a {obj.kind}")
        self._objects[obj.id] = obj  # same id, same edges: the hop matrix stays valid
        return obj

    def link(self, a: str, b: str, relation: str = "related") -> None:
        """Connect two objects (both directions)."""
        for name, oid in (("a", a), ("b", b)):
            if oid not in self._objects:
                raise KeyError(f"{name}={oid!r} is not an object in the graph")
        if a == b:
            raise ValueError(f"an object cannot be linked to itself, got {a!r}")
        require_str("relation", relation, non_empty=True)
        self._edges[a][b] = relation
        self._edges[b][a] = relation
        self._hops = None

    # ----------------------------------------------------------------- reading
    def __len__(self) -> int:
        return len(self._objects)

    def __contains__(self, oid: object) -> bool:
        return oid in self._objects

    def __iter__(self) -> Iterator[WorkspaceObject]:
        return iter(self._objects.values())

    def objects(self) -> tuple[WorkspaceObject, ...]:
        return tuple(self._objects.values())

    def ids(self) -> tuple[str, ...]:
        return tuple(self._objects)

    def get(self, oid: str) -> WorkspaceObject:
        try:
            return self._objects[oid]
        except KeyError:
            raise KeyError(f"{oid!r} is not an object in the graph") from None

    def edges(self) -> list[tuple[str, str, str]]:
        """Each edge once, as (a, b, relation) with a before b in insertion order."""
        index = {oid: i for i, oid in enumerate(self._objects)}
        return [
            (a, b, rel)
            for a, nbrs in self._edges.items()
            for b, rel in nbrs.items()
            if index[a] < index[b]
        ]

    def neighbours(self, oid: str) -> dict[str, str]:
        """Direct neighbours and the relation to each."""
        self.get(oid)
        return dict(self._edges[oid])

    def neighbourhood(self, seeds: Iterable[str], max_depth: int = 2) -> dict[str, int]:
        """Every object within ``max_depth`` hops of any seed, with its distance.

        Seeds the graph does not know (an invoice number) are ignored: they
        have no neighbours to offer.
        """
        require_int("max_depth", max_depth, minimum=0)
        dist: dict[str, int] = {}
        queue: deque[str] = deque()
        for s in seeds:
            if s in self._objects and s not in dist:
                dist[s] = 0
                queue.append(s)
        while queue:
            cur = queue.popleft()
            if dist[cur] == max_depth:
                continue
            for nxt in self._edges[cur]:
                if nxt not in dist:
                    dist[nxt] = dist[cur] + 1
                    queue.append(nxt)
        return dist

    def hop_matrix(self) -> np.ndarray:
        """(N, N) shortest-path lengths in hops, ``inf`` when unreachable; cached."""
        if self._hops is None:
            ids = list(self._objects)
            index = {oid: i for i, oid in enumerate(ids)}
            hops = np.full((len(ids), len(ids)), np.inf)
            for i, oid in enumerate(ids):
                for other, d in self.neighbourhood([oid], max_depth=len(ids)).items():
                    hops[i, index[other]] = d
            hops.setflags(write=False)
            self._hops = hops
        return self._hops

    def hops_from(self, seeds: Iterable[str]) -> np.ndarray:
        """(N,) hops from each object to the nearest seed (``inf`` if none is reachable)."""
        index = {oid: i for i, oid in enumerate(self._objects)}
        cols = [index[s] for s in seeds if s in index]
        if not cols:
            return np.full(len(index), np.inf)
        return self.hop_matrix()[:, cols].min(axis=1)

    def __repr__(self) -> str:
        return f"KnowledgeGraph({len(self._objects)} objects, {len(self.edges())} edges)"


def spring_layout(n: int, edges: np.ndarray, *, seed: int = 0, iterations: int = 300,
                  gravity: float = 4.0) -> np.ndarray:
    """Fruchterman-Reingold positions of ``n`` nodes, scaled into [-1, 1]; seeded, deterministic.

    Every pair of nodes repels with k^2 / d, every edge attracts with d^2 / k
    (k = sqrt(1 / n)), and ``gravity * k * distance`` pulls every node to the
    centre (without it a few far-flung nodes squeeze the rest together once
    scaled); each step moves a node at most by a temperature that cools
    linearly to zero. ``edges`` are (E, 2) node indices (``KnowledgeGraph.edges``
    mapped to positions), so a graph is drawn the same way every time.
    """
    require_int("n", n, minimum=1)
    require_int("iterations", iterations, minimum=1)
    edges = np.asarray(edges, dtype=int).reshape(-1, 2)
    if edges.size and (edges.min() < 0 or edges.max() >= n):
        raise ValueError(f"edges must index nodes 0..{n - 1}, got indices {edges.min()}..{edges.max()}")
    rng = np.random.default_rng(seed)
    pos = rng.uniform(-1.0, 1.0, size=(n, 2))
    if n == 1:
        return np.zeros((1, 2))
    adj = np.zeros((n, n))
    adj[edges[:, 0], edges[:, 1]] = 1.0
    adj[edges[:, 1], edges[:, 0]] = 1.0
    k = np.sqrt(1.0 / n)
    temps = np.linspace(0.1, 0.0, iterations, endpoint=False)
    for temp in temps:
        delta = pos[:, None, :] - pos[None, :, :]
        dist = np.maximum(np.sqrt((delta**2).sum(axis=-1)), 0.01)
        # repulsion k^2/d minus attraction d^2/k along edges, both along delta/d
        mag = k * k / dist - adj * dist * dist / k
        np.fill_diagonal(mag, 0.0)
        disp = (delta / dist[:, :, None] * mag[:, :, None]).sum(axis=1) - gravity * k * pos
        length = np.maximum(np.sqrt((disp**2).sum(axis=1)), 0.01)
        pos += disp / length[:, None] * np.minimum(length, temp)[:, None]
    pos -= pos.mean(axis=0)
    scale = np.abs(pos).max()
    return pos / scale if scale > 0 else pos
